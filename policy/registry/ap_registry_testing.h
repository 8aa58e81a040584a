/*
 * ap_registry_testing: connectivity states by name, for test messages. Only
 * tests include this header; no product code calls these.
 */
#ifndef AP_REGISTRY_TESTING_H
#define AP_REGISTRY_TESTING_H

#include "policy/registry/ap_registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lower-case name of a state ("idle", "connecting", "ready",
 * "transient_failure", "shutdown"); "unknown" otherwise. For test
 * messages; the status service sends the enum itself. */
const char *ap_connectivity_name(int state);

#ifdef __cplusplus
}
#endif

#endif /* AP_REGISTRY_TESTING_H */
