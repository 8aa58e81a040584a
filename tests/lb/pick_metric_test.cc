// pickMetric through real channels to real servers on 127.0.0.1: under
// "orca" a server that reports high CPU utilization (the
// endpoint-load-metrics-bin trailer, read by gRPC and handed to the policy)
// gets far fewer calls than under "outstanding"; under "peakEwma" a slow
// server does, even with calls one at a time (no calls in flight to tell
// it apart). Fixed call counts, no timing asserts.
//
// Expected shares: mesh mode, 4 equal members, choiceCount 2. A pick is a
// comparison unless both draws are the same member (probability 1/16 per
// member). Under outstanding, the four fast servers share evenly (25%).
// When one member's cost is much higher, it wins almost only its 1/16 of
// self-draws: about 6%. The bounds (busy < 12% under the metric, > 15%
// under outstanding, and less than half of the outstanding share) leave
// at least 4 standard deviations (share sd <= 1% at 2,000 calls, 1.4% at
// 1,000) on each side.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

// A serialized xds.data.orca.v3.OrcaLoadReport with only field 1,
// cpu_utilization (a double, wire type 1: tag byte 0x09 and 8 bytes
// little-endian).
std::string OrcaCpuReport(double cpu) {
  uint64_t bits = 0;
  memcpy(&bits, &cpu, sizeof(bits));
  std::string out(1, '\x09');
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
  return out;
}

Trailers Orca(double cpu) {
  return {{"endpoint-load-metrics-bin", OrcaCpuReport(cpu)}};
}

// Calls each backend served, from `kCalls` calls with up to `concurrency`
// in flight, on a fresh channel with `pick_metric`.
struct LoadRun {
  std::vector<uint64_t> calls;
  uint64_t total = 0;
  StateView after;
};

LoadRun RunWith(const std::string& name, const std::string& pick_metric,
            std::vector<std::unique_ptr<Backend>>& backends, int count,
            int concurrency) {
  LoadRun run;
  TestChannel channel(
      name,
      Config("{\"mode\":\"mesh\",\"eagerConnect\":true,\"pickMetric\":\"" +
             pick_metric + "\"}"),
      /*retries=*/false);
  channel.SetAddresses(Addresses(backends));
  EXPECT_TRUE(WaitAllMembersReady(channel.target(), backends.size()));
  // Warm-up: every member answers a few calls (and reports), then count.
  EXPECT_EQ(channel.RunLoad(100, concurrency), 0);
  StateView before;
  EXPECT_TRUE(Snapshot(channel.target(), &before));
  for (auto& b : backends) b->ResetCalls();
  EXPECT_EQ(channel.RunLoad(count, concurrency), 0);
  for (auto& b : backends) {
    run.calls.push_back(b->calls());
    run.total += b->calls();
  }
  EXPECT_TRUE(Snapshot(channel.target(), &run.after));
  // The status counters stay right under every metric: nothing in flight
  // once the load is done, one pick per call, no failures.
  for (auto& b : backends) {
    const EndpointView* e0 = before.Find(b->address());
    const EndpointView* e1 = run.after.Find(b->address());
    if (e0 == nullptr || e1 == nullptr) {
      ADD_FAILURE() << "no status entry for " << b->address();
      continue;
    }
    EXPECT_EQ(e1->outstanding, 0u) << b->address();
    EXPECT_EQ(e1->picks - e0->picks, b->calls()) << b->address();
    EXPECT_EQ(e1->failures, 0u) << b->address();
  }
  return run;
}

double Share(const LoadRun& run, size_t i) {
  return run.total == 0 ? 0 : double(run.calls[i]) / double(run.total);
}

void PrintShares(const char* what, const LoadRun& run) {
  printf("%s:", what);
  for (size_t i = 0; i < run.calls.size(); ++i) printf(" %.3f", Share(run, i));
  printf("\n");
}

TEST(PickMetric, OrcaSendsFewerCallsToTheBusyServer) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<Backend>(0, Orca(0.9)));  // busy
  for (int i = 0; i < 3; ++i) {
    backends.push_back(std::make_unique<Backend>(0, Orca(0.1)));
  }
  const int kCalls = 2000;
  LoadRun outstanding = RunWith("orca-off", "outstanding", backends, kCalls, 4);
  LoadRun orca = RunWith("orca-on", "orca", backends, kCalls, 4);
  ASSERT_EQ(outstanding.total, uint64_t(kCalls));
  ASSERT_EQ(orca.total, uint64_t(kCalls));
  PrintShares("outstanding", outstanding);
  PrintShares("orca", orca);
  const double off = Share(outstanding, 0), on = Share(orca, 0);
  EXPECT_GT(off, 0.15) << "outstanding ignores the reports";
  EXPECT_LT(on, 0.12) << "busy server's share under orca";
  EXPECT_LT(on, off / 2) << "orca " << on << " vs outstanding " << off;
  EXPECT_GT(on, 0.02) << "still gets its own self-draws (about 6%)";
  for (size_t i = 1; i < backends.size(); ++i) {
    EXPECT_GT(Share(orca, i), 0.25) << backends[i]->address();
  }
  // The status shows the metric and each server's reported utilization
  // (constant reports: the average is the report), no latency under orca;
  // nothing of either under outstanding.
  EXPECT_EQ(orca.after.pick_metric, "orca");
  EXPECT_EQ(outstanding.after.pick_metric, "outstanding");
  for (size_t i = 0; i < backends.size(); ++i) {
    const EndpointView* e = orca.after.Find(backends[i]->address());
    ASSERT_NE(e, nullptr);
    EXPECT_NEAR(e->utilization, i == 0 ? 0.9 : 0.1, 1e-9) << e->address;
    EXPECT_EQ(e->latency_ewma_ms, -1) << e->address;
    const EndpointView* o = outstanding.after.Find(backends[i]->address());
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->utilization, -1) << o->address;
    EXPECT_EQ(o->latency_ewma_ms, -1) << o->address;
  }
}

// A server that reports nothing falls back to outstanding: beside servers
// that report, its comparisons use calls in flight, so it keeps about its
// even share (25%) although the others report a low utilization.
TEST(PickMetric, OrcaWithoutReportsFallsBackToOutstanding) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<Backend>(0));  // no trailer
  for (int i = 0; i < 3; ++i) {
    backends.push_back(std::make_unique<Backend>(0, Orca(0.1)));
  }
  LoadRun orca = RunWith("orca-silent", "orca", backends, 2000, 4);
  ASSERT_EQ(orca.total, 2000u);
  PrintShares("orca, first silent", orca);
  EXPECT_GT(Share(orca, 0), 0.15);
  EXPECT_LT(Share(orca, 0), 0.35);
}

TEST(PickMetric, PeakEwmaSendsFewerCallsToTheSlowServer) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<Backend>(/*delay_ms=*/20));  // slow
  for (int i = 0; i < 3; ++i) backends.push_back(std::make_unique<Backend>());
  // One call at a time: nothing is ever in flight at a pick, so the
  // outstanding metric cannot tell the slow server apart; latency can.
  const int kCalls = 1000;
  LoadRun outstanding = RunWith("ewma-off", "outstanding", backends, kCalls, 1);
  LoadRun ewma = RunWith("ewma-on", "peakEwma", backends, kCalls, 1);
  ASSERT_EQ(outstanding.total, uint64_t(kCalls));
  ASSERT_EQ(ewma.total, uint64_t(kCalls));
  PrintShares("outstanding", outstanding);
  PrintShares("peakEwma", ewma);
  const double off = Share(outstanding, 0), on = Share(ewma, 0);
  EXPECT_GT(off, 0.15) << "outstanding: no calls in flight to compare";
  EXPECT_LT(on, 0.12) << "slow server's share under peakEwma";
  EXPECT_LT(on, off / 2) << "peakEwma " << on << " vs outstanding " << off;
  // The status shows the latency average: every sample of the slow server
  // took at least its 20 ms delay, so its average is at least that.
  EXPECT_EQ(ewma.after.pick_metric, "peakEwma");
  const EndpointView* slow = ewma.after.Find(backends[0]->address());
  ASSERT_NE(slow, nullptr);
  EXPECT_GE(slow->latency_ewma_ms, 20.0);
  EXPECT_EQ(slow->utilization, -1);
  for (size_t i = 1; i < backends.size(); ++i) {
    const EndpointView* e = ewma.after.Find(backends[i]->address());
    ASSERT_NE(e, nullptr);
    EXPECT_GE(e->latency_ewma_ms, 0.0) << e->address;
  }
}

// Configured weights keep their meaning under a metric: with equal
// reports, a member of weight 2 among three of weight 1 gets about 2/5 of
// sequential calls, as under outstanding (sd 1.1% at 2,000 calls).
TEST(PickMetric, ConfiguredWeightsKeepTheirShareUnderOrca) {
  std::vector<std::unique_ptr<Backend>> backends;
  for (int i = 0; i < 4; ++i) {
    backends.push_back(std::make_unique<Backend>(0, Orca(0.3)));
  }
  TestChannel channel(
      "orca-weights",
      Config("{\"mode\":\"mesh\",\"eagerConnect\":true,\"pickMetric\":"
             "\"orca\",\"weights\":{\"" +
             backends[0]->address() + "\":2}}"),
      /*retries=*/false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 4));
  ASSERT_EQ(channel.RunLoad(100, 1), 0);
  for (auto& b : backends) b->ResetCalls();
  const int kCalls = 2000;
  ASSERT_EQ(channel.RunLoad(kCalls, 1), 0);
  EXPECT_NEAR(backends[0]->calls() / double(kCalls), 0.4, 0.06);
  for (size_t i = 1; i < backends.size(); ++i) {
    EXPECT_NEAR(backends[i]->calls() / double(kCalls), 0.2, 0.05)
        << backends[i]->address();
  }
}

}  // namespace
}  // namespace aperture_test
