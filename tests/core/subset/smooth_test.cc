// Smooth mode: continuous width, coverage-normalised weights, exact balance.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/subset/ap_aperture.h"
#include "tests/core/test_util.h"

namespace {

using aptest::Compute;
using aptest::MakeRing;
using aptest::Params;

double TotalWeight(const ap_aperture *a) {
  double t = 0;
  for (size_t k = 0; k < ap_aperture_count(a); ++k) {
    t += ap_aperture_member(a, k)->pick_weight;
  }
  return t;
}

// Expected share of each server when each of `count` clients sends `rate`
// requests spread over its aperture by pick weight; added into `load`.
void AddServiceLoad(const ap_ring *ring, uint32_t count, uint32_t min_ap,
                    double rate, std::vector<double> *load,
                    std::vector<double> *window_totals = nullptr) {
  for (uint32_t i = 0; i < count; ++i) {
    auto a = Compute(ring, Params(AP_MODE_SMOOTH, i, count, min_ap));
    ASSERT_NE(a, nullptr);
    const double total = TotalWeight(a.get());
    if (window_totals != nullptr) window_totals->push_back(total);
    for (size_t k = 0; k < ap_aperture_count(a.get()); ++k) {
      const ap_member *m = ap_aperture_member(a.get(), k);
      (*load)[m->index] += rate * m->pick_weight / total;
    }
  }
}

TEST(Smooth, HandComputedWeights) {
  // N = 10, C = 4, A = 3: w = max(3/10, 1/4) = 0.3. In periods of 1/4:
  // L = 1.2 -> q = 1, rho = 0.2: coverage 2 on [0, 0.05) of each quarter
  // and 1 on [0.05, 0.25). Client 1: [0.25, 0.55) = arcs 2 (half: 0.25..0.3,
  // coverage 2 below 0.3) 3 4 (0.4..0.5 -> 1) 5 (half: 0.5..0.55, cov 2).
  //   arc 2: integral 0.05 / 2 = 0.025 -> pick 0.025 / 0.1 = 0.25
  //   arc 3: 0.1 at coverage 1 -> 1
  //   arc 4: 0.1 at coverage 1 -> 1
  //   arc 5: 0.05 at coverage 2 -> 0.25
  auto ring = MakeRing(10);
  auto a = Compute(ring.get(), Params(AP_MODE_SMOOTH, 1, 4, 3));
  EXPECT_EQ(ap_aperture_mode(a.get()), AP_MODE_SMOOTH);
  EXPECT_EQ(ap_aperture_offset(a.get()), 0.25);
  EXPECT_NEAR(ap_aperture_width(a.get()), 0.3, 1e-15);
  ASSERT_EQ(ap_aperture_count(a.get()), 4u);
  const double expected_weight[] = {0.25, 1, 1, 0.25};
  const double expected_inter[] = {0.5, 1, 1, 0.5};
  for (size_t k = 0; k < 4; ++k) {
    const ap_member *m = ap_aperture_member(a.get(), k);
    EXPECT_EQ(m->index, k + 2);
    EXPECT_NEAR(m->intersection, expected_inter[k], 1e-12);
    EXPECT_NEAR(m->pick_weight, expected_weight[k], 1e-12) << k;
  }
}

TEST(Smooth, WidthIsMaxOfAOverNAndOneOverCount) {
  auto ring = MakeRing(100);
  auto a = Compute(ring.get(), Params(AP_MODE_SMOOTH, 0, 10, 12));
  EXPECT_NEAR(ap_aperture_width(a.get()), 0.12, 1e-15);  // A/N > 1/C
  auto b = Compute(ring.get(), Params(AP_MODE_SMOOTH, 0, 5, 3));
  EXPECT_NEAR(ap_aperture_width(b.get()), 0.2, 1e-15);  // 1/C > A/N
  auto c = Compute(ring.get(), Params(AP_MODE_SMOOTH, 0, 1, 3));
  EXPECT_EQ(ap_aperture_width(c.get()), 1.0);
  auto small = MakeRing(8);
  auto d = Compute(small.get(), Params(AP_MODE_SMOOTH, 3, 50, 12));
  EXPECT_EQ(ap_aperture_width(d.get()), 1.0);  // A = N
  EXPECT_EQ(ap_aperture_count(d.get()), 8u);
}

TEST(Smooth, WidthIsContinuousInN) {
  // Smooth: w(N) = min(1, max(A/N, 1/C)), so consecutive N change the width
  // by at most A/(N(N-1)). Continuous mode jumps by 1/C.
  const uint32_t count = 13, min_ap = 12;
  double max_smooth_step = 0, max_continuous_step = 0;
  double prev_s = -1, prev_c = -1;
  for (uint32_t n = 12; n <= 156; ++n) {
    auto ring = MakeRing(n);
    auto s = Compute(ring.get(), Params(AP_MODE_SMOOTH, 0, count, min_ap));
    auto c = Compute(ring.get(), Params(AP_MODE_CONTINUOUS, 0, count, min_ap));
    const double ws = ap_aperture_width(s.get());
    const double wc = ap_aperture_width(c.get());
    EXPECT_NEAR(ws, std::min(1.0, std::max(12.0 / n, 1.0 / count)), 1e-15);
    if (prev_s >= 0) {
      EXPECT_LE(std::fabs(ws - prev_s), 12.0 / ((double)n * (n - 1)) + 1e-15)
          << n;
      max_smooth_step = std::max(max_smooth_step, std::fabs(ws - prev_s));
      max_continuous_step = std::max(max_continuous_step, std::fabs(wc - prev_c));
    }
    prev_s = ws;
    prev_c = wc;
  }
  EXPECT_LT(max_smooth_step, 1.0 / 13);  // never a whole client step
  EXPECT_NEAR(max_continuous_step, 1.0 / 13, 1e-12);  // Finagle's jump
}

TEST(Smooth, EveryWindowHasTheSameTotalWeight) {
  const std::vector<std::pair<uint32_t, uint32_t>> shapes = {
      {4, 10}, {13, 78}, {13, 77}, {7, 50}, {100, 100}, {100, 99},
      {300, 50}, {3, 1000}, {1000, 10}, {97, 89}};
  for (auto [count, n] : shapes) {
    auto ring = MakeRing(n);
    std::vector<double> totals;
    for (uint32_t i = 0; i < count; ++i) {
      auto a = Compute(ring.get(), Params(AP_MODE_SMOOTH, i, count, 12));
      totals.push_back(TotalWeight(a.get()));
    }
    auto [lo, hi] = std::minmax_element(totals.begin(), totals.end());
    EXPECT_LE((*hi - *lo) / *hi, 1e-9) << "C=" << count << " N=" << n;
  }
}

TEST(Smooth, OneServiceLoadIsExactlyEven) {
  const std::vector<std::pair<uint32_t, uint32_t>> shapes = {
      {1, 10},  {2, 10},   {4, 10},   {7, 50},   {13, 78},  {13, 77},
      {100, 100}, {100, 99}, {300, 50}, {11, 300}, {1000, 10}, {97, 89},
      {64, 48}, {1000, 997}, {4096, 1000}, {999, 10007}};
  for (auto [count, n] : shapes) {
    for (uint32_t min_ap : {1u, 3u, 12u}) {
      auto ring = MakeRing(n);
      std::vector<double> load(n, 0.0);
      AddServiceLoad(ring.get(), count, min_ap, 1.0, &load);
      for (uint32_t j = 0; j < n; ++j) {
        ASSERT_NEAR(load[j], (double)count / n, 1e-9 * count / n)
            << "C=" << count << " N=" << n << " A=" << min_ap << " j=" << j;
      }
    }
  }
}

TEST(Smooth, MixOfServicesLoadIsExactlyEven) {
  // Three client services of different sizes and request rates share one
  // backend set of 57 servers.
  auto ring = MakeRing(57);
  std::vector<double> load(57, 0.0);
  AddServiceLoad(ring.get(), 5, 12, 10.0, &load);
  AddServiceLoad(ring.get(), 23, 12, 1.0, &load);
  AddServiceLoad(ring.get(), 131, 12, 0.3, &load);
  const double expected = (5 * 10.0 + 23 * 1.0 + 131 * 0.3) / 57;
  for (uint32_t j = 0; j < 57; ++j) {
    EXPECT_NEAR(load[j], expected, 1e-9 * expected) << j;
  }
  // Continuous mode with the same mix is also even (each service is); what
  // smooth adds is fewer connections at the same balance.
}

TEST(Smooth, WeightedRingLoadFollowsWeights) {
  const std::vector<double> weights = {1, 2, 0.5, 3, 1, 1, 4, 0.25, 2, 1.25,
                                       1, 1, 1, 5, 0.75};
  double wsum = 0;
  for (double w : weights) wsum += w;
  auto ring = MakeRing(weights.size(), weights);
  for (uint32_t count : {3u, 7u, 20u, 64u}) {
    std::vector<double> load(weights.size(), 0.0);
    AddServiceLoad(ring.get(), count, 4, 1.0, &load);
    for (size_t j = 0; j < weights.size(); ++j) {
      EXPECT_NEAR(load[j], count * weights[j] / wsum, 1e-9) << count << " " << j;
    }
  }
}

TEST(Smooth, ConnectionsAboutAPlusOne) {
  // Each window spans A/N of the ring, so it touches A or A + 1 arcs.
  auto ring = MakeRing(100);
  for (uint32_t i = 0; i < 13; ++i) {
    auto a = Compute(ring.get(), Params(AP_MODE_SMOOTH, i, 13, 12));
    EXPECT_GE(ap_aperture_count(a.get()), 12u);
    EXPECT_LE(ap_aperture_count(a.get()), 13u);
  }
}

}  // namespace

namespace {

// Exhaustive small sweep: every (C, N) in 1..40 x 1..40 for A = 3 and 12:
// equal window totals and equal per-server load, both to 1e-9.
TEST(Smooth, BalanceSweepAllSmallShapes) {
  for (uint32_t n = 1; n <= 40; ++n) {
    auto ring = MakeRing(n);
    for (uint32_t count = 1; count <= 40; ++count) {
      for (uint32_t min_ap : {3u, 12u}) {
        std::vector<double> load(n, 0.0), totals;
        AddServiceLoad(ring.get(), count, min_ap, 1.0, &load, &totals);
        auto [lo, hi] = std::minmax_element(totals.begin(), totals.end());
        ASSERT_LE((*hi - *lo) / *hi, 1e-9)
            << "C=" << count << " N=" << n << " A=" << min_ap;
        for (uint32_t j = 0; j < n; ++j) {
          ASSERT_NEAR(load[j], (double)count / n, 1e-9 * count / n)
              << "C=" << count << " N=" << n << " A=" << min_ap << " j=" << j;
        }
      }
    }
  }
}

}  // namespace
