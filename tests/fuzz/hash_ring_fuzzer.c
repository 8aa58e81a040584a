/*
 * Fuzz target: the consistent-hash ring (ap_hash_ring). Members, weights,
 * vnodes and a usable mask come from the input. Invariants: shares sum to
 * 1; every lookup names a member; a usable lookup names a usable member,
 * equals the plain owner when that owner is usable, fails exactly when no
 * member is usable, and stays within its step bound.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/affinity/ap_hash_ring.h"
#include "tests/fuzz/fuzz_input.h"

enum { kMaxMembers = 24 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size, 0};
  const size_t n = 1 + fuzz_u8(&in) % kMaxMembers;
  const uint32_t vnodes = 1 + fuzz_u8(&in) % 32;
  char names[kMaxMembers][16];
  const char *pointers[kMaxMembers];
  double weights[kMaxMembers];
  uint8_t usable[kMaxMembers];
  int any_usable = 0;
  for (size_t i = 0; i < n; ++i) {
    snprintf(names[i], sizeof names[i], "m%zu", i);
    pointers[i] = names[i];
    weights[i] = fuzz_weight(&in) / 2048.0; /* up to 32; some below one point */
    usable[i] = fuzz_u8(&in) % 3 != 0;
    any_usable |= usable[i];
  }
  ap_hash_ring *ring = NULL;
  int rc = ap_hash_ring_create(pointers, weights, n, vnodes, &ring, NULL);
  if (rc != AP_OK) {
    FUZZ_CHECK(rc == AP_ERANGE, "create rc %d", rc);
    return 0;
  }
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += ap_hash_ring_share(ring, i);
  FUZZ_CHECK(fabs(total - 1.0) < 1e-9, "shares sum to %.17g", total);
  while (!fuzz_done(&in)) {
    const uint64_t h = fuzz_u64(&in);
    const size_t owner = ap_hash_ring_lookup(ring, h);
    FUZZ_CHECK(owner < n, "owner %zu", owner);
    size_t m = n, steps = 0;
    rc = ap_hash_ring_lookup_usable_steps(ring, h, usable, &m, &steps, NULL);
    FUZZ_CHECK(steps <= AP_HASH_RING_MAX_WALK + n, "steps %zu", steps);
    if (!any_usable) {
      FUZZ_CHECK(rc == AP_EUNAVAIL, "rc %d with nothing usable", rc);
      continue;
    }
    FUZZ_CHECK(rc == AP_OK && m < n && usable[m], "rc %d member %zu", rc, m);
    if (usable[owner]) FUZZ_CHECK(m == owner, "usable owner %zu skipped for %zu", owner, m);
  }
  ap_hash_ring_destroy(ring);
  return 0;
}
