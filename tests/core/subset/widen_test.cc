// ap_aperture_widen: health widening in every mode.
#include <algorithm>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/subset/ap_aperture.h"
#include "tests/core/test_util.h"

namespace {

using aptest::Aperture;
using aptest::Compute;
using aptest::Indices;
using aptest::MakeRing;
using aptest::Params;

Aperture Widen(const ap_ring *ring, const ap_aperture *base,
               const std::vector<uint8_t> &ready, uint32_t min_ready) {
  ap_aperture *out = nullptr;
  ap_error err;
  EXPECT_EQ(ap_aperture_widen(ring, base, ready.data(), min_ready, &out, &err),
            AP_OK)
      << err.message;
  return Aperture(out);
}

TEST(Widen, AddsClockwiseUntilEnoughReady) {
  auto ring = MakeRing(10);
  // Members 2..7 (client 1 of 4, A = 3); ready: 2, 7, 9.
  auto base = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 1, 4, 3));
  std::vector<uint8_t> ready(10, 0);
  ready[2] = ready[7] = ready[9] = 1;
  auto w = Widen(ring.get(), base.get(), ready, 3);
  EXPECT_EQ(Indices(w.get()),
            (std::vector<uint32_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(ap_aperture_widened_count(w.get()), 2u);
  EXPECT_EQ(ap_aperture_count(w.get()), 8u);
  const ap_member *m8 = ap_aperture_member(w.get(), 6);
  EXPECT_EQ(m8->widened, 1);
  EXPECT_EQ(m8->intersection, 1.0);
  EXPECT_EQ(m8->pick_weight, 1.0);
  EXPECT_EQ(ap_aperture_member(w.get(), 0)->widened, 0);
  EXPECT_EQ(ap_aperture_member(w.get(), 0)->intersection, 0.5);
  size_t slot;
  EXPECT_EQ(ap_aperture_find(w.get(), 9, &slot), 1);
  EXPECT_EQ(slot, 7u);
  // Window and mode are kept.
  EXPECT_EQ(ap_aperture_offset(w.get()), 0.25);
  EXPECT_EQ(ap_aperture_width(w.get()), 0.5);
  EXPECT_EQ(ap_aperture_mode(w.get()), AP_MODE_CONTINUOUS);
}

TEST(Widen, EnoughReadyReturnsACopy) {
  auto ring = MakeRing(10);
  auto base = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 1, 4, 3));
  std::vector<uint8_t> ready(10, 1);
  auto w = Widen(ring.get(), base.get(), ready, 6);
  EXPECT_EQ(Indices(w.get()), Indices(base.get()));
  EXPECT_EQ(ap_aperture_widened_count(w.get()), 0u);
  auto zero = Widen(ring.get(), base.get(), std::vector<uint8_t>(10, 0), 0);
  EXPECT_EQ(Indices(zero.get()), Indices(base.get()));
}

TEST(Widen, WrapsAndStopsWhenEveryEndpointIsAMember) {
  auto ring = MakeRing(10);
  auto base = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 3, 4, 3));
  // Members 7 8 9 0 1 2; nothing ready: add 3..6 and stop.
  auto w = Widen(ring.get(), base.get(), std::vector<uint8_t>(10, 0), 5);
  EXPECT_EQ(Indices(w.get()),
            (std::vector<uint32_t>{7, 8, 9, 0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ap_aperture_widened_count(w.get()), 4u);
}

TEST(Widen, WideningAWidenedApertureContinues) {
  auto ring = MakeRing(10);
  auto base = Compute(ring.get(), Params(AP_MODE_DISCRETE, 0, 5, 2));  // 0 1
  std::vector<uint8_t> ready(10, 0);
  ready[3] = 1;
  auto w1 = Widen(ring.get(), base.get(), ready, 1);  // + 2 3
  EXPECT_EQ(Indices(w1.get()), (std::vector<uint32_t>{0, 1, 2, 3}));
  ready[5] = 1;
  auto w2 = Widen(ring.get(), w1.get(), ready, 2);  // + 4 5
  EXPECT_EQ(Indices(w2.get()), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ap_aperture_widened_count(w2.get()), 4u);
}

// In random and vdc mode widening continues in the mode's own order, so
// widening A members by k equals the aperture with A + k.
TEST(Widen, RandomAndVdcFollowTheirOrder) {
  auto ring = MakeRing(30);
  for (ap_mode mode : {AP_MODE_RANDOM, AP_MODE_VDC}) {
    ap_subset_params p3 = Params(mode, 5, 11, 3);
    ap_subset_params p7 = Params(mode, 5, 11, 7);
    p3.random_seed = p7.random_seed = 1234;
    auto base = Compute(ring.get(), p3);
    auto bigger = Compute(ring.get(), p7);
    auto w = Widen(ring.get(), base.get(), std::vector<uint8_t>(30, 1), 7);
    auto wi = Indices(w.get()), bi = Indices(bigger.get());
    EXPECT_EQ(std::set<uint32_t>(wi.begin(), wi.end()),
              std::set<uint32_t>(bi.begin(), bi.end()))
        << ap_mode_name(mode);
    EXPECT_EQ(ap_aperture_widened_count(w.get()), 4u);
  }
}

TEST(Widen, WeightedRingAddsEndpointWeight) {
  auto ring = MakeRing(4, {1, 2, 3, 4});
  auto base = Compute(ring.get(), Params(AP_MODE_DISCRETE, 0, 4, 1));  // 0
  auto w = Widen(ring.get(), base.get(), std::vector<uint8_t>(4, 0), 1);
  ASSERT_EQ(ap_aperture_count(w.get()), 4u);
  EXPECT_EQ(ap_aperture_member(w.get(), 3)->pick_weight, 4.0);
}

TEST(Widen, SmoothWidenedWeightsUseTheBaseScale) {
  // Smooth weights are coverage-normalised (about 1/c); a widened member
  // gets endpoint weight x (sum of pick weights / sum of intersections).
  auto ring = MakeRing(40);
  auto base = Compute(ring.get(), Params(AP_MODE_SMOOTH, 2, 7, 12));
  double scaled = 0, plain = 0;
  for (size_t k = 0; k < ap_aperture_count(base.get()); ++k) {
    scaled += ap_aperture_member(base.get(), k)->pick_weight;
    plain += ap_aperture_member(base.get(), k)->intersection;
  }
  auto w = Widen(ring.get(), base.get(), std::vector<uint8_t>(40, 0), 1);
  ASSERT_GT(ap_aperture_widened_count(w.get()), 0u);
  const ap_member *last =
      ap_aperture_member(w.get(), ap_aperture_count(w.get()) - 1);
  EXPECT_EQ(last->widened, 1);
  EXPECT_NEAR(last->pick_weight, scaled / plain, 1e-12);
  EXPECT_LT(last->pick_weight, 1.0);
}

TEST(Widen, BadInputs) {
  auto ring = MakeRing(10);
  auto other = MakeRing(11);
  auto base = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 1, 4, 3));
  std::vector<uint8_t> ready(11, 1);
  ap_aperture *out = reinterpret_cast<ap_aperture *>(0x1);
  ap_error err;
  EXPECT_EQ(ap_aperture_widen(nullptr, base.get(), ready.data(), 1, &out, &err),
            AP_EINVAL);
  EXPECT_EQ(out, nullptr);
  EXPECT_STREQ(err.message, "ring must not be NULL");
  EXPECT_EQ(ap_aperture_widen(ring.get(), nullptr, ready.data(), 1, &out, &err),
            AP_EINVAL);
  EXPECT_STREQ(err.message, "base must not be NULL");
  EXPECT_EQ(ap_aperture_widen(ring.get(), base.get(), nullptr, 1, &out, &err),
            AP_EINVAL);
  EXPECT_STREQ(err.message, "ready must not be NULL");
  EXPECT_EQ(ap_aperture_widen(ring.get(), base.get(), ready.data(), 1, nullptr,
                              &err),
            AP_EINVAL);
  EXPECT_EQ(ap_aperture_widen(other.get(), base.get(), ready.data(), 1, &out,
                              &err),
            AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("ring of 10"), std::string::npos);
}

}  // namespace
