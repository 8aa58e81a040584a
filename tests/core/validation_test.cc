// Every bad input of the ring and aperture entry points: an error code, a
// message naming the argument, *out reset to NULL, and no abort.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ring/ap_order.h"
#include "policy/core/ring/ap_ring.h"
#include "tests/core/test_util.h"

namespace {

using aptest::MakeRing;
using aptest::Params;

bool Mentions(const ap_error &err, const std::string &what) {
  return std::string(err.message).find(what) != std::string::npos;
}

TEST(RingValidation, Sizes) {
  ap_ring *r = reinterpret_cast<ap_ring *>(0x1);
  ap_error err;
  EXPECT_EQ(ap_ring_create(nullptr, 0, &r, &err), AP_ERANGE);
  EXPECT_EQ(r, nullptr);
  EXPECT_TRUE(Mentions(err, "n (endpoint count) is 0")) << err.message;
  EXPECT_EQ(ap_ring_create(nullptr, AP_MAX_ENDPOINTS + 1, &r, &err), AP_ERANGE);
  EXPECT_TRUE(Mentions(err, "1000001")) << err.message;
  EXPECT_EQ(ap_ring_create(nullptr, (size_t)-1, &r, &err), AP_ERANGE);
  EXPECT_EQ(ap_ring_create(nullptr, 3, nullptr, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "out")) << err.message;
  // The largest accepted ring builds.
  ASSERT_EQ(ap_ring_create(nullptr, AP_MAX_ENDPOINTS, &r, &err), AP_OK);
  ap_ring_destroy(r);
}

TEST(RingValidation, Weights) {
  ap_ring *r = nullptr;
  ap_error err;
  for (double bad : {0.0, -0.0, -2.0, (double)NAN, (double)INFINITY, -(double)INFINITY}) {
    const double w[] = {1, 1, bad};
    EXPECT_EQ(ap_ring_create(w, 3, &r, &err), AP_EINVAL) << bad;
    EXPECT_EQ(r, nullptr);
    EXPECT_TRUE(Mentions(err, "weights[2]")) << err.message;
  }
  const double huge[] = {1.7e308, 1.7e308};
  EXPECT_EQ(ap_ring_create(huge, 2, &r, &err), AP_ERANGE);
  EXPECT_TRUE(Mentions(err, "sum of weights")) << err.message;
  // A NULL err is fine.
  const double neg[] = {-1};
  EXPECT_EQ(ap_ring_create(neg, 1, &r, nullptr), AP_EINVAL);
}

TEST(ApertureValidation, NullArguments) {
  auto ring = MakeRing(10);
  ap_subset_params p = Params(AP_MODE_CONTINUOUS, 0, 2, 3);
  ap_aperture *a = reinterpret_cast<ap_aperture *>(0x1);
  ap_error err;
  EXPECT_EQ(ap_aperture_compute(nullptr, &p, &a, &err), AP_EINVAL);
  EXPECT_EQ(a, nullptr);
  EXPECT_TRUE(Mentions(err, "ring")) << err.message;
  EXPECT_EQ(ap_aperture_compute(ring.get(), nullptr, &a, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "params")) << err.message;
  EXPECT_EQ(ap_aperture_compute(ring.get(), &p, nullptr, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "out")) << err.message;
}

TEST(ApertureValidation, BadParams) {
  auto ring = MakeRing(10);
  ap_aperture *a = nullptr;
  ap_error err;
  struct Case {
    ap_subset_params p;
    int code;
    const char *names;
  };
  ap_subset_params bad_mode = Params(AP_MODE_CONTINUOUS, 0, 2, 3);
  bad_mode.mode = (ap_mode)17;
  const std::vector<Case> cases = {
      {Params(AP_MODE_CONTINUOUS, 2, 2, 3), AP_EINVAL, "params.peer_index"},
      {Params(AP_MODE_SMOOTH, 5, 3, 3), AP_EINVAL, "params.peer_index"},
      {Params(AP_MODE_RANDOM, 3, 3, 3), AP_EINVAL, "params.peer_index"},
      {Params(AP_MODE_CONTINUOUS, 0, 2, 0), AP_EINVAL, "params.min_aperture"},
      {Params(AP_MODE_CONTINUOUS, 0, 2, AP_MAX_PEERS + 1), AP_ERANGE,
       "params.min_aperture"},
      {Params(AP_MODE_CONTINUOUS, 0, AP_MAX_PEERS + 1, 3), AP_ERANGE,
       "params.peer_count"},
      {Params(AP_MODE_CONTINUOUS, 0, 0xFFFFFFFFu, 3), AP_ERANGE,
       "params.peer_count"},
      {bad_mode, AP_EINVAL, "params.mode"},
  };
  for (const auto &c : cases) {
    a = reinterpret_cast<ap_aperture *>(0x1);
    EXPECT_EQ(ap_aperture_compute(ring.get(), &c.p, &a, &err), c.code)
        << c.names;
    EXPECT_EQ(a, nullptr);
    EXPECT_TRUE(Mentions(err, c.names)) << err.message;
  }
}

TEST(ApertureValidation, LargestSizesWorkInEveryMode) {
  // Largest peer_count and min_aperture with a 1000-endpoint ring. Not
  // stable: its plan holds every client's row (10^9 entries here).
  auto ring = MakeRing(1000);
  for (int mode = 0; mode <= AP_MODE_SMOOTH; ++mode) {
    ap_subset_params p =
        Params((ap_mode)mode, AP_MAX_PEERS - 1, AP_MAX_PEERS, AP_MAX_PEERS);
    auto a = aptest::Compute(ring.get(), p);
    ASSERT_NE(a, nullptr) << mode;
    EXPECT_EQ(ap_aperture_count(a.get()), 1000u) << mode;
    EXPECT_EQ(ap_aperture_logical(a.get()), 1000u);
    if (mode == AP_MODE_MESH) continue;
    p.min_aperture = 1;
    auto b = aptest::Compute(ring.get(), p);
    ASSERT_NE(b, nullptr) << mode;
    EXPECT_GE(ap_aperture_count(b.get()), 1u);
    EXPECT_LE(ap_aperture_count(b.get()), 2u) << ap_mode_name((ap_mode)mode);
  }
}

TEST(ApertureValidation, OneEndpointEveryMode) {
  auto ring = MakeRing(1);
  auto plan = aptest::OrdinalPlan(1, 9, 12);
  for (int mode = 0; mode <= AP_MODE_STABLE; ++mode) {
    ap_subset_params p = Params((ap_mode)mode, 4, 9, 12);
    p.stable_plan = plan.get();
    auto a = aptest::Compute(ring.get(), p);
    ASSERT_EQ(ap_aperture_count(a.get()), 1u) << mode;
    EXPECT_EQ(ap_aperture_member(a.get(), 0)->index, 0u);
    EXPECT_NEAR(ap_aperture_member(a.get(), 0)->intersection, 1.0, 1e-15);
  }
}

TEST(ApertureValidation, MorePeersThanEndpointsEveryMode) {
  auto ring = MakeRing(10);
  auto plan = aptest::OrdinalPlan(10, 1000, 3);
  for (int mode = 0; mode <= AP_MODE_STABLE; ++mode) {
    for (uint32_t i : {0u, 1u, 499u, 999u}) {
      ap_subset_params p = Params((ap_mode)mode, i, 1000, 3);
      p.stable_plan = plan.get();
      auto a = aptest::Compute(ring.get(), p);
      ASSERT_NE(a, nullptr);
      EXPECT_GE(ap_aperture_count(a.get()), 1u);
      EXPECT_LE(ap_aperture_count(a.get()), 10u);
    }
  }
}

// Stable's plan is its one input beyond the ring and the coordinate: the
// core never invents keys, so a missing plan or one for another ring size
// or peer count is an error that names the field.
TEST(ApertureValidation, StableNeedsThePlanOfItsRing) {
  auto ring = MakeRing(10);
  ap_subset_params p = Params(AP_MODE_STABLE, 2, 5, 3);
  ap_aperture *a = nullptr;
  ap_error err;
  EXPECT_EQ(ap_aperture_compute(ring.get(), &p, &a, &err), AP_EINVAL);
  EXPECT_EQ(a, nullptr);
  EXPECT_TRUE(Mentions(err, "params.stable_plan")) << err.message;
  auto other_ring = aptest::OrdinalPlan(11, 5, 3);
  auto other_peers = aptest::OrdinalPlan(10, 6, 3);
  for (const ap_stable_plan *wrong : {other_ring.get(), other_peers.get()}) {
    p.stable_plan = wrong;
    EXPECT_EQ(ap_aperture_compute(ring.get(), &p, &a, &err), AP_EINVAL);
    EXPECT_EQ(a, nullptr);
    EXPECT_TRUE(Mentions(err, "params.stable_plan")) << err.message;
  }
  auto plan = aptest::OrdinalPlan(10, 5, 3);
  p.stable_plan = plan.get();
  auto ok = aptest::Compute(ring.get(), p);
  ASSERT_NE(ok, nullptr);
  // The row is the plan's, and the client places itself from the plan.
  ASSERT_EQ(ap_aperture_count(ok.get()), ap_stable_plan_row_size(plan.get(), 2));
  for (size_t k = 0; k < ap_aperture_count(ok.get()); ++k)
    EXPECT_EQ(ap_aperture_member(ok.get(), k)->index,
              ap_stable_plan_row_endpoints(plan.get(), 2)[k]);
  EXPECT_EQ(ap_stable_plan_client_start(plan.get(), 2),
            ap_stable_client_point(ap_stable_ordinal_key(2), 0));
  EXPECT_EQ(ap_stable_plan_client_start(plan.get(), 5), 0u);
  EXPECT_EQ(ap_stable_plan_client_start(nullptr, 0), 0u);
}

TEST(WindowValidation, OffsetAndWidth) {
  auto ring = MakeRing(10);
  ap_aperture *a = reinterpret_cast<ap_aperture *>(0x1);
  ap_error err;
  for (double off : {-0.1, 1.0, 2.5, (double)NAN, (double)INFINITY}) {
    EXPECT_EQ(ap_aperture_from_window(ring.get(), off, 0.5, &a, &err),
              AP_EINVAL)
        << off;
    EXPECT_EQ(a, nullptr);
    EXPECT_TRUE(Mentions(err, "offset")) << err.message;
  }
  for (double w : {0.0, -0.5, 1.0000001, (double)NAN, (double)INFINITY}) {
    EXPECT_EQ(ap_aperture_from_window(ring.get(), 0.5, w, &a, &err), AP_EINVAL)
        << w;
    EXPECT_TRUE(Mentions(err, "width")) << err.message;
  }
  EXPECT_EQ(ap_aperture_from_window(nullptr, 0.5, 0.5, &a, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "ring")) << err.message;
  EXPECT_EQ(ap_aperture_from_window(ring.get(), 0.5, 0.5, nullptr, &err),
            AP_EINVAL);
}

TEST(ApertureAccessors, NullIsSafe) {
  EXPECT_EQ(ap_aperture_count(nullptr), 0u);
  EXPECT_EQ(ap_aperture_widened_count(nullptr), 0u);
  EXPECT_EQ(ap_aperture_member(nullptr, 0), nullptr);
  EXPECT_EQ(ap_aperture_find(nullptr, 0, nullptr), 0);
  EXPECT_EQ(ap_aperture_offset(nullptr), 0.0);
  EXPECT_EQ(ap_aperture_width(nullptr), 0.0);
  EXPECT_EQ(ap_aperture_logical(nullptr), 0u);
  ap_aperture_destroy(nullptr);
}

}  // namespace
