/*
 * Fuzz target: membership updates and ticks (ap_membership). The input is a
 * program: each step either offers a subset of a pool of addresses (with
 * weights) or ticks, at a non-decreasing time. Invariants after every step:
 * members in strcmp order and distinct, draining count matches the flags,
 * no draining member past max_members, every listed address present and
 * live when nothing is held, a deadline whenever work is pending, and
 * nothing left held or draining once enough time has passed.
 */
#include <stdint.h>
#include <string.h>

#include "policy/core/membership/ap_membership.h"
#include "policy/core/membership/ap_membership_testing.h"
#include "policy/core/ring/ap_order.h"
#include "tests/fuzz/fuzz_input.h"

enum { kPool = 12 };

static const char *const kAddresses[kPool] = {
    "10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80",
    "10.0.0.5:80", "10.0.0.6:80", "[::1]:80",    "[::1]:81",
    "a.svc:443",   "b.svc:443",   "c.svc:443",   "z"};

static void check(const ap_membership *m, uint64_t now, size_t max_members) {
  const size_t count = ap_membership_count(m);
  size_t draining = 0;
  const char *previous = NULL;
  for (size_t i = 0; i < count; ++i) {
    ap_membership_entry e;
    FUZZ_CHECK(ap_membership_get(m, i, &e, NULL) == AP_OK, "get %zu", i);
    if (previous != NULL)
      FUZZ_CHECK(strcmp(previous, e.address) < 0, "order at %zu", i);
    previous = e.address;
    FUZZ_CHECK(e.weight > 0, "weight %g", e.weight);
    if (e.draining) draining++;
  }
  FUZZ_CHECK(draining == ap_membership_draining_count(m), "draining %zu vs %zu",
             draining, ap_membership_draining_count(m));
  /* Draining members never push the total past the bound (live ones may:
   * they are the resolver's list). */
  FUZZ_CHECK(draining == 0 || count <= max_members, "%zu draining, count %zu > max %zu",
             draining, count, max_members);
  if (draining > 0 || ap_membership_has_held(m))
    FUZZ_CHECK(ap_membership_next_deadline(m) != AP_MEMBERSHIP_NO_DEADLINE,
               "work pending but no deadline (now %llu)", (unsigned long long)now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size, 0};
  ap_membership_params params;
  ap_membership_params_init(&params);
  params.removal_grace_ms = fuzz_u8(&in) % 4 * 50;
  params.coalesce_ms = fuzz_u8(&in) % 3 * 30;
  params.max_members = fuzz_u8(&in) % 16; /* 0: the default */
  const size_t max_members =
      params.max_members == 0 ? AP_MAX_ENDPOINTS : params.max_members;
  ap_membership *m = NULL;
  FUZZ_CHECK(ap_membership_create(&params, &m, NULL) == AP_OK, "create");
  uint64_t now = 0;
  for (int step = 0; step < 64 && !fuzz_done(&in); ++step) {
    now += fuzz_u8(&in) % 64;
    const uint8_t op = fuzz_u8(&in);
    unsigned changes = 0;
    if (op % 4 == 0) {
      FUZZ_CHECK(ap_membership_tick(m, now, &changes, NULL) == AP_OK, "tick");
    } else {
      const uint16_t mask = (uint16_t)((fuzz_u8(&in) << 8) | fuzz_u8(&in));
      const char *list[kPool];
      double weights[kPool];
      size_t n = 0;
      for (size_t i = 0; i < kPool; ++i) {
        if (!(mask & (1u << i))) continue;
        list[n] = kAddresses[i];
        weights[n] = (op & 0x80) ? fuzz_weight(&in) : 1.0;
        n++;
      }
      int rc = ap_membership_update(m, list, weights, n, now, &changes, NULL);
      FUZZ_CHECK(rc == AP_OK, "update rc %d", rc);
      if (!ap_membership_has_held(m)) {
        /* Applied: every listed address is a live member. */
        for (size_t i = 0; i < n; ++i) {
          size_t index = 0;
          FUZZ_CHECK(ap_membership_find(m, list[i], &index, NULL) == AP_OK,
                     "listed %s missing", list[i]);
          ap_membership_entry e;
          ap_membership_get(m, index, &e, NULL);
          FUZZ_CHECK(!e.draining, "listed %s draining", list[i]);
        }
      }
    }
    check(m, now, max_members);
  }
  /* Time passes: everything held is applied and every grace expires. */
  unsigned changes = 0;
  for (int i = 0; i < 2; ++i) {  /* a held update may start new graces */
    now += 100000;
    FUZZ_CHECK(ap_membership_tick(m, now, &changes, NULL) == AP_OK, "final tick");
  }
  FUZZ_CHECK(!ap_membership_has_held(m), "still held");
  FUZZ_CHECK(ap_membership_draining_count(m) == 0, "still draining");
  ap_membership_destroy(m);
  return 0;
}
