// Small helpers shared by the core tests: owning wrappers and builders that
// fail the test (instead of crashing) when the core reports an error.
#ifndef TESTS_CORE_TEST_UTIL_H
#define TESTS_CORE_TEST_UTIL_H

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ap_error.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/core/stable/ap_stable.h"

namespace aptest {

struct RingDeleter {
  void operator()(ap_ring *r) const { ap_ring_destroy(r); }
};
struct ApertureDeleter {
  void operator()(ap_aperture *a) const { ap_aperture_destroy(a); }
};
struct TableDeleter {
  void operator()(ap_pick_table *t) const { ap_pick_table_destroy(t); }
};
using Ring = std::unique_ptr<ap_ring, RingDeleter>;
using Aperture = std::unique_ptr<ap_aperture, ApertureDeleter>;
struct PlanDeleter {
  void operator()(ap_stable_plan *p) const { ap_stable_plan_destroy(p); }
};
using Table = std::unique_ptr<ap_pick_table, TableDeleter>;
using Plan = std::unique_ptr<ap_stable_plan, PlanDeleter>;

// Stable mode's input for a ring of n equal endpoints and `peers` clients:
// the plan of ordinal keys (endpoint k, client i), as the simulator keys
// its numbered servers and clients.
inline Plan OrdinalPlan(size_t n, uint32_t peers, uint32_t min_aperture) {
  std::vector<uint64_t> endpoints, clients;
  for (size_t k = 0; k < n; ++k) endpoints.push_back(ap_stable_ordinal_key(k));
  for (uint32_t i = 0; i < peers; ++i) clients.push_back(ap_stable_ordinal_key(i));
  ap_stable_plan *plan = nullptr;
  ap_error err;
  ap_error_clear(&err);
  int rc = ap_stable_plan_create(endpoints.data(), nullptr, n, clients.data(), peers,
                                 min_aperture, &plan, &err);
  EXPECT_EQ(rc, AP_OK) << err.message;
  return Plan(plan);
}

inline Ring MakeRing(size_t n, const std::vector<double> &weights = {}) {
  ap_ring *r = nullptr;
  ap_error err;
  ap_error_clear(&err);
  int rc = ap_ring_create(weights.empty() ? nullptr : weights.data(), n, &r,
                          &err);
  EXPECT_EQ(rc, AP_OK) << err.message;
  return Ring(r);
}

inline ap_subset_params Params(ap_mode mode, uint32_t index, uint32_t count,
                               uint32_t min_aperture) {
  ap_subset_params p;
  ap_subset_params_init(&p);
  p.mode = mode;
  p.peer_index = index;
  p.peer_count = count;
  p.min_aperture = min_aperture;
  return p;
}

inline Aperture Compute(const ap_ring *ring, const ap_subset_params &p) {
  ap_aperture *a = nullptr;
  ap_error err;
  ap_error_clear(&err);
  int rc = ap_aperture_compute(ring, &p, &a, &err);
  EXPECT_EQ(rc, AP_OK) << err.message;
  return Aperture(a);
}

struct Member {
  uint32_t index;
  double intersection;
};

// Members as (ring index, intersection) in the aperture's order.
inline std::vector<Member> Members(const ap_aperture *a) {
  std::vector<Member> out;
  for (size_t k = 0; k < ap_aperture_count(a); ++k) {
    const ap_member *m = ap_aperture_member(a, k);
    out.push_back({m->index, m->intersection});
  }
  return out;
}

inline std::vector<uint32_t> Indices(const ap_aperture *a) {
  std::vector<uint32_t> out;
  for (size_t k = 0; k < ap_aperture_count(a); ++k) {
    out.push_back(ap_aperture_member(a, k)->index);
  }
  return out;
}

// Expects exactly the given members, intersections to 1e-12.
inline void ExpectMembers(const ap_aperture *a,
                          const std::vector<Member> &expected) {
  std::vector<Member> got = Members(a);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_EQ(got[k].index, expected[k].index) << "member " << k;
    EXPECT_NEAR(got[k].intersection, expected[k].intersection, 1e-12)
        << "member " << k << " (ring index " << got[k].index << ")";
  }
}

}  // namespace aptest

#endif  // TESTS_CORE_TEST_UTIL_H
