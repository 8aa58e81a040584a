/*
 * ap_stable_testing: what tests read of a plan's construction. Only tests
 * include this header; no product code calls these.
 */
#ifndef AP_STABLE_TESTING_H
#define AP_STABLE_TESTING_H

#include "policy/core/stable/ap_stable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Scaling rounds the plan took (diagnostics and benchmarks). */
uint32_t ap_stable_plan_rounds(const ap_stable_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* AP_STABLE_TESTING_H */
