/*
 * ap_load_testing: what tests read of an endpoint's load. Only tests include
 * this header; no product code calls these.
 */
#ifndef AP_LOAD_TESTING_H
#define AP_LOAD_TESTING_H

#include "policy/core/pick/ap_load.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Calls ended so far (0 for NULL): ap_load_call_end() and
 * ap_load_call_finish(); meaningless after ap_load_release(). */
uint64_t ap_load_calls_ended(const ap_load_state *s);

/* The cost of one endpoint under `metric` at now_ns:
 *   outstanding: outstanding
 *   peakEwma:    latency_ns * (outstanding + 1)
 *   orca:        (outstanding + 1) / (1 - min(u, 0.95))
 * Writes *cost and returns the metric actually used: `metric`, or
 * AP_PICK_OUTSTANDING when the endpoint has no usable sample (see the
 * fallback above). Errors: AP_EINVAL (s or cost NULL, unknown metric;
 * *cost, when cost is not NULL, is set to 0). */
int ap_load_cost(const ap_load_state *s, ap_pick_metric metric,
                 int64_t now_ns, double *cost);

#ifdef __cplusplus
}
#endif

#endif /* AP_LOAD_TESTING_H */
