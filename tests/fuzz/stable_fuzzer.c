/*
 * Fuzz target: the stable plan (ap_stable). Endpoint and client keys (with
 * duplicates now and then), weights over 2^-16..2^16 and min_aperture come
 * from the input. Invariants: duplicate keys are rejected with AP_EINVAL
 * and nothing else fails; every row is sorted, distinct, in range and holds
 * at least min(min_aperture, N) members; shares are finite, > 0 and sum to
 * 1 per row; every endpoint has a client; the reported balance is finite
 * and at least 1 (some endpoint carries at least its target).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "policy/core/stable/ap_stable.h"
#include "tests/fuzz/fuzz_input.h"

enum { kMaxEndpoints = 64, kMaxClients = 48 };

static int has_duplicate(const uint64_t *keys, size_t count) {
  for (size_t a = 0; a < count; ++a)
    for (size_t b = a + 1; b < count; ++b)
      if (keys[a] == keys[b]) return 1;
  return 0;
}

/* Keys from a small alphabet collide now and then; others rarely. */
static uint64_t fuzz_key(fuzz_input *in) {
  const uint8_t kind = fuzz_u8(in);
  return kind < 32 ? (uint64_t)(kind % 8) : fuzz_u64(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size, 0};
  const size_t n = 1 + fuzz_u8(&in) % kMaxEndpoints;
  const size_t c = 1 + fuzz_u8(&in) % kMaxClients;
  const uint32_t min_aperture = 1 + fuzz_u8(&in) % 40;
  const int weighted = fuzz_u8(&in) % 2;
  uint64_t endpoints[kMaxEndpoints], clients[kMaxClients];
  double weights[kMaxEndpoints];
  for (size_t s = 0; s < n; ++s) {
    endpoints[s] = fuzz_key(&in);
    weights[s] = fuzz_weight(&in);
  }
  for (size_t i = 0; i < c; ++i) clients[i] = fuzz_key(&in);
  ap_stable_plan *plan = NULL;
  ap_error err;
  const int rc = ap_stable_plan_create(endpoints, weighted ? weights : NULL, n,
                                       clients, c, min_aperture, &plan, &err);
  if (has_duplicate(endpoints, n) || has_duplicate(clients, c)) {
    FUZZ_CHECK(rc == AP_EINVAL && plan == NULL, "duplicates gave rc %d", rc);
    return 0;
  }
  FUZZ_CHECK(rc == AP_OK, "rc %d: %s", rc, err.message);
  uint8_t covered[kMaxEndpoints] = {0};
  const size_t a = min_aperture < n ? min_aperture : n;
  for (size_t i = 0; i < c; ++i) {
    const size_t count = ap_stable_plan_row_size(plan, i);
    const uint32_t *row = ap_stable_plan_row_endpoints(plan, i);
    const double *share = ap_stable_plan_row_shares(plan, i);
    FUZZ_CHECK(count >= a && count <= n, "client %zu has %zu members", i, count);
    double sum = 0;
    for (size_t k = 0; k < count; ++k) {
      FUZZ_CHECK(row[k] < n, "endpoint %u", row[k]);
      FUZZ_CHECK(k == 0 || row[k - 1] < row[k], "row %zu not sorted", i);
      FUZZ_CHECK(isfinite(share[k]) && share[k] > 0, "share %.17g", share[k]);
      covered[row[k]] = 1;
      sum += share[k];
    }
    FUZZ_CHECK(fabs(sum - 1.0) < 1e-9, "row %zu sums to %.17g", i, sum);
  }
  for (size_t s = 0; s < n; ++s) FUZZ_CHECK(covered[s], "endpoint %zu has no client", s);
  const double load = ap_stable_plan_load_max(plan);
  FUZZ_CHECK(isfinite(load) && load >= 1.0 - 1e-9, "load_max %.17g", load);
  ap_stable_plan_destroy(plan);
  return 0;
}
