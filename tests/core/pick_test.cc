// ap_pick: weighted pick1/pick2 against the analytic distribution, and the
// P2C rule.
#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/ap_order.h"
#include "policy/core/ap_pick.h"
#include "policy/core/ap_rng.h"
#include "test_util.h"

namespace {

using aptest::Table;

Table MakeTable(const std::vector<double> &w) {
  ap_pick_table *t = nullptr;
  ap_error err;
  EXPECT_EQ(ap_pick_table_create(w.data(), w.size(), &t, &err), AP_OK)
      << err.message;
  return Table(t);
}

double ChiSquare(const std::vector<double> &observed,
                 const std::vector<double> &expected) {
  double chi2 = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] == 0) continue;
    chi2 += (observed[i] - expected[i]) * (observed[i] - expected[i]) /
            expected[i];
  }
  return chi2;
}

// Chi-square critical values at p = 0.001 (one false alarm in 1000 seeds;
// the seeds are fixed, so the test is deterministic). df: degrees of freedom.
constexpr double kChi2Df5 = 20.515;
constexpr double kChi2Df29 = 58.301;

// The weights of a continuous aperture (client 1 of 4, A = 3, N = 10):
// intersections 0.5, 1, 1, 1, 1, 0.5.
const std::vector<double> kWeights = {0.5, 1, 1, 1, 1, 0.5};

TEST(Pick2, FirstFollowsWeightsSecondFollowsWeightsWithoutFirst) {
  auto table = MakeTable(kWeights);
  const size_t k = kWeights.size();
  const double total = 5.0;
  const int draws = 300000;
  ap_rng rng;
  ap_rng_seed(&rng, 20261129);
  std::vector<double> first(k, 0), second(k, 0), pairs(k * k, 0);
  for (int d = 0; d < draws; ++d) {
    size_t a, b;
    ap_pick2(table.get(), &rng, &a, &b);
    ASSERT_LT(a, k);
    ASSERT_LT(b, k);
    ASSERT_NE(a, b);
    first[a]++;
    second[b]++;
    pairs[a * k + b]++;
  }
  // Analytic: P(a) = w_a / T; P(b | a) = w_b / (T - w_a).
  std::vector<double> e_first(k), e_second(k, 0), e_pairs(k * k, 0);
  for (size_t a = 0; a < k; ++a) {
    e_first[a] = draws * kWeights[a] / total;
    for (size_t b = 0; b < k; ++b) {
      if (a == b) continue;
      const double p = kWeights[a] / total * kWeights[b] / (total - kWeights[a]);
      e_pairs[a * k + b] = draws * p;
      e_second[b] += draws * p;
    }
  }
  EXPECT_LT(ChiSquare(first, e_first), kChi2Df5);
  EXPECT_LT(ChiSquare(second, e_second), kChi2Df5);
  EXPECT_LT(ChiSquare(pairs, e_pairs), kChi2Df29);  // 30 cells - 1
  // Power check: the same counts are far from a uniform first pick, so the
  // statistic can fail.
  std::vector<double> uniform(k, draws / (double)k);
  EXPECT_GT(ChiSquare(first, uniform), 1000.0);
}

TEST(Pick1, FollowsWeights) {
  const std::vector<double> w = {3, 0.25, 1, 7, 0.75, 2};
  auto table = MakeTable(w);
  double total = 0;
  for (double x : w) total += x;
  ap_rng rng;
  ap_rng_seed(&rng, 5);
  const int draws = 200000;
  std::vector<double> obs(w.size(), 0), exp(w.size());
  for (int d = 0; d < draws; ++d) obs[ap_pick1(table.get(), &rng)]++;
  for (size_t i = 0; i < w.size(); ++i) exp[i] = draws * w[i] / total;
  EXPECT_LT(ChiSquare(obs, exp), kChi2Df5);
}

TEST(Pick2, LargeTableUsesTheSearchPathAndFollowsWeights) {
  // 100 slots (above the linear-scan size): weights 1..4 in a pattern.
  std::vector<double> w;
  for (int i = 0; i < 100; ++i) w.push_back(1.0 + (i * 7) % 4);
  double total = 0;
  for (double x : w) total += x;
  auto table = MakeTable(w);
  ap_rng rng;
  ap_rng_seed(&rng, 77);
  const int draws = 400000;
  std::vector<double> first(100, 0), second(100, 0);
  for (int d = 0; d < draws; ++d) {
    size_t a, b;
    ap_pick2(table.get(), &rng, &a, &b);
    ASSERT_NE(a, b);
    first[a]++;
    second[b]++;
  }
  std::vector<double> e_first(100), e_second(100, 0);
  for (size_t a = 0; a < 100; ++a) {
    e_first[a] = draws * w[a] / total;
    for (size_t b = 0; b < 100; ++b) {
      if (a != b) e_second[b] += draws * w[a] / total * w[b] / (total - w[a]);
    }
  }
  // Chi-square, 99 df: P(chi2 > 148.23) = 0.001.
  EXPECT_LT(ChiSquare(first, e_first), 148.23);
  EXPECT_LT(ChiSquare(second, e_second), 148.23);
}

TEST(Pick2, TwoSlotsAlwaysBoth) {
  auto table = MakeTable({1, 1000});
  ap_rng rng;
  ap_rng_seed(&rng, 1);
  for (int d = 0; d < 10000; ++d) {
    size_t a, b;
    ap_pick2(table.get(), &rng, &a, &b);
    ASSERT_EQ(a + b, 1u);
  }
}

TEST(Pick2, OneSlotGivesZeroZero) {
  auto table = MakeTable({2.5});
  ap_rng rng;
  ap_rng_seed(&rng, 1);
  size_t a = 9, b = 9;
  ap_pick2(table.get(), &rng, &a, &b);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 0u);
  EXPECT_EQ(ap_pick1(table.get(), &rng), 0u);
  ap_pick2(table.get(), &rng, nullptr, nullptr);
}

TEST(Pick2, NullTableOrRngGivesZeroZero) {
  auto table = MakeTable({1, 2, 3});
  ap_rng rng;
  ap_rng_seed(&rng, 1);
  size_t a = 9, b = 9;
  ap_pick2(nullptr, &rng, &a, &b);
  EXPECT_EQ(a + b, 0u);
  a = b = 9;
  ap_pick2(table.get(), nullptr, &a, &b);
  EXPECT_EQ(a + b, 0u);
  EXPECT_EQ(ap_pick1(nullptr, &rng), 0u);
  EXPECT_EQ(ap_pick1(table.get(), nullptr), 0u);
}

TEST(Pick2, ExtremeWeightsStayDistinctAndInRange) {
  // A tiny slot next to huge ones: the skip arithmetic must never return
  // the first slot again or run off the end.
  auto table = MakeTable({1e-12, 1e12, 1e-12, 3e11, 1e-300});
  ap_rng rng;
  ap_rng_seed(&rng, 3);
  for (int d = 0; d < 100000; ++d) {
    size_t a, b;
    ap_pick2(table.get(), &rng, &a, &b);
    ASSERT_LT(a, 5u);
    ASSERT_LT(b, 5u);
    ASSERT_NE(a, b);
  }
}

TEST(PickTable, Accessors) {
  auto table = MakeTable({1, 2, 3});
  EXPECT_EQ(ap_pick_table_size(table.get()), 3u);
  EXPECT_EQ(ap_pick_table_weight(table.get(), 1), 2.0);
  EXPECT_EQ(ap_pick_table_weight(table.get(), 3), 0.0);
  EXPECT_EQ(ap_pick_table_size(nullptr), 0u);
  EXPECT_EQ(ap_pick_table_weight(nullptr, 0), 0.0);
  ap_pick_table_destroy(nullptr);
}

TEST(PickTable, BadInputs) {
  ap_pick_table *t = reinterpret_cast<ap_pick_table *>(0x1);
  ap_error err;
  const double ok[] = {1, 2};
  EXPECT_EQ(ap_pick_table_create(nullptr, 2, &t, &err), AP_EINVAL);
  EXPECT_EQ(t, nullptr);
  EXPECT_STREQ(err.message, "weights must not be NULL");
  EXPECT_EQ(ap_pick_table_create(ok, 2, nullptr, &err), AP_EINVAL);
  EXPECT_EQ(ap_pick_table_create(ok, 0, &t, &err), AP_ERANGE);
  EXPECT_EQ(ap_pick_table_create(ok, AP_MAX_ENDPOINTS + 1, &t, &err),
            AP_ERANGE);
  for (double bad : {0.0, -1.0, (double)NAN, (double)INFINITY, -(double)INFINITY}) {
    const double w[] = {1, bad, 3};
    EXPECT_EQ(ap_pick_table_create(w, 3, &t, &err), AP_EINVAL) << bad;
    EXPECT_NE(strstr(err.message, "weights[1]"), nullptr) << err.message;
  }
  const double huge[] = {1e308, 1e308};
  EXPECT_EQ(ap_pick_table_create(huge, 2, &t, &err), AP_ERANGE);
}

ap_candidate C(double load, double weight, int healthy) {
  return ap_candidate{load, weight, healthy};
}

TEST(P2C, HealthFirst) {
  auto a = C(100, 1, 1), b = C(0, 1, 0);
  EXPECT_EQ(ap_p2c_choose(&a, &b), 0);
  EXPECT_EQ(ap_p2c_choose(&b, &a), 1);
}

TEST(P2C, LoadDividedByWeight) {
  // 3 / 0.5 = 6 > 4 / 1 = 4: b wins although its raw load is higher.
  auto a = C(3, 0.5, 1), b = C(4, 1, 1);
  EXPECT_EQ(ap_p2c_choose(&a, &b), 1);
  EXPECT_EQ(ap_p2c_choose(&b, &a), 0);
  // 1 / 0.5 = 2 < 4 / 1: a wins.
  auto c = C(1, 0.5, 1);
  EXPECT_EQ(ap_p2c_choose(&c, &b), 0);
}

TEST(P2C, RawLoadWhenWeightsWithin1e4) {
  // Weights 1 and 1.00005 differ by 5e-5: compare raw loads, so 10 vs 10
  // is a tie (a), and a lower raw load wins even if its weight is lower.
  auto a = C(10, 1.0, 1), b = C(10, 1.00005, 1);
  EXPECT_EQ(ap_p2c_choose(&a, &b), 0);
  EXPECT_EQ(ap_p2c_choose(&b, &a), 0);
  auto c = C(9, 1.0, 1), d = C(9.0002, 1.00005, 1);
  EXPECT_EQ(ap_p2c_choose(&d, &c), 1);
  // Weights 1 and 1.001 are not within 1e-4: 10/1 > 10/1.001, b wins.
  auto e = C(10, 1.001, 1);
  EXPECT_EQ(ap_p2c_choose(&a, &e), 1);
}

TEST(P2C, TiesGoToA) {
  auto a = C(5, 2, 1), b = C(5, 2, 1);
  EXPECT_EQ(ap_p2c_choose(&a, &b), 0);
  auto x = C(0, 1, 0), y = C(0, 1, 0);
  EXPECT_EQ(ap_p2c_choose(&x, &y), 0);
}

TEST(P2C, BadCandidatesLose) {
  auto good = C(1000, 1, 1), nan_load = C(NAN, 1, 1);
  EXPECT_EQ(ap_p2c_choose(&nan_load, &good), 1);
  EXPECT_EQ(ap_p2c_choose(&good, &nan_load), 0);
  EXPECT_EQ(ap_p2c_choose(nullptr, &good), 1);
  EXPECT_EQ(ap_p2c_choose(&good, nullptr), 0);
  EXPECT_EQ(ap_p2c_choose(nullptr, nullptr), 0);
  // A non-positive or non-finite weight counts as 1.
  auto zero_w = C(2, 0, 1), one = C(3, 1, 1);
  EXPECT_EQ(ap_p2c_choose(&zero_w, &one), 0);
}

}  // namespace
