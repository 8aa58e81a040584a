// Discrete, random, vdc and mesh modes, the unknown-coordinate fallback,
// and mode names.
#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ring/ap_vdc.h"
#include "tests/core/test_util.h"

namespace {

using aptest::Compute;
using aptest::ExpectMembers;
using aptest::Indices;
using aptest::MakeRing;
using aptest::Params;

TEST(Discrete, NextAClockwiseFromIntegerSlot) {
  auto ring = MakeRing(10);
  // slot = floor(1 * 10 / 4) = 2.
  auto a = Compute(ring.get(), Params(AP_MODE_DISCRETE, 1, 4, 3));
  EXPECT_EQ(ap_aperture_mode(a.get()), AP_MODE_DISCRETE);
  ExpectMembers(a.get(), {{2, 1}, {3, 1}, {4, 1}});
  EXPECT_NEAR(ap_aperture_offset(a.get()), 0.2, 1e-15);
  EXPECT_NEAR(ap_aperture_width(a.get()), 0.3, 1e-15);
  // slot = floor(2 * 10 / 3) = 6, A = 5 wraps: 6 7 8 9 0.
  auto b = Compute(ring.get(), Params(AP_MODE_DISCRETE, 2, 3, 5));
  EXPECT_EQ(Indices(b.get()), (std::vector<uint32_t>{6, 7, 8, 9, 0}));
  for (size_t k = 0; k < ap_aperture_count(b.get()); ++k) {
    EXPECT_EQ(ap_aperture_member(b.get(), k)->pick_weight, 1.0);
  }
}

TEST(Discrete, PickWeightIsEndpointWeightAndAllWhenAIsN) {
  auto ring = MakeRing(3, {2, 1, 5});
  auto a = Compute(ring.get(), Params(AP_MODE_DISCRETE, 1, 2, 12));
  // slot floor(3/2) = 1, A = 3: 1 2 0.
  EXPECT_EQ(Indices(a.get()), (std::vector<uint32_t>{1, 2, 0}));
  EXPECT_EQ(ap_aperture_member(a.get(), 1)->pick_weight, 5.0);
  EXPECT_EQ(ap_aperture_width(a.get()), 1.0);
}

TEST(Discrete, ConnectionsPerServerDifferByAtMostOne) {
  auto ring = MakeRing(30);
  std::vector<int> conns(30, 0);
  for (uint32_t i = 0; i < 45; ++i) {
    auto a = Compute(ring.get(), Params(AP_MODE_DISCRETE, i, 45, 4));
    for (uint32_t idx : Indices(a.get())) conns[idx]++;
  }
  auto [lo, hi] = std::minmax_element(conns.begin(), conns.end());
  EXPECT_LE(*hi - *lo, 1);
}

TEST(Mesh, EveryEndpointInRingOrder) {
  auto ring = MakeRing(5, {1, 2, 3, 4, 5});
  auto a = Compute(ring.get(), Params(AP_MODE_MESH, 3, 7, 2));
  EXPECT_EQ(ap_aperture_mode(a.get()), AP_MODE_MESH);
  EXPECT_EQ(Indices(a.get()), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(ap_aperture_offset(a.get()), 0.0);
  EXPECT_EQ(ap_aperture_width(a.get()), 1.0);
  EXPECT_EQ(ap_aperture_member(a.get(), 4)->pick_weight, 5.0);
  EXPECT_EQ(ap_aperture_logical(a.get()), 2u);
  // Mesh needs no coordinate.
  auto b = Compute(ring.get(), Params(AP_MODE_MESH, 0, 0, 12));
  EXPECT_EQ(ap_aperture_mode(b.get()), AP_MODE_MESH);
  EXPECT_EQ(ap_aperture_count(b.get()), 5u);
}

TEST(Random, SeededDistinctSortedAndReproducible) {
  auto ring = MakeRing(50);
  ap_subset_params p = Params(AP_MODE_RANDOM, 0, 0, 12);
  p.random_seed = 77;
  auto a = Compute(ring.get(), p);
  auto b = Compute(ring.get(), p);
  EXPECT_EQ(ap_aperture_mode(a.get()), AP_MODE_RANDOM);
  auto ia = Indices(a.get());
  ASSERT_EQ(ia.size(), 12u);
  EXPECT_EQ(ia, Indices(b.get()));
  EXPECT_TRUE(std::is_sorted(ia.begin(), ia.end()));
  EXPECT_EQ(std::set<uint32_t>(ia.begin(), ia.end()).size(), 12u);
  p.random_seed = 78;
  auto c = Compute(ring.get(), p);
  EXPECT_NE(ia, Indices(c.get()));
  EXPECT_NEAR(ap_aperture_width(a.get()), 12.0 / 50.0, 1e-12);
}

TEST(Random, EveryEndpointEquallyLikelyOverSeeds) {
  // 5000 seeds x 10 of 40: each endpoint is expected 1250 times.
  auto ring = MakeRing(40);
  std::vector<int> hits(40, 0);
  for (uint64_t seed = 0; seed < 5000; ++seed) {
    ap_subset_params p = Params(AP_MODE_RANDOM, 0, 0, 10);
    p.random_seed = seed;
    auto a = Compute(ring.get(), p);
    for (uint32_t i : Indices(a.get())) hits[i]++;
  }
  double chi2 = 0;
  for (int h : hits) chi2 += (h - 1250.0) * (h - 1250.0) / 1250.0;
  // Each seed draws 10 of 40 without replacement, so a count's variance is
  // (1 - 10/40) of the multinomial one: the statistic is smaller than a
  // chi-square with 39 df, and the df-39 bound at p = 0.001 (72.05) is
  // conservative. A biased shuffle (e.g. always the first 10) gives ~15000.
  EXPECT_LT(chi2, 72.05);
}

TEST(Random, IsTheFallbackWithoutCoordinate) {
  auto ring = MakeRing(20);
  for (ap_mode mode : {AP_MODE_CONTINUOUS, AP_MODE_DISCRETE, AP_MODE_VDC,
                       AP_MODE_SMOOTH, AP_MODE_RANDOM, AP_MODE_STABLE}) {
    ap_subset_params p = Params(mode, 0, 0, 5);
    p.random_seed = 9;
    auto a = Compute(ring.get(), p);
    EXPECT_EQ(ap_aperture_mode(a.get()), AP_MODE_RANDOM) << ap_mode_name(mode);
    EXPECT_EQ(ap_aperture_count(a.get()), 5u);
  }
}

TEST(Vdc, HandComputedEightEndpoints) {
  // Positions: k0 0, k1 .5, k2 .25, k3 .75, k4 .125, k5 .625, k6 .375,
  // k7 .875. Client 1 sits at .5: k1, k5, k3; next is k7 at .875.
  auto ring = MakeRing(8);
  auto a = Compute(ring.get(), Params(AP_MODE_VDC, 1, 4, 3));
  EXPECT_EQ(ap_aperture_mode(a.get()), AP_MODE_VDC);
  ExpectMembers(a.get(), {{1, 1}, {5, 1}, {3, 1}});
  EXPECT_EQ(ap_aperture_offset(a.get()), 0.5);
  EXPECT_EQ(ap_aperture_width(a.get()), 0.375);
  // Client 3 at .75 wraps: k3, k7, k0; next k4 at .125.
  auto b = Compute(ring.get(), Params(AP_MODE_VDC, 3, 4, 3));
  ExpectMembers(b.get(), {{3, 1}, {7, 1}, {0, 1}});
  EXPECT_EQ(ap_aperture_width(b.get()), 0.375);
}

TEST(Vdc, HandComputedFiveEndpointsClientBetweenPoints) {
  // Positions k0 0, k1 .5, k2 .25, k3 .75, k4 .125; client 6 at .375:
  // k1 (.5), k3 (.75); next k0 at 0 (wrapped): width .625.
  auto ring = MakeRing(5);
  auto a = Compute(ring.get(), Params(AP_MODE_VDC, 6, 7, 2));
  ExpectMembers(a.get(), {{1, 1}, {3, 1}});
  EXPECT_EQ(ap_aperture_offset(a.get()), 0.375);
  EXPECT_EQ(ap_aperture_width(a.get()), 0.625);
  // A = N: all, width 1.
  auto all = Compute(ring.get(), Params(AP_MODE_VDC, 6, 7, 12));
  EXPECT_EQ(Indices(all.get()), (std::vector<uint32_t>{1, 3, 0, 4, 2}));
  EXPECT_EQ(ap_aperture_width(all.get()), 1.0);
}

TEST(Vdc, MatchesTheSeedsReferenceWalk) {
  // Seed 001's Subset(): sort by position, first point >= client position,
  // take `size` wrapping. Recomputed here for 1000 origins, 500 gateways.
  const uint32_t n = 1000, gateways = 500, size = 20;
  auto ring = MakeRing(n);
  std::vector<std::pair<double, uint32_t>> pts;
  for (uint32_t k = 0; k < n; ++k) pts.push_back({ap_vdc(k), k});
  std::sort(pts.begin(), pts.end());
  std::vector<int> coverage(n, 0);
  for (uint32_t g = 0; g < gateways; g += 7) {
    const double pos = ap_vdc(g);
    size_t start = std::lower_bound(pts.begin(), pts.end(),
                                    std::make_pair(pos, 0u)) - pts.begin();
    std::vector<uint32_t> expected;
    for (uint32_t i = 0; i < size; ++i) {
      expected.push_back(pts[(start + i) % n].second);
    }
    auto a = Compute(ring.get(), Params(AP_MODE_VDC, g, gateways, size));
    EXPECT_EQ(Indices(a.get()), expected) << "gateway " << g;
  }
}

TEST(ModeNames, ParseAndName) {
  const char *names[] = {"continuous", "discrete", "random", "vdc",
                         "mesh",       "smooth",   "stable"};
  for (int i = 0; i < 7; ++i) {
    ap_mode m;
    ASSERT_EQ(ap_mode_parse(names[i], &m, nullptr), AP_OK);
    EXPECT_EQ((int)m, i);
    EXPECT_STREQ(ap_mode_name(m), names[i]);
  }
  ap_mode m;
  ap_error err;
  EXPECT_EQ(ap_mode_parse("Continuous", &m, &err), AP_EINVAL);
  EXPECT_NE(strstr(err.message, "\"Continuous\""), nullptr) << err.message;
  EXPECT_NE(strstr(err.message,
                   "continuous, discrete, random, vdc, mesh, smooth, stable"),
            nullptr);
  EXPECT_EQ(ap_mode_parse(nullptr, &m, &err), AP_EINVAL);
  EXPECT_EQ(ap_mode_parse("mesh", nullptr, &err), AP_EINVAL);
  EXPECT_STREQ(ap_mode_name((ap_mode)42), "unknown");
}

TEST(Params, Defaults) {
  ap_subset_params p;
  memset(&p, 0xff, sizeof(p));
  ap_subset_params_init(&p);
  EXPECT_EQ(p.mode, AP_MODE_CONTINUOUS);
  EXPECT_EQ(p.peer_count, 0u);
  EXPECT_EQ(p.peer_index, 0u);
  EXPECT_EQ(p.min_aperture, 12u);
  EXPECT_EQ(p.random_seed, 0u);
  ap_subset_params_init(nullptr);
}

}  // namespace
