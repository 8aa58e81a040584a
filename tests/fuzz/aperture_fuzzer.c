/*
 * Fuzz target: the aperture, widening and pick mathematics with random
 * weights (ap_ring, ap_aperture, ap_pick). Invariants: at least one member,
 * distinct ring indices; in continuous mode the members' intersections
 * weighted by their arcs sum to the window's width; widening keeps the base
 * and reaches min_ready ready members (or takes every endpoint); every
 * member has a pick weight > 0, so the pick table builds and every ready
 * member can be drawn; draws stay in range.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/pick/ap_pick_testing.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/core/ap_rng.h"
#include "policy/core/stable/ap_stable.h"
#include "tests/fuzz/fuzz_input.h"

enum { kMaxEndpoints = 80 };

static void check_members(const ap_aperture *a, size_t n) {
  uint8_t seen[kMaxEndpoints] = {0};
  const size_t count = ap_aperture_count(a);
  FUZZ_CHECK(count >= 1 && count <= n, "count %zu of %zu", count, n);
  for (size_t k = 0; k < count; ++k) {
    const ap_member *m = ap_aperture_member(a, k);
    FUZZ_CHECK(m != NULL && m->index < n, "member %zu", k);
    FUZZ_CHECK(!seen[m->index], "ring index %u twice", m->index);
    seen[m->index] = 1;
    FUZZ_CHECK(m->intersection > 0 && m->intersection <= 1.0 + 1e-12,
               "intersection %.17g", m->intersection);
    FUZZ_CHECK(isfinite(m->pick_weight) && m->pick_weight > 0, "pick weight %.17g of %u",
               m->pick_weight, m->index);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size, 0};
  const size_t n = 1 + fuzz_u8(&in) % kMaxEndpoints;
  double weights[kMaxEndpoints];
  uint8_t ready[kMaxEndpoints];
  const int equal = fuzz_u8(&in) % 4 == 0;
  for (size_t i = 0; i < n; ++i) {
    weights[i] = equal ? 1.0 : fuzz_weight(&in);
    ready[i] = fuzz_u8(&in) % 4 != 0;
  }
  ap_ring *ring = NULL;
  FUZZ_CHECK(ap_ring_create(equal ? NULL : weights, n, &ring, NULL) == AP_OK, "ring");
  ap_subset_params params;
  ap_subset_params_init(&params);
  params.mode = (ap_mode)(fuzz_u8(&in) % 7);
  params.peer_count = fuzz_u8(&in) % 40; /* 0: unknown coordinate */
  params.peer_index = params.peer_count ? fuzz_u8(&in) % params.peer_count : 0;
  params.min_aperture = 1 + fuzz_u8(&in) % 30;
  params.random_seed = fuzz_u64(&in);
  /* Stable's service input: the plan of ordinal keys, with the ring's
   * weights, as a caller builds it. */
  ap_stable_plan *plan = NULL;
  if (params.mode == AP_MODE_STABLE && params.peer_count > 0) {
    uint64_t ekeys[kMaxEndpoints], ckeys[40];
    for (size_t i = 0; i < n; ++i) ekeys[i] = ap_stable_ordinal_key(i);
    for (uint32_t i = 0; i < params.peer_count; ++i) ckeys[i] = ap_stable_ordinal_key(i);
    FUZZ_CHECK(ap_stable_plan_create(ekeys, equal ? NULL : weights, n, ckeys, params.peer_count,
                                     params.min_aperture, &plan, NULL) == AP_OK,
               "stable plan");
    params.stable_plan = plan;
  }
  ap_aperture *base = NULL;
  int rc = ap_aperture_compute(ring, &params, &base, NULL);
  FUZZ_CHECK(rc == AP_OK, "compute rc %d", rc);
  check_members(base, n);
  if (ap_aperture_mode(base) == AP_MODE_CONTINUOUS) {
    double covered = 0;
    for (size_t k = 0; k < ap_aperture_count(base); ++k) {
      const ap_member *m = ap_aperture_member(base, k);
      covered += m->intersection * ap_ring_arc_width(ring, m->index);
    }
    const double width = ap_aperture_width(base);
    FUZZ_CHECK(fabs(covered - width) <= 1e-9 * (1 + width), "covered %.17g, width %.17g",
               covered, width);
  }
  const uint32_t min_ready = 1 + fuzz_u8(&in) % 12;
  ap_aperture *wide = NULL;
  FUZZ_CHECK(ap_aperture_widen(ring, base, ready, min_ready, &wide, NULL) == AP_OK, "widen");
  check_members(wide, n);
  size_t ready_members = 0;
  for (size_t k = 0; k < ap_aperture_count(base); ++k)
    FUZZ_CHECK(ap_aperture_find(wide, ap_aperture_member(base, k)->index, NULL),
               "widening dropped a member");
  for (size_t k = 0; k < ap_aperture_count(wide); ++k)
    ready_members += ready[ap_aperture_member(wide, k)->index] != 0;
  FUZZ_CHECK(ready_members >= min_ready || ap_aperture_count(wide) == n,
             "%zu ready of %u wanted, %zu of %zu members", ready_members, min_ready,
             ap_aperture_count(wide), n);
  /* The picker's table: the ready members' pick weights. */
  double pick_weights[kMaxEndpoints];
  size_t slots = 0;
  for (size_t k = 0; k < ap_aperture_count(wide); ++k) {
    const ap_member *m = ap_aperture_member(wide, k);
    if (ready[m->index]) pick_weights[slots++] = m->pick_weight;
  }
  if (slots > 0) {
    ap_pick_table *table = NULL;
    rc = ap_pick_table_create(pick_weights, slots, &table, NULL);
    FUZZ_CHECK(rc == AP_OK, "pick table rc %d", rc);
    for (size_t i = 0; i < slots; ++i)
      FUZZ_CHECK(ap_pick_table_weight(table, i) > 0, "slot %zu unreachable", i);
    ap_rng rng;
    ap_rng_seed(&rng, params.random_seed);
    for (int d = 0; d < 16; ++d) {
      /* The picker's path: two independent draws, the fair comparison over
       * the fuzzed weights with loads from the generator (0..127 calls). */
      const size_t x = ap_pick1(table, &rng), y = ap_pick1(table, &rng);
      FUZZ_CHECK(x < slots && y < slots, "pick1 %zu %zu", x, y);
      const ap_candidate cx = {(double)(ap_rng_next(&rng) % 128), pick_weights[x], 1};
      const ap_candidate cy = {(double)(ap_rng_next(&rng) % 128), pick_weights[y], 1};
      const int choice = ap_p2c_choose_fair(&cx, &cy, &rng);
      FUZZ_CHECK(choice == 0 || choice == 1, "fair choice %d", choice);
    }
    ap_pick_table_destroy(table);
  }
  ap_aperture_destroy(wide);
  ap_aperture_destroy(base);
  ap_stable_plan_destroy(plan); /* NULL unless stable mode with peers */
  ap_ring_destroy(ring);
  return 0;
}
