/*
 * ap_rng: a small, fast pseudo-random generator (xoshiro256** seeded by
 * splitmix64). Not thread-safe by design: each thread owns its own state
 * (pickers keep one per thread), so picks need no locks.
 */
#ifndef AP_RNG_H
#define AP_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ap_rng {
  uint64_t s[4];
} ap_rng;

/* Seeds `rng` deterministically from `seed` (any value, 0 included).
 * A NULL rng is ignored. */
void ap_rng_seed(ap_rng *rng, uint64_t seed);

/* Next 64 random bits. */
uint64_t ap_rng_next(ap_rng *rng);

/* Uniform integer in [0, bound) without modulo bias; returns 0 when
 * bound == 0. */
uint64_t ap_rng_below(ap_rng *rng, uint64_t bound);

#ifdef __cplusplus
}
#endif

#endif /* AP_RNG_H */
