/*
 * ap_error_testing: result codes by name, for test messages. Only tests
 * include this header; no product code calls these.
 */
#ifndef AP_ERROR_TESTING_H
#define AP_ERROR_TESTING_H

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Short constant name of a status code ("EINVAL", ...); "UNKNOWN" otherwise.
 * For tests that compare codes by name; the policy reports the message. */
const char *ap_result_name(int code);

#ifdef __cplusplus
}
#endif

#endif /* AP_ERROR_TESTING_H */
