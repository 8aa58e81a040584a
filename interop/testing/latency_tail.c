/* latency_tail: a seeded share of slow answers (latency_tail.h). */
#include "interop/testing/latency_tail.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct latency_tail {
  uint64_t threshold; /* share x 2^64 (saturated); 0: no tail */
  long delay_ms;
  uint64_t seed;
  _Atomic uint64_t calls; /* TestService calls drawn so far */
  _Atomic uint64_t tails; /* of them, tail calls */
};

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* share x 2^64, saturated: a draw below it is a tail call. */
static uint64_t threshold_of(double share) {
  if (!(share > 0)) return 0;
  if (share >= 1) return UINT64_MAX;
  return (uint64_t)(share * 18446744073709551616.0);
}

latency_tail *io_latency_tail_create(double share, long delay_ms, uint64_t seed) {
  if (!(share >= 0 && share <= 1)) {
    fprintf(stderr, "flag --tail-share: must be in [0, 1], got %g\n", share);
    return NULL;
  }
  if (delay_ms < 0 || delay_ms > LATENCY_TAIL_MAX_MS) {
    fprintf(stderr, "flag --tail-ms: must be in [0, %ld], got %ld\n", LATENCY_TAIL_MAX_MS,
            delay_ms);
    return NULL;
  }
  latency_tail *t = malloc(sizeof(*t));
  if (t == NULL) return NULL;
  t->threshold = delay_ms > 0 ? threshold_of(share) : 0;
  t->delay_ms = delay_ms;
  t->seed = seed;
  atomic_init(&t->calls, 0);
  atomic_init(&t->tails, 0);
  return t;
}

void io_latency_tail_destroy(latency_tail *t) { free(t); }

int io_latency_tail_is_tail(uint64_t seed, uint64_t k, double share) {
  const uint64_t threshold = threshold_of(share);
  return threshold == UINT64_MAX || splitmix64(seed + k) < threshold;
}

long io_latency_tail_next_ms(latency_tail *t) {
  if (t == NULL || t->threshold == 0) return 0;
  const uint64_t k = atomic_fetch_add_explicit(&t->calls, 1, memory_order_relaxed);
  if (t->threshold != UINT64_MAX && splitmix64(t->seed + k) >= t->threshold) return 0;
  atomic_fetch_add_explicit(&t->tails, 1, memory_order_relaxed);
  return t->delay_ms;
}

uint64_t io_latency_tail_count(const latency_tail *t) {
  return t ? atomic_load_explicit(&t->tails, memory_order_relaxed) : 0;
}
