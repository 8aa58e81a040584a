// ap_pick: weighted draws against the analytic distribution, and the P2C
// rules (the deterministic one without a generator, and the fair one).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/ring/ap_order.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/pick/ap_pick_testing.h"
#include "policy/core/ap_rng.h"
#include "policy/core/ap_rng_testing.h"
#include "tests/core/test_util.h"

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

TEST(Pick1, LargeTableUsesTheSearchPathAndFollowsWeights) {
  // 100 slots (above the linear-scan size): weights 1..4 in a pattern.
  std::vector<double> w;
  for (int i = 0; i < 100; ++i) w.push_back(1.0 + (i * 7) % 4);
  double total = 0;
  for (double x : w) total += x;
  auto table = MakeTable(w);
  ap_rng rng;
  ap_rng_seed(&rng, 77);
  const int draws = 400000;
  std::vector<double> obs(100, 0), expected(100);
  for (int d = 0; d < draws; ++d) obs[ap_pick1(table.get(), &rng)]++;
  for (size_t i = 0; i < 100; ++i) expected[i] = draws * w[i] / total;
  // Chi-square, 99 df: P(chi2 > 148.23) = 0.001.
  EXPECT_LT(ChiSquare(obs, expected), 148.23);
  // Power check: the same counts are far from uniform.
  std::vector<double> uniform(100, draws / 100.0);
  EXPECT_GT(ChiSquare(obs, uniform), 1000.0);
}
TEST(Pick1, OneSlotGivesZero) {
  auto table = MakeTable({2.5});
  ap_rng rng;
  ap_rng_seed(&rng, 1);
  for (int d = 0; d < 100; ++d) EXPECT_EQ(ap_pick1(table.get(), &rng), 0u);
}

TEST(Pick1, NullTableOrRngGivesZero) {
  auto table = MakeTable({1, 2, 3});
  ap_rng rng;
  ap_rng_seed(&rng, 1);
  EXPECT_EQ(ap_pick1(nullptr, &rng), 0u);
  EXPECT_EQ(ap_pick1(table.get(), nullptr), 0u);
}

TEST(Pick1, ExtremeWeightsStayInRangeAndFollowTheHeavySlots) {
  // Tiny slots next to huge ones: the search must never run off the end,
  // and the two heavy slots take (almost) every draw, 10:3.
  auto table = MakeTable({1e-12, 1e12, 1e-12, 3e11, 1e-300});
  ap_rng rng;
  ap_rng_seed(&rng, 3);
  std::vector<double> obs(5, 0);
  const int draws = 100000;
  for (int d = 0; d < draws; ++d) {
    const size_t a = ap_pick1(table.get(), &rng);
    ASSERT_LT(a, 5u);
    obs[a]++;
  }
  EXPECT_EQ(obs[0] + obs[2] + obs[4], 0);
  // Binomial(100000, 10/13): sd 133; 6 sd is 800.
  EXPECT_NEAR(obs[1], draws * 10.0 / 13.0, 800);
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

TEST(P2CWithoutGenerator, HealthFirst) {
  auto a = C(100, 1, 1), b = C(0, 1, 0);
  EXPECT_EQ(ap_p2c_choose_fair(&a, &b, nullptr), 0);
  EXPECT_EQ(ap_p2c_choose_fair(&b, &a, nullptr), 1);
}

TEST(P2CWithoutGenerator, LoadDividedByWeight) {
  // 3 / 0.5 = 6 > 4 / 1 = 4: b wins although its raw load is higher.
  auto a = C(3, 0.5, 1), b = C(4, 1, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&a, &b, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair(&b, &a, nullptr), 0);
  // 1 / 0.5 = 2 < 4 / 1: a wins.
  auto c = C(1, 0.5, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&c, &b, nullptr), 0);
}

TEST(P2CWithoutGenerator, RawLoadWhenWeightsWithin1e4) {
  // Weights 1 and 1.00005 differ by 5e-5: compare raw loads, so 10 vs 10
  // is a tie (a), and a lower raw load wins even if its weight is lower.
  auto a = C(10, 1.0, 1), b = C(10, 1.00005, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&a, &b, nullptr), 0);
  EXPECT_EQ(ap_p2c_choose_fair(&b, &a, nullptr), 0);
  auto c = C(9, 1.0, 1), d = C(9.0002, 1.00005, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&d, &c, nullptr), 1);
  // Weights 1 and 1.001 are not within 1e-4: 10/1 > 10/1.001, b wins.
  auto e = C(10, 1.001, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&a, &e, nullptr), 1);
}

TEST(P2CWithoutGenerator, TiesGoToA) {
  auto a = C(5, 2, 1), b = C(5, 2, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&a, &b, nullptr), 0);
  auto x = C(0, 1, 0), y = C(0, 1, 0);
  EXPECT_EQ(ap_p2c_choose_fair(&x, &y, nullptr), 0);
}

TEST(P2CWithoutGenerator, BadCandidatesLose) {
  auto good = C(1000, 1, 1), nan_load = C(NAN, 1, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&nan_load, &good, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair(&good, &nan_load, nullptr), 0);
  EXPECT_EQ(ap_p2c_choose_fair(nullptr, &good, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair(&good, nullptr, nullptr), 0);
  EXPECT_EQ(ap_p2c_choose_fair(nullptr, nullptr, nullptr), 0);
  // A non-positive or non-finite weight counts as 1.
  auto zero_w = C(2, 0, 1), one = C(3, 1, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&zero_w, &one, nullptr), 0);
}

// ---- ap_p2c_choose_fair with a generator ----

using Chooser =
    std::function<int(const ap_candidate *, const ap_candidate *, ap_rng *)>;

// One client's picker in a queue: calls arrive at rate `in_flight_mean`
// (Poisson), each member serves a call in an exponential time of mean
// latency[j] (1 unless given; so about `in_flight_mean` calls are in flight
// in all), and the picker draws two slots by weight (independently, or
// distinct: the second redrawn until it differs, i.e. by weight among the
// others, when `distinct`) and keeps the one `choose`
// prefers, from the calls in flight. Returns each member's share of the
// calls. Fixed seed: deterministic.
std::vector<double> QueueShares(const std::vector<double> &w,
                                double in_flight_mean, const Chooser &choose,
                                std::vector<double> latency = {},
                                bool distinct = false, int calls = 200000,
                                uint64_t seed = 11) {
  if (latency.empty()) latency.assign(w.size(), 1.0);
  auto table = MakeTable(w);
  ap_rng rng;
  ap_rng_seed(&rng, seed);
  auto exponential = [&rng](double mean) {
    return -mean * std::log1p(-ap_rng_uniform(&rng));
  };
  std::vector<int> in_flight(w.size(), 0);
  std::vector<double> served(w.size(), 0);
  using Done = std::pair<double, size_t>;
  std::priority_queue<Done, std::vector<Done>, std::greater<Done>> done;
  double now = 0;
  for (int call = 0; call < calls; ++call) {
    now += exponential(1.0 / in_flight_mean);
    while (!done.empty() && done.top().first <= now) {
      in_flight[done.top().second]--;
      done.pop();
    }
    size_t pick = 0, other = 0;
    pick = ap_pick1(table.get(), &rng);
    other = ap_pick1(table.get(), &rng);
    while (distinct && other == pick) other = ap_pick1(table.get(), &rng);
    if (other != pick) {
      const ap_candidate a = C(in_flight[pick], w[pick], 1);
      const ap_candidate b = C(in_flight[other], w[other], 1);
      if (choose(&a, &b, &rng) == 1) pick = other;
    }
    in_flight[pick]++;
    served[pick]++;
    done.push({now + exponential(latency[pick]), pick});
  }
  for (double &x : served) x /= calls;
  return served;
}

// The largest |share / weight share - 1| over the members.
double WorstShareError(const std::vector<double> &w,
                       const std::vector<double> &shares) {
  double total = 0, worst = 0;
  for (double x : w) total += x;
  for (size_t j = 0; j < w.size(); ++j) {
    worst = std::max(worst, std::fabs(shares[j] / (w[j] / total) - 1));
  }
  return worst;
}

const Chooser kFair = ap_p2c_choose_fair;
const Chooser kLoadPerWeight = [](const ap_candidate *a,
                                  const ap_candidate *b, ap_rng *) {
  return ap_p2c_choose_fair(a, b, nullptr);
};

// A window's edge members carry fractional weights. The calls each member
// gets must follow the weights, or a server shared by two windows gets
// more than the others. 200,000 calls: the sampling spread of a share of
// 0.2 is about 0.5% relative, so 2.5% is five spreads.
TEST(FairP2C, SharesFollowFractionalWeightsAtEveryOccupancy) {
  for (const auto &w : std::vector<std::vector<double>>{
           {1, 1, 0.5}, {0.3, 1, 1, 0.7}, {0.5, 1, 1, 1, 1, 0.5}}) {
    for (double in_flight : {0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0}) {
      const double err = WorstShareError(w, QueueShares(w, in_flight, kFair));
      EXPECT_LT(err, 0.025) << "members " << w.size() << ", calls in flight "
                            << in_flight;
    }
  }
}

// The pick the fair one replaces (distinct draws, load / weight) gives the
// 0.5 member about 13% more than its share with one call in flight.
TEST(FairP2C, DistinctDrawsAndLoadPerWeightOverserveTheFractionalMember) {
  const std::vector<double> w = {1, 1, 0.5};
  const auto old_shares = QueueShares(w, 1.0, kLoadPerWeight, {}, true);
  EXPECT_GT(old_shares[2] / 0.2 - 1, 0.08);
  EXPECT_LT(WorstShareError(w, QueueShares(w, 1.0, kFair)), 0.025);
}

// Still least loaded: a member five times slower than the others gets well
// under its share (about two thirds of it).
TEST(FairP2C, SlowMemberLosesItsShare) {
  const std::vector<double> w = {0.3, 1, 1, 0.7};
  const auto shares = QueueShares(w, 4.0, kFair, {1, 5, 1, 1});
  EXPECT_LT(shares[1] / (1 / 3.0), 0.8);
}

TEST(FairP2C, HealthFirstAndNullFallsBack) {
  ap_rng rng;
  ap_rng_seed(&rng, 5);
  auto sick = C(0, 1, 0), busy = C(50, 0.5, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&sick, &busy, &rng), 1);
  EXPECT_EQ(ap_p2c_choose_fair(&busy, &sick, &rng), 0);
  // Without a generator: the deterministic comparison (3 / 0.5 > 4 / 1).
  auto a = C(3, 0.5, 1), b = C(4, 1, 1);
  EXPECT_EQ(ap_p2c_choose_fair(&a, &b, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair(nullptr, &b, &rng), 1);
  EXPECT_EQ(ap_p2c_choose_fair(&a, nullptr, &rng), 0);
}

TEST(FairP2C, EqualWeightsCompareRawLoads) {
  ap_rng rng;
  ap_rng_seed(&rng, 5);
  auto a = C(3, 1, 1), b = C(2, 1.00005, 1), c = C(3, 1, 1);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(ap_p2c_choose_fair(&a, &b, &rng), 1);
    ASSERT_EQ(ap_p2c_choose_fair(&a, &c, &rng), 0);  // tie: a
  }
}

// The heavier candidate's load is a binomial draw: b (weight 1, 4 calls)
// thinned to weight 0.5 keeps all 4 with probability 1/16, so b beats a
// (weight 0.5, 4 calls) 15 times in 16; a loaded with 0 is never beaten.
TEST(FairP2C, HeavierLoadIsThinnedBinomially) {
  ap_rng rng;
  ap_rng_seed(&rng, 9);
  auto a = C(4, 0.5, 1), b = C(4, 1, 1), idle = C(0, 0.5, 1);
  int b_wins = 0;
  const int n = 160000;
  for (int i = 0; i < n; ++i) {
    b_wins += ap_p2c_choose_fair(&a, &b, &rng);
    ASSERT_EQ(ap_p2c_choose_fair(&idle, &b, &rng), 0);
  }
  EXPECT_NEAR(b_wins / double(n), 15.0 / 16, 0.005);
  // Large and fractional loads take the normal approximation: about half
  // of 1000 calls kept, so 400 at weight 0.5 wins and 600 loses, nearly
  // always; NaN counts as +infinity and loses.
  auto big = C(1000, 1, 1), light400 = C(400, 0.5, 1), light600 = C(600, 0.5, 1);
  auto nan = C(NAN, 0.5, 1);
  int light_wins = 0, heavy_wins = 0;
  for (int i = 0; i < 1000; ++i) {
    light_wins += ap_p2c_choose_fair(&big, &light400, &rng);
    heavy_wins += 1 - ap_p2c_choose_fair(&big, &light600, &rng);
    ASSERT_EQ(ap_p2c_choose_fair(&nan, &big, &rng), 1);
  }
  EXPECT_GT(light_wins, 990);
  EXPECT_GT(heavy_wins, 990);
}

}  // namespace
