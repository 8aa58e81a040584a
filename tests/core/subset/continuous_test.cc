// Continuous mode (Finagle's deterministic aperture) and explicit windows.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/subset/ap_aperture.h"
#include "tests/core/test_util.h"

namespace {

using aptest::Compute;
using aptest::ExpectMembers;
using aptest::MakeRing;
using aptest::Params;

TEST(Continuous, HandComputedPartialEdges) {
  // N = 10, C = 4, A = 3: m = ceil(3 * 4 / 10) = 2, width = 2/4.
  // Client 1: [0.25, 0.75) covers half of arc 2, arcs 3..6, half of arc 7.
  auto ring = MakeRing(10);
  auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 1, 4, 3));
  EXPECT_EQ(ap_aperture_mode(ap.get()), AP_MODE_CONTINUOUS);
  EXPECT_EQ(ap_aperture_offset(ap.get()), 0.25);
  EXPECT_EQ(ap_aperture_width(ap.get()), 0.5);
  EXPECT_EQ(ap_aperture_logical(ap.get()), 3u);
  ExpectMembers(ap.get(),
                {{2, 0.5}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 0.5}});
}

TEST(Continuous, HandComputedWrapAround) {
  // Client 3 of 4: [0.75, 1.25) wraps: half of 7, 8, 9, 0, 1, half of 2.
  auto ring = MakeRing(10);
  auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 3, 4, 3));
  EXPECT_EQ(ap_aperture_offset(ap.get()), 0.75);
  ExpectMembers(ap.get(),
                {{7, 0.5}, {8, 1}, {9, 1}, {0, 1}, {1, 1}, {2, 0.5}});
}

TEST(Continuous, HandComputedThirds) {
  // N = 6, C = 4, A = 2: m = ceil(8 / 6) = 2, width 1/2. Client 1:
  // [1/4, 3/4): arc 1 = [1/6, 2/6) overlaps 1/12 -> 1/2; arcs 2, 3 full;
  // arc 4 = [4/6, 5/6) overlaps 1/12 -> 1/2.
  auto ring = MakeRing(6);
  auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 1, 4, 2));
  ExpectMembers(ap.get(), {{1, 0.5}, {2, 1}, {3, 1}, {4, 0.5}});
  // N = 7, C = 3, A = 2: m = ceil(6 / 7) = 1, width 1/3. Client 2:
  // [2/3, 1): arc 4 = [4/7, 5/7) overlaps 1/21 -> 1/3; arcs 5, 6 full.
  auto ring7 = MakeRing(7);
  auto ap7 = Compute(ring7.get(), Params(AP_MODE_CONTINUOUS, 2, 3, 2));
  EXPECT_NEAR(ap_aperture_width(ap7.get()), 1.0 / 3.0, 1e-15);
  ExpectMembers(ap7.get(), {{4, 1.0 / 3.0}, {5, 1}, {6, 1}});
}

TEST(Continuous, AlignedWindowHasNoSlivers) {
  // N = 10, C = 5, A = 4: m = 2, width 2/5 = 4 arcs exactly; client 3 starts
  // at 3/5 = arc 6. Rounding must not add arcs 5 or 0 as slivers.
  auto ring = MakeRing(10);
  auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 3, 5, 4));
  ExpectMembers(ap.get(), {{6, 1}, {7, 1}, {8, 1}, {9, 1}});
  auto ap4 = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 4, 5, 4));
  ExpectMembers(ap4.get(), {{8, 1}, {9, 1}, {0, 1}, {1, 1}});
}

TEST(Continuous, DefaultMinApertureAndSmallRing) {
  // N = 5 < 12: A = 5 and width 1 for every client: all endpoints, starting
  // at the arc holding the offset.
  auto ring = MakeRing(5);
  ap_subset_params p;
  ap_subset_params_init(&p);
  p.peer_index = 2;
  p.peer_count = 3;
  auto ap = Compute(ring.get(), p);
  EXPECT_EQ(ap_aperture_logical(ap.get()), 5u);
  EXPECT_EQ(ap_aperture_width(ap.get()), 1.0);
  ExpectMembers(ap.get(), {{3, 1}, {4, 1}, {0, 1}, {1, 1}, {2, 1}});
}

TEST(Continuous, MorePeersThanEndpoints) {
  // C = 1000, N = 10, A = 10: width 1, every endpoint.
  auto ring = MakeRing(10);
  auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 999, 1000, 12));
  EXPECT_EQ(ap_aperture_count(ap.get()), 10u);
  EXPECT_EQ(ap_aperture_width(ap.get()), 1.0);
  // With A = 1: m = ceil(1000 / 10) = 100, width 0.1: one or two arcs.
  auto one = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 999, 1000, 1));
  EXPECT_NEAR(ap_aperture_width(one.get()), 0.1, 1e-15);
  ExpectMembers(one.get(), {{9, 0.01}, {0, 0.99}});
}

TEST(Continuous, OneEndpointOneClient) {
  auto ring = MakeRing(1);
  auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 0, 1, 12));
  ExpectMembers(ap.get(), {{0, 1}});
  EXPECT_EQ(ap_aperture_width(ap.get()), 1.0);
}

TEST(Continuous, PickWeightIsIntersectionTimesEndpointWeight) {
  // Weights 1,2,3,4 -> arcs [0,.1) [.1,.3) [.3,.6) [.6,1).
  auto ring = MakeRing(4, {1, 2, 3, 4});
  ap_aperture *raw = nullptr;
  ASSERT_EQ(ap_aperture_from_window(ring.get(), 0.2, 0.3, &raw, nullptr),
            AP_OK);
  aptest::Aperture ap(raw);
  // [0.2, 0.5): arc 1 overlap 0.1 of 0.2 -> 0.5; arc 2 overlap 0.2 of 0.3.
  ExpectMembers(ap.get(), {{1, 0.5}, {2, 2.0 / 3.0}});
  EXPECT_NEAR(ap_aperture_member(ap.get(), 0)->pick_weight, 1.0, 1e-12);
  EXPECT_NEAR(ap_aperture_member(ap.get(), 1)->pick_weight, 2.0, 1e-12);
}

TEST(Continuous, ExplicitWindow) {
  auto ring = MakeRing(10);
  ap_aperture *raw = nullptr;
  ASSERT_EQ(ap_aperture_from_window(ring.get(), 0.85, 0.3, &raw, nullptr),
            AP_OK);
  aptest::Aperture ap(raw);
  EXPECT_EQ(ap_aperture_offset(ap.get()), 0.85);
  EXPECT_EQ(ap_aperture_width(ap.get()), 0.3);
  ExpectMembers(ap.get(), {{8, 0.5}, {9, 1}, {0, 1}, {1, 0.5}});
  // A tiny window still holds the arc it starts in.
  ASSERT_EQ(ap_aperture_from_window(ring.get(), 0.5, 1e-300, &raw, nullptr),
            AP_OK);
  aptest::Aperture tiny(raw);
  ASSERT_EQ(ap_aperture_count(tiny.get()), 1u);
  EXPECT_EQ(ap_aperture_member(tiny.get(), 0)->index, 5u);
  EXPECT_GT(ap_aperture_member(tiny.get(), 0)->intersection, 0.0);
  // Full width: everything.
  ASSERT_EQ(ap_aperture_from_window(ring.get(), 0.0, 1.0, &raw, nullptr),
            AP_OK);
  aptest::Aperture full(raw);
  EXPECT_EQ(ap_aperture_count(full.get()), 10u);
}

TEST(Continuous, FindAndMemberAccess) {
  auto ring = MakeRing(10);
  auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 3, 4, 3));
  size_t slot = 99;
  EXPECT_EQ(ap_aperture_find(ap.get(), 0, &slot), 1);
  EXPECT_EQ(slot, 3u);
  EXPECT_EQ(ap_aperture_find(ap.get(), 7, &slot), 1);
  EXPECT_EQ(slot, 0u);
  EXPECT_EQ(ap_aperture_find(ap.get(), 5, &slot), 0);
  EXPECT_EQ(ap_aperture_find(ap.get(), 2, nullptr), 1);
  EXPECT_EQ(ap_aperture_member(ap.get(), 6), nullptr);
  EXPECT_EQ(ap_aperture_widened_count(ap.get()), 0u);
}

// Every ring point is covered by exactly m = ceil(A * C / N) windows, so the
// summed intersection of every endpoint is m, and with each client spreading
// its load over its window by pick weight every endpoint's expected load is
// the same.
TEST(Continuous, CoverageIsExactlyMAndLoadIsEven) {
  const std::vector<std::pair<uint32_t, uint32_t>> shapes = {
      {1, 1},   {1, 10},  {3, 10},  {4, 10},   {7, 13},  {13, 78},
      {10, 3},  {25, 7},  {100, 100}, {300, 300}, {1000, 10}, {11, 1000},
      {97, 89}, {64, 48}, {500, 1000}, {1000, 997}, {4096, 1000},
      {999, 10007}};
  for (auto [count, n] : shapes) {
    for (uint32_t min_ap : {1u, 2u, 12u, 40u}) {
      auto ring = MakeRing(n);
      const uint64_t a = std::min<uint64_t>(min_ap, n);
      const uint64_t m = (a * count + n - 1) / n;
      const double expected_cover = (double)std::min<uint64_t>(m, count);
      std::vector<double> cover(n, 0.0), load(n, 0.0);
      for (uint32_t i = 0; i < count; ++i) {
        auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, i, count, min_ap));
        double total = 0;
        for (size_t k = 0; k < ap_aperture_count(ap.get()); ++k) {
          total += ap_aperture_member(ap.get(), k)->pick_weight;
        }
        for (size_t k = 0; k < ap_aperture_count(ap.get()); ++k) {
          const ap_member *mem = ap_aperture_member(ap.get(), k);
          cover[mem->index] += mem->intersection;
          load[mem->index] += mem->pick_weight / total;
        }
      }
      for (uint32_t j = 0; j < n; ++j) {
        ASSERT_NEAR(cover[j], expected_cover, 1e-9)
            << "C=" << count << " N=" << n << " A=" << min_ap << " j=" << j;
        ASSERT_NEAR(load[j], (double)count / n, 1e-9)
            << "C=" << count << " N=" << n << " A=" << min_ap << " j=" << j;
      }
    }
  }
}

TEST(Continuous, WeightedRingLoadFollowsWeights) {
  const std::vector<double> weights = {1, 2, 0.5, 3, 1, 1, 4, 0.25, 2, 1.25};
  double wsum = 0;
  for (double w : weights) wsum += w;
  auto ring = MakeRing(weights.size(), weights);
  for (uint32_t count : {3u, 7u, 20u}) {
    std::vector<double> load(weights.size(), 0.0);
    for (uint32_t i = 0; i < count; ++i) {
      auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, i, count, 3));
      double total = 0;
      for (size_t k = 0; k < ap_aperture_count(ap.get()); ++k) {
        total += ap_aperture_member(ap.get(), k)->pick_weight;
      }
      for (size_t k = 0; k < ap_aperture_count(ap.get()); ++k) {
        const ap_member *mem = ap_aperture_member(ap.get(), k);
        load[mem->index] += mem->pick_weight / total;
      }
    }
    for (size_t j = 0; j < weights.size(); ++j) {
      EXPECT_NEAR(load[j], count * weights[j] / wsum, 1e-9) << count << " " << j;
    }
  }
}

TEST(Continuous, LargeRingMembersAreFewAndContiguous) {
  auto ring = MakeRing(100000);
  auto ap = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 123, 1000, 12));
  // m = ceil(12 * 1000 / 100000) = 1: width 1/1000 = 100 arcs exactly.
  EXPECT_EQ(ap_aperture_count(ap.get()), 100u);
  EXPECT_EQ(ap_aperture_member(ap.get(), 0)->index, 12300u);
  EXPECT_EQ(ap_aperture_member(ap.get(), 99)->index, 12399u);
}

}  // namespace

namespace {

// Exhaustive small sweep: every (C, N) in 1..40 x 1..40 for A = 3 and 12.
TEST(Continuous, CoverageSweepAllSmallShapes) {
  for (uint32_t n = 1; n <= 40; ++n) {
    auto ring = MakeRing(n);
    for (uint32_t count = 1; count <= 40; ++count) {
      for (uint32_t min_ap : {3u, 12u}) {
        const uint64_t a = std::min<uint64_t>(min_ap, n);
        const uint64_t m = std::min<uint64_t>((a * count + n - 1) / n, count);
        std::vector<double> cover(n, 0.0);
        for (uint32_t i = 0; i < count; ++i) {
          auto ap = Compute(ring.get(),
                            Params(AP_MODE_CONTINUOUS, i, count, min_ap));
          for (size_t k = 0; k < ap_aperture_count(ap.get()); ++k) {
            const ap_member *mem = ap_aperture_member(ap.get(), k);
            ASSERT_GT(mem->intersection, 0.0);
            ASSERT_LE(mem->intersection, 1.0);
            cover[mem->index] += mem->intersection;
          }
        }
        for (uint32_t j = 0; j < n; ++j) {
          ASSERT_NEAR(cover[j], (double)m, 1e-9)
              << "C=" << count << " N=" << n << " A=" << min_ap;
        }
      }
    }
  }
}

}  // namespace
