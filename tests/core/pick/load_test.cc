// ap_load: pick metric names, the peak EWMA of latency, the smoothed
// utilization and its staleness, and the costs the picker compares. Every
// expected value is computed here from the documented formulas, with
// explicit times (no sleeping).
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/pick/ap_load.h"
#include "policy/core/pick/ap_load_testing.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/ap_rng.h"

namespace {

constexpr int64_t kMs = 1000000;  // ns
constexpr int64_t kS = 1000 * kMs;
constexpr int64_t kT0 = 1000 * kS;  // an arbitrary monotonic start

ap_load_state Fresh() {
  ap_load_state s;
  ap_load_init(&s);
  return s;
}

TEST(PickMetric, NamesRoundTrip) {
  const char* names[] = {"outstanding", "peakEwma", "orca"};
  for (int i = 0; i < AP_PICK_METRIC_COUNT; ++i) {
    ap_pick_metric m = AP_PICK_METRIC_COUNT;
    ap_error err;
    ASSERT_EQ(ap_pick_metric_parse(names[i], &m, &err), AP_OK) << names[i];
    EXPECT_EQ(m, static_cast<ap_pick_metric>(i));
    EXPECT_STREQ(ap_pick_metric_name(m), names[i]);
  }
  EXPECT_EQ(AP_PICK_OUTSTANDING, 0) << "the zero value is the default";
}

TEST(PickMetric, BadNamesAreRejectedWithTheAcceptedList) {
  for (const char* bad : {"", "Outstanding", "peakewma", "ORCA", "latency",
                          "outstanding ", "least_request"}) {
    ap_pick_metric m = AP_PICK_PEAK_EWMA;
    ap_error err;
    EXPECT_EQ(ap_pick_metric_parse(bad, &m, &err), AP_EINVAL) << bad;
    EXPECT_EQ(m, AP_PICK_PEAK_EWMA) << "out untouched on error";
    EXPECT_NE(std::strstr(err.message, "accepted: outstanding, peakEwma, orca"),
              nullptr)
        << err.message;
    EXPECT_NE(std::strstr(err.message, ("\"" + std::string(bad) + "\"").c_str()),
              nullptr)
        << err.message;
  }
  ap_pick_metric m;
  ap_error err;
  EXPECT_EQ(ap_pick_metric_parse(nullptr, &m, &err), AP_EINVAL);
  EXPECT_EQ(ap_pick_metric_parse("orca", nullptr, &err), AP_EINVAL);
  EXPECT_EQ(ap_pick_metric_parse("orca", &m, nullptr), AP_OK);
  EXPECT_STREQ(ap_pick_metric_name(AP_PICK_METRIC_COUNT), "unknown");
  EXPECT_STREQ(ap_pick_metric_name(static_cast<ap_pick_metric>(-1)),
               "unknown");
}

TEST(LoadState, OutstandingCountsStartsAndEnds) {
  ap_load_state s = Fresh();
  EXPECT_EQ(ap_load_outstanding(&s), 0);
  ap_load_call_start(&s);
  ap_load_call_start(&s);
  ap_load_call_start(&s);
  EXPECT_EQ(ap_load_outstanding(&s), 3);
  ap_load_call_finish(&s, kT0, kT0 + 5 * kMs);
  EXPECT_EQ(ap_load_outstanding(&s), 2);
  ap_load_call_end(&s);
  EXPECT_EQ(ap_load_outstanding(&s), 1);
  double lat = -1;
  ASSERT_EQ(ap_load_latency_ns(&s, &lat), 1) << "the finish recorded 5 ms";
  EXPECT_EQ(lat, 5.0 * kMs);
  // A finish with end before start ends the call but records nothing.
  ap_load_call_finish(&s, kT0 + 10 * kS, kT0 + 6 * kS);
  EXPECT_EQ(ap_load_outstanding(&s), 0);
  ASSERT_EQ(ap_load_latency_ns(&s, &lat), 1);
  EXPECT_EQ(lat, 5.0 * kMs);
}

TEST(LoadState, StartReturnsTheCallsInFlightBeforeIt) {
  ap_load_state s = Fresh();
  EXPECT_EQ(ap_load_call_start(&s), 0);
  EXPECT_EQ(ap_load_call_start(&s), 1);
  EXPECT_EQ(ap_load_call_end(&s), 0);
  EXPECT_EQ(ap_load_call_start(&s), 1);
  EXPECT_EQ(ap_load_call_finish(&s, kT0, kT0 + kMs), 0);
  EXPECT_EQ(ap_load_call_end(&s), 0);
  EXPECT_EQ(ap_load_call_start(&s), 0) << "idle again";
  // Started counts every start (the endpoint's picks), ended every end.
  EXPECT_EQ(ap_load_calls_started(&s), 4u);
  EXPECT_EQ(ap_load_calls_ended(&s), 3u);
  EXPECT_EQ(ap_load_outstanding(&s), 1);
  EXPECT_EQ(ap_load_call_start(nullptr), 0);
  EXPECT_EQ(ap_load_call_end(nullptr), 0);
  EXPECT_EQ(ap_load_call_finish(nullptr, kT0, kT0), 0);
  EXPECT_EQ(ap_load_release(nullptr), 0);
  EXPECT_EQ(ap_load_calls_started(nullptr), 0u);
  EXPECT_EQ(ap_load_calls_ended(nullptr), 0u);
}

TEST(LoadLifetime, ReleaseWithNothingInFlightFreesAtOnce) {
  ap_load_state s = Fresh();
  EXPECT_EQ(ap_load_release(&s), 1) << "never used";
  ap_load_state t = Fresh();
  for (int i = 0; i < 5; ++i) ap_load_call_start(&t);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ap_load_call_end(&t), 0);
  EXPECT_EQ(ap_load_release(&t), 1) << "every call ended before";
}

TEST(LoadLifetime, TheLastEndAfterTheReleaseFrees) {
  ap_load_state s = Fresh();
  for (int i = 0; i < 4; ++i) ap_load_call_start(&s);
  EXPECT_EQ(ap_load_call_end(&s), 0) << "ended before the release";
  EXPECT_EQ(ap_load_release(&s), 0) << "3 calls in flight";
  EXPECT_EQ(ap_load_call_end(&s), 0);
  EXPECT_EQ(ap_load_call_finish(&s, kT0, kT0 + 2 * kMs), 0);
  double lat = 0;
  ASSERT_EQ(ap_load_latency_ns(&s, &lat), 1) << "recorded before its end";
  EXPECT_EQ(lat, 2.0 * kMs);
  EXPECT_EQ(ap_load_call_end(&s), 1) << "the last call in flight";
}

// Calls in flight end on several threads while the owner releases: in
// every round exactly one of them frees the state, after every other end
// and the release touched it (the state is a heap block, so under
// --config=asan a touch after the free, or a second free, fails).
TEST(LoadLifetime, EndsRacingTheReleaseFreeExactlyOnce) {
  constexpr int kThreads = 3, kCallsPerThread = 3, kRounds = 3000;
  std::atomic<ap_load_state*> state{nullptr};
  std::atomic<int> round{0}, done{0}, frees{0};
  std::atomic<uint64_t> bad_rounds{0};
  auto end_and_maybe_free = [&](ap_load_state* s, bool release) {
    const int last = release ? ap_load_release(s) : ap_load_call_end(s);
    if (last) {
      frees.fetch_add(1);
      std::free(s);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 1; r <= kRounds; ++r) {
        while (round.load(std::memory_order_acquire) < r) std::this_thread::yield();
        ap_load_state* s = state.load(std::memory_order_acquire);
        // A few spins of a per-thread, per-round length: the ends land
        // before, around and after the release.
        for (volatile int spin = (r * 7 + t * 13) % 64; spin > 0; --spin) {
        }
        for (int c = 0; c < kCallsPerThread; ++c) end_and_maybe_free(s, false);
        done.fetch_add(1, std::memory_order_acq_rel);
      }
    });
  }
  for (int r = 1; r <= kRounds; ++r) {
    auto* s = static_cast<ap_load_state*>(std::malloc(sizeof(ap_load_state)));
    ASSERT_NE(s, nullptr);
    ap_load_init(s);
    for (int c = 0; c < kThreads * kCallsPerThread; ++c) ap_load_call_start(s);
    const int frees_before = frees.load();
    state.store(s, std::memory_order_release);
    round.store(r, std::memory_order_release);
    for (volatile int spin = (r * 11) % 64; spin > 0; --spin) {
    }
    end_and_maybe_free(s, true);
    while (done.load(std::memory_order_acquire) < r * kThreads) std::this_thread::yield();
    if (frees.load() != frees_before + 1) bad_rounds.fetch_add(1);
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad_rounds.load(), 0u);
  EXPECT_EQ(frees.load(), kRounds);
}

TEST(LoadState, NegativeOutstandingReadsAsZero) {
  ap_load_state s = Fresh();
  ap_load_call_end(&s);  // more ends than starts: misuse
  EXPECT_EQ(ap_load_outstanding(&s), 0);
}

TEST(PeakEwma, FirstSampleSetsTheValue) {
  ap_load_state s = Fresh();
  double lat = 7;
  EXPECT_EQ(ap_load_latency_ns(&s, &lat), 0);
  EXPECT_EQ(lat, 0);
  ASSERT_EQ(ap_load_record_latency(&s, 3 * kMs, kT0, nullptr), AP_OK);
  ASSERT_EQ(ap_load_latency_ns(&s, &lat), 1);
  EXPECT_EQ(lat, 3.0 * kMs);
}

TEST(PeakEwma, AHigherSampleReplacesAtOnce) {
  ap_load_state s = Fresh();
  ap_load_record_latency(&s, 2 * kMs, kT0, nullptr);
  // 1 ms later: a plain EWMA would barely move (w = exp(-1e-4)).
  ap_load_record_latency(&s, 50 * kMs, kT0 + kMs, nullptr);
  double lat = 0;
  ap_load_latency_ns(&s, &lat);
  EXPECT_EQ(lat, 50.0 * kMs);
}

TEST(PeakEwma, ALowerSampleDecaysWithExpMinusDtOverTau) {
  // tau = 10 s: dt = 10 s gives w = 1/e, dt = 1 s gives w = exp(-0.1).
  ap_load_state s = Fresh();
  ap_load_record_latency(&s, 100 * kMs, kT0, nullptr);
  ap_load_record_latency(&s, 0, kT0 + 10 * kS, nullptr);
  double lat = 0;
  ap_load_latency_ns(&s, &lat);
  const double w10 = std::exp(-1.0);
  EXPECT_NEAR(lat, 100.0 * kMs * w10, 1e-6 * kMs);  // 36.788 ms
  EXPECT_NEAR(lat / kMs, 36.7879, 1e-4);

  ap_load_record_latency(&s, 10 * kMs, kT0 + 11 * kS, nullptr);
  const double w1 = std::exp(-0.1);
  const double expected = 100.0 * kMs * w10 * w1 + 10.0 * kMs * (1 - w1);
  ap_load_latency_ns(&s, &lat);
  EXPECT_NEAR(lat, expected, 1e-3);
  EXPECT_NEAR(lat / kMs, 34.2387, 1e-4);
}

TEST(PeakEwma, SamplesAtTheSameInstantDoNotMoveALowerValue) {
  // dt = 0: w = 1, a lower sample changes nothing (only a peak does).
  ap_load_state s = Fresh();
  ap_load_record_latency(&s, 20 * kMs, kT0, nullptr);
  ap_load_record_latency(&s, 1 * kMs, kT0, nullptr);
  double lat = 0;
  ap_load_latency_ns(&s, &lat);
  EXPECT_EQ(lat, 20.0 * kMs);
  // A sample stamped before the last one (another thread's clock read) is
  // a dt of 0 too, never a negative one.
  ap_load_record_latency(&s, 1 * kMs, kT0 - kS, nullptr);
  ap_load_latency_ns(&s, &lat);
  EXPECT_EQ(lat, 20.0 * kMs);
}

TEST(PeakEwma, BadInputIsRejected) {
  ap_load_state s = Fresh();
  ap_error err;
  EXPECT_EQ(ap_load_record_latency(&s, -1, kT0, &err), AP_EINVAL);
  EXPECT_NE(std::strstr(err.message, "latency_ns"), nullptr) << err.message;
  EXPECT_EQ(ap_load_record_latency(nullptr, 1, kT0, &err), AP_EINVAL);
  double lat = 5;
  EXPECT_EQ(ap_load_latency_ns(&s, &lat), 0);
  EXPECT_EQ(ap_load_latency_ns(nullptr, &lat), 0);
  EXPECT_EQ(ap_load_latency_ns(&s, nullptr), 0);
}

TEST(Utilization, SmoothsWithA500MsTimeConstant) {
  ap_load_state s = Fresh();
  double u = 0;
  EXPECT_EQ(ap_load_utilization(&s, kT0, &u), 0);
  EXPECT_EQ(u, -1);
  ASSERT_EQ(ap_load_record_utilization(&s, 0.2, kT0, nullptr), AP_OK);
  ASSERT_EQ(ap_load_utilization(&s, kT0, &u), 1);
  EXPECT_EQ(u, 0.2);
  // 500 ms later, 0.8: 0.2/e + 0.8 (1 - 1/e) = 0.5793
  ap_load_record_utilization(&s, 0.8, kT0 + 500 * kMs, nullptr);
  ap_load_utilization(&s, kT0 + 500 * kMs, &u);
  const double w = std::exp(-1.0);
  EXPECT_NEAR(u, 0.2 * w + 0.8 * (1 - w), 1e-12);
  EXPECT_NEAR(u, 0.579272, 1e-6);
  // Unlike latency, a higher value does not replace: 50 ms later, 1.0.
  ap_load_record_utilization(&s, 1.0, kT0 + 550 * kMs, nullptr);
  double u2 = 0;
  ap_load_utilization(&s, kT0 + 550 * kMs, &u2);
  const double w50 = std::exp(-0.1);
  EXPECT_NEAR(u2, u * w50 + 1.0 * (1 - w50), 1e-12);
  EXPECT_LT(u2, 0.7);
}

TEST(Utilization, StaleAfterFiveSeconds) {
  ap_load_state s = Fresh();
  ap_load_record_utilization(&s, 0.9, kT0, nullptr);
  double u = 0;
  EXPECT_EQ(ap_load_utilization(&s, kT0 + 5 * kS, &u), 1) << "5 s: not stale";
  EXPECT_EQ(u, 0.9);
  EXPECT_EQ(ap_load_utilization(&s, kT0 + 5 * kS + 1, &u), 0) << "stale";
  EXPECT_EQ(u, -1);
  // A fresh report makes it usable again, blended with the old average.
  ap_load_record_utilization(&s, 0.1, kT0 + 6 * kS, nullptr);
  EXPECT_EQ(ap_load_utilization(&s, kT0 + 6 * kS, &u), 1);
  EXPECT_NEAR(u, 0.9 * std::exp(-12.0) + 0.1 * (1 - std::exp(-12.0)), 1e-12);
}

TEST(Utilization, BadInputIsRejected) {
  ap_load_state s = Fresh();
  ap_error err;
  for (double bad : {-1.0, -0.001, double(NAN), double(INFINITY), -double(INFINITY)}) {
    EXPECT_EQ(ap_load_record_utilization(&s, bad, kT0, &err), AP_EINVAL)
        << bad;
    EXPECT_NE(std::strstr(err.message, "utilization"), nullptr);
  }
  double u = 0;
  EXPECT_EQ(ap_load_utilization(&s, kT0, &u), 0) << "nothing was recorded";
  EXPECT_EQ(ap_load_record_utilization(nullptr, 0.5, kT0, &err), AP_EINVAL);
  EXPECT_EQ(ap_load_record_utilization(&s, 3.0, kT0, &err), AP_OK)
      << "above 1 is kept (the cost caps it)";
  EXPECT_EQ(ap_load_utilization(nullptr, kT0, &u), 0);
  EXPECT_EQ(ap_load_utilization(&s, kT0, nullptr), 0);
}

TEST(Cost, OutstandingIsTheCallCount) {
  ap_load_state s = Fresh();
  ap_load_record_latency(&s, 9 * kMs, kT0, nullptr);
  ap_load_record_utilization(&s, 0.5, kT0, nullptr);
  for (int i = 0; i < 4; ++i) ap_load_call_start(&s);
  double c = -1;
  EXPECT_EQ(ap_load_cost(&s, AP_PICK_OUTSTANDING, kT0, &c),
            AP_PICK_OUTSTANDING);
  EXPECT_EQ(c, 4.0);
}

TEST(Cost, PeakEwmaIsLatencyTimesOutstandingPlusOne) {
  ap_load_state s = Fresh();
  ap_load_call_start(&s);
  ap_load_call_start(&s);
  double c = -1;
  EXPECT_EQ(ap_load_cost(&s, AP_PICK_PEAK_EWMA, kT0, &c), AP_PICK_OUTSTANDING)
      << "no sample yet: outstanding";
  EXPECT_EQ(c, 2.0);
  ap_load_record_latency(&s, 4 * kMs, kT0, nullptr);
  EXPECT_EQ(ap_load_cost(&s, AP_PICK_PEAK_EWMA, kT0, &c), AP_PICK_PEAK_EWMA);
  EXPECT_EQ(c, 4.0 * kMs * 3);
}

TEST(Cost, OrcaIsOutstandingPlusOneOverOneMinusU) {
  ap_load_state s = Fresh();
  ap_load_call_start(&s);
  double c = -1;
  EXPECT_EQ(ap_load_cost(&s, AP_PICK_ORCA, kT0, &c), AP_PICK_OUTSTANDING)
      << "no report: outstanding";
  EXPECT_EQ(c, 1.0);
  ap_load_record_utilization(&s, 0.5, kT0, nullptr);
  EXPECT_EQ(ap_load_cost(&s, AP_PICK_ORCA, kT0, &c), AP_PICK_ORCA);
  EXPECT_DOUBLE_EQ(c, 2.0 / 0.5);
  // Stale at 5 s + 1 ns: back to outstanding.
  EXPECT_EQ(ap_load_cost(&s, AP_PICK_ORCA, kT0 + 5 * kS + 1, &c),
            AP_PICK_OUTSTANDING);
  EXPECT_EQ(c, 1.0);
}

TEST(Cost, OrcaCapsUtilizationAt095) {
  for (double u : {0.95, 0.99, 1.0, 7.0}) {
    ap_load_state s = Fresh();
    ap_load_record_utilization(&s, u, kT0, nullptr);
    double c = -1;
    EXPECT_EQ(ap_load_cost(&s, AP_PICK_ORCA, kT0, &c), AP_PICK_ORCA);
    EXPECT_NEAR(c, 20.0, 1e-9) << u;  // (0 + 1) / (1 - 0.95)
    EXPECT_TRUE(std::isfinite(c));
  }
  ap_load_state idle = Fresh();
  ap_load_record_utilization(&idle, 0.0, kT0, nullptr);
  double c = -1;
  EXPECT_EQ(ap_load_cost(&idle, AP_PICK_ORCA, kT0, &c), AP_PICK_ORCA);
  EXPECT_EQ(c, 1.0);
}

TEST(Cost, BadArgumentsAreRejected) {
  ap_load_state s = Fresh();
  double c = 5;
  EXPECT_EQ(ap_load_cost(nullptr, AP_PICK_ORCA, kT0, &c), AP_EINVAL);
  EXPECT_EQ(c, 0);
  c = 5;
  EXPECT_EQ(ap_load_cost(&s, AP_PICK_METRIC_COUNT, kT0, &c), AP_EINVAL);
  EXPECT_EQ(c, 0);
  EXPECT_EQ(ap_load_cost(&s, AP_PICK_ORCA, kT0, nullptr), AP_EINVAL);
  c = 5;
  EXPECT_EQ(ap_load_scale(nullptr, AP_PICK_ORCA, kT0, &c), AP_EINVAL);
  EXPECT_EQ(c, 1);
  EXPECT_EQ(ap_load_scale(&s, AP_PICK_METRIC_COUNT, kT0, &c), AP_EINVAL);
  EXPECT_EQ(ap_load_scale(&s, AP_PICK_ORCA, kT0, nullptr), AP_EINVAL);
  double a = 5, b = 5;
  EXPECT_EQ(ap_load_pair_scale(&s, nullptr, AP_PICK_ORCA, kT0, &a, &b),
            AP_EINVAL);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(ap_load_pair_scale(&s, &s, AP_PICK_ORCA, kT0, nullptr, &b),
            AP_EINVAL);
  EXPECT_EQ(ap_load_pair_scale(&s, &s, static_cast<ap_pick_metric>(9), kT0, &a,
                               &b),
            AP_EINVAL);
}

TEST(Scale, IsTheMultiplierOfOutstandingPlusOne) {
  ap_load_state s = Fresh();
  ap_load_call_start(&s);
  double m = 0;
  EXPECT_EQ(ap_load_scale(&s, AP_PICK_OUTSTANDING, kT0, &m),
            AP_PICK_OUTSTANDING);
  EXPECT_EQ(m, 1);
  EXPECT_EQ(ap_load_scale(&s, AP_PICK_PEAK_EWMA, kT0, &m), AP_PICK_OUTSTANDING);
  EXPECT_EQ(m, 1);
  ap_load_record_latency(&s, 3 * kMs, kT0, nullptr);
  EXPECT_EQ(ap_load_scale(&s, AP_PICK_PEAK_EWMA, kT0, &m), AP_PICK_PEAK_EWMA);
  EXPECT_EQ(m, 3.0 * kMs);
  ap_load_record_utilization(&s, 0.75, kT0, nullptr);
  EXPECT_EQ(ap_load_scale(&s, AP_PICK_ORCA, kT0, &m), AP_PICK_ORCA);
  EXPECT_DOUBLE_EQ(m, 4.0);
  EXPECT_EQ(ap_load_scale(&s, AP_PICK_ORCA, kT0 + 5 * kS + 1, &m),
            AP_PICK_OUTSTANDING);
  EXPECT_EQ(m, 1);
}

TEST(PairScale, BothInOneUnitOrBothOne) {
  ap_load_state reporting = Fresh(), silent = Fresh();
  ap_load_record_utilization(&reporting, 0.5, kT0, nullptr);
  double a = 0, b = 0;
  EXPECT_EQ(
      ap_load_pair_scale(&reporting, &silent, AP_PICK_ORCA, kT0, &a, &b),
      AP_PICK_OUTSTANDING);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  ap_load_record_utilization(&silent, 0.0, kT0, nullptr);
  EXPECT_EQ(
      ap_load_pair_scale(&reporting, &silent, AP_PICK_ORCA, kT0, &a, &b),
      AP_PICK_ORCA);
  EXPECT_DOUBLE_EQ(a, 2.0);
  EXPECT_EQ(b, 1.0);
  // Stale on one side only: both fall back.
  ap_load_record_utilization(&silent, 0.0, kT0 + 4 * kS, nullptr);
  EXPECT_EQ(ap_load_pair_scale(&reporting, &silent, AP_PICK_ORCA,
                               kT0 + 6 * kS, &a, &b),
            AP_PICK_OUTSTANDING);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  // peakEwma likewise.
  ap_load_record_latency(&reporting, 2 * kMs, kT0, nullptr);
  EXPECT_EQ(
      ap_load_pair_scale(&reporting, &silent, AP_PICK_PEAK_EWMA, kT0, &a, &b),
      AP_PICK_OUTSTANDING);
  ap_load_record_latency(&silent, 10 * kMs, kT0, nullptr);
  EXPECT_EQ(
      ap_load_pair_scale(&reporting, &silent, AP_PICK_PEAK_EWMA, kT0, &a, &b),
      AP_PICK_PEAK_EWMA);
  EXPECT_EQ(a, 2.0 * kMs);
  EXPECT_EQ(b, 10.0 * kMs);
}

// With equal multipliers the scaled comparison is the fair one, draw for
// draw (the outstanding metric's pick is unchanged by construction).
TEST(ScaledP2C, EqualScalesChooseAsTheFairComparison) {
  ap_rng r1, r2, loads;
  ap_rng_seed(&r1, 42);
  ap_rng_seed(&r2, 42);
  ap_rng_seed(&loads, 7);
  const double weights[] = {1.0, 0.5, 0.25, 2.0, 1.00005};
  int disagreements = 0, b_wins = 0;
  for (int i = 0; i < 20000; ++i) {
    ap_candidate a{double(ap_rng_below(&loads, 90)), weights[i % 5], 1};
    ap_candidate b{double(ap_rng_below(&loads, 90)), weights[(i / 5) % 5], 1};
    const double scale = 1.0 + (i % 3);
    const int fair = ap_p2c_choose_fair(&a, &b, &r1);
    const int scaled = ap_p2c_choose_fair_scaled(&a, scale, &b, scale, &r2);
    disagreements += fair != scaled;
    b_wins += scaled;
  }
  EXPECT_EQ(disagreements, 0);
  EXPECT_GT(b_wins, 5000) << "the comparison is not one-sided";
  EXPECT_LT(b_wins, 15000);
}

TEST(ScaledP2C, ComparesOutstandingPlusOneTimesScale) {
  // Equal weights, no generator: (la + 1) sa vs (lb + 1) sb.
  ap_candidate idle{0, 1, 1}, busy{3, 1, 1};
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&idle, 10.0, &busy, 2.0, nullptr), 1)
      << "1 x 10 > 4 x 2";
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&idle, 3.0, &busy, 2.0, nullptr), 0)
      << "1 x 3 < 4 x 2";
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&idle, 8.0, &busy, 2.0, nullptr), 0)
      << "a tie goes to a";
  // Unequal weights without a generator: the heavier count is scaled by
  // w_light / w_heavy: (4 x 0.5 + 1) x 2 = 6 < (1 + 1) x 4 = 8.
  ap_candidate heavy{4, 2, 1}, light{1, 1, 1};
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&light, 4.0, &heavy, 2.0, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&heavy, 2.0, &light, 4.0, nullptr), 0);
}

TEST(ScaledP2C, HealthFirstAndBadInputsLose) {
  ap_candidate good{5, 1, 1}, sick{0, 1, 0};
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&sick, 1.0, &good, 100.0, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&good, 100.0, &sick, 1.0, nullptr), 0);
  ap_candidate idle{0, 1, 1};
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&idle, NAN, &good, 1.0, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&idle, -1.0, &good, 1.0, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&good, 1.0, &idle, NAN, nullptr), 0);
  EXPECT_EQ(ap_p2c_choose_fair_scaled(nullptr, 1.0, &good, 1.0, nullptr), 1);
  EXPECT_EQ(ap_p2c_choose_fair_scaled(&good, 1.0, nullptr, 1.0, nullptr), 0);
  EXPECT_EQ(ap_p2c_choose_fair_scaled(nullptr, 1.0, nullptr, 1.0, nullptr), 0);
}

// Weighted shares under a metric: three slots of weights 2, 1, 1 with the
// same multiplier and calls that finish at once (outstanding 0 at every
// pick) share calls 2:1:1, as under the outstanding metric. 40,000 picks:
// the share's standard deviation is 0.0025, the tolerance 0.02.
TEST(ScaledP2C, WeightsKeepTheirShareUnderEqualScales) {
  const double w[] = {2, 1, 1};
  ap_pick_table* table = nullptr;
  ASSERT_EQ(ap_pick_table_create(w, 3, &table, nullptr), AP_OK);
  ap_rng rng;
  ap_rng_seed(&rng, 1234);
  int counts[3] = {0, 0, 0};
  const int kPicks = 40000;
  for (int i = 0; i < kPicks; ++i) {
    size_t best = ap_pick1(table, &rng);
    const size_t c = ap_pick1(table, &rng);
    if (c != best) {
      ap_candidate a{0, w[best], 1}, b{0, w[c], 1};
      if (ap_p2c_choose_fair_scaled(&a, 1.25, &b, 1.25, &rng) == 1) best = c;
    }
    ++counts[best];
  }
  ap_pick_table_destroy(table);
  EXPECT_NEAR(counts[0] / double(kPicks), 0.5, 0.02);
  EXPECT_NEAR(counts[1] / double(kPicks), 0.25, 0.02);
  EXPECT_NEAR(counts[2] / double(kPicks), 0.25, 0.02);
}

// Concurrent recorders: the count stays exact (atomic add) and the
// averages stay within the samples' range (plain atomic stores: a sample
// may be lost, a value never torn).
TEST(Clock, CoarseIsTheSameClockAtMostATickBehind) {
  const int64_t fine0 = ap_load_now_ns();
  const int64_t coarse = ap_load_coarse_now_ns();
  const int64_t fine1 = ap_load_now_ns();
  EXPECT_GT(fine0, 0);
  EXPECT_LE(fine0, fine1);
  EXPECT_LE(coarse, fine1);
  EXPECT_GT(coarse, fine0 - 100 * kMs) << "at most a tick (<= 10 ms) behind";
}

TEST(LoadState, ConcurrentRecordersKeepCountsAndRange) {
  ap_load_state s = Fresh();
  constexpr int kThreads = 4, kCalls = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&s, t] {
      for (int i = 0; i < kCalls; ++i) {
        ap_load_call_start(&s);
        const int64_t start = kT0 + i * kMs;
        ap_load_call_finish(&s, start, start + (1 + t) * kMs);
        ap_load_record_utilization(&s, 0.25 * t, start, nullptr);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ap_load_outstanding(&s), 0);
  double lat = 0, u = 0;
  ASSERT_EQ(ap_load_latency_ns(&s, &lat), 1);
  EXPECT_GE(lat, 1.0 * kMs);
  EXPECT_LE(lat, 4.0 * kMs);
  ASSERT_EQ(ap_load_utilization(&s, kT0 + kCalls * kMs, &u), 1);
  EXPECT_GE(u, 0.0);
  EXPECT_LE(u, 0.75);
}

}  // namespace
