/*
 * ap_rng_testing: the generator's uniform doubles, for tests of its
 * distribution. Only tests include this header; no product code calls these.
 */
#ifndef AP_RNG_TESTING_H
#define AP_RNG_TESTING_H

#include "policy/core/ap_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Uniform double in [0, 1) with 53 random bits: the top 53 bits of the next
 * step. The pick draws the same doubles through the inlined step in
 * ap_rng_internal.h (ap_pick1 scales one by the table's total weight). */
double ap_rng_uniform(ap_rng *rng);

#ifdef __cplusplus
}
#endif

#endif /* AP_RNG_TESTING_H */
