/*
 * ap_rng_internal: the generator's step as static inline functions, so that
 * the pick hot path (ap_pick.c) draws without a call per number. ap_rng.c
 * wraps the same functions for the public API: one implementation.
 */
#ifndef AP_RNG_INTERNAL_H
#define AP_RNG_INTERNAL_H

#include <stdint.h>

#include "policy/core/ap_rng.h"

static inline uint64_t ap_rng_rotl64(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

/* xoshiro256** step; rng must not be NULL. */
static inline uint64_t ap_rng_step(ap_rng *rng) {
  uint64_t *s = rng->s;
  const uint64_t result = ap_rng_rotl64(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = ap_rng_rotl64(s[3], 45);
  return result;
}

/* Uniform double in [0, 1) from the top 53 bits; rng must not be NULL. */
static inline double ap_rng_step_uniform(ap_rng *rng) {
  return (double)(ap_rng_step(rng) >> 11) * 0x1.0p-53;
}

#endif /* AP_RNG_INTERNAL_H */
