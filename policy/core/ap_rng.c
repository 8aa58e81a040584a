/* ap_rng: xoshiro256** seeded from splitmix64. */
#include "policy/core/ap_rng.h"
#include "policy/core/ap_rng_testing.h"

#include <stddef.h>

#include "policy/core/ap_hash.h"
#include "policy/core/ap_rng_internal.h"

void ap_rng_seed(ap_rng *rng, uint64_t seed) {
  if (rng == NULL) return;
  uint64_t state = seed;
  for (int i = 0; i < 4; ++i) {
    state += 0x9E3779B97F4A7C15ull; /* splitmix64's increment */
    rng->s[i] = ap_mix64(state);
  }
  /* ap_mix64 is a bijection of distinct states, so at most one word is 0:
   * the forbidden all-zero state cannot occur. */
}

uint64_t ap_rng_next(ap_rng *rng) {
  if (rng == NULL) return 0;
  return ap_rng_step(rng);
}

double ap_rng_uniform(ap_rng *rng) {
  if (rng == NULL) return 0.0;
  return ap_rng_step_uniform(rng);
}

uint64_t ap_rng_below(ap_rng *rng, uint64_t bound) {
  if (bound == 0 || rng == NULL) return 0;
  /* Reject the lowest (2^64 mod bound) values so every residue is equally
   * likely; fewer than half the draws are rejected in the worst case. */
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t x = ap_rng_next(rng);
    if (x >= threshold) return x % bound;
  }
}
