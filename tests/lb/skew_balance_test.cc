// The skew balance (pickMetric orca, clientSkewBalance) through real
// channels to real servers on 127.0.0.1 that send ORCA trailers: the rate
// each server reports (rps_fractional, which gRPC 1.51 does not parse) is
// read from the raw trailer and shown per endpoint; a client whose members
// report that nobody else calls them widens to the whole ring; one whose
// members report heavy traffic from others probes and narrows back; a
// member that reports high utilization loses weight. Controls: the same
// with clientSkewBalance false and with pickMetric outstanding change
// nothing. Waits are bounded polls for a state; controls run at least as
// many calls as the mechanism needed.
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

// A serialized OrcaLoadReport: cpu_utilization (field 1) and
// rps_fractional (field 6), each a little-endian double after its tag.
std::string OrcaReport(double cpu, double rps) {
  std::string out;
  for (auto [tag, v] : {std::pair<char, double>{'\x09', cpu}, {'\x31', rps}}) {
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(bits));
    out.push_back(tag);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
  }
  return out;
}

std::vector<std::unique_ptr<Backend>> Reporting(const std::vector<double>& cpu,
                                                const std::vector<double>& rps) {
  std::vector<std::unique_ptr<Backend>> out;
  for (size_t i = 0; i < cpu.size(); ++i) {
    out.push_back(std::make_unique<Backend>(
        0, Trailers{{"endpoint-load-metrics-bin", OrcaReport(cpu[i], rps[i])}}));
  }
  return out;
}

// Calls on `channel` from a thread until stopped; counts them.
class Load {
 public:
  explicit Load(TestChannel* channel)
      : thread_([this, channel] {
          while (!stop_.load()) {
            channel->RunLoad(20, 2);
            calls_ += 20;
          }
        }) {}
  ~Load() { Stop(); }
  int Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return calls_.load();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> calls_{0};
  std::thread thread_;
};

std::string TiledConfig(const std::string& extra) {
  // 8 servers, client 0 of 4, minAperture 2: its window is servers 0 and 1
  // of the ring, nobody else's.
  return Config(R"({"mode":"smooth","minAperture":2,"peerIndex":0,"peerCount":4,)"
                R"("eagerConnect":true)" + extra + "}");
}

int BackendsServing(const std::vector<std::unique_ptr<Backend>>& backends) {
  int n = 0;
  for (const auto& b : backends) n += b->calls() > 0 ? 1 : 0;
  return n;
}

TEST(SkewBalance, AClientAloneOnItsServersWidensToTheWholeRing) {
  // Every server says it serves 1 call/s: whatever this client sends, the
  // others send next to nothing. Distinct cpu values check what is read.
  auto backends = Reporting({0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17},
                            {1, 1, 1, 1, 1, 1, 1, 1});
  TestChannel channel("skew-alone", TiledConfig(R"(,"pickMetric":"orca")"), false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 2));
  int needed = 0;
  {
    Load load(&channel);
    // A probe one server wider, then the whole ring.
    const bool widened = WaitForState(
        channel.target(),
        [](const StateView& s) { return s.logical_aperture == 8 && s.skew_reason == "heavy"; },
        30000);
    needed = load.Stop();
    ASSERT_TRUE(widened);
  }
  StateView s;
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  EXPECT_EQ(s.pick_metric, "orca");
  EXPECT_GT(s.skew_own_rate, 0);
  EXPECT_GT(s.skew_ratio, 8) << "the others send about nothing";
  EXPECT_EQ(s.skew_multiplier, 4) << "2 x 4 = the whole ring";
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 8));
  for (auto& b : backends) b->ResetCalls();
  ASSERT_EQ(channel.RunLoad(1600, 4), 0);
  EXPECT_EQ(BackendsServing(backends), 8);
  // Idle servers order strictly by the cpu they report, so the busiest one
  // may win only where both P2C draws are itself: 1/64 of the calls, 25
  // expected, 5 is 4 sigma below (how fast calls end, and so how often
  // the outstanding count breaks the order, depends on the machine's load).
  for (const auto& b : backends) EXPECT_GE(b->calls(), 5u) << b->address();
  // This client's rate to a member needs two of its ticks.
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& v) {
    for (const auto& e : v.endpoints) {
      if (e.own_rate < 0) return false;
    }
    return true;
  }));
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  for (const auto& e : s.endpoints) {
    EXPECT_TRUE(e.in_aperture) << e.address;
    EXPECT_EQ(e.reported_rps, 1) << e.address << ": read from the raw trailer";
    EXPECT_GE(e.own_rate, 0) << e.address;
    EXPECT_GT(e.weight_factor, 0) << e.address;
  }
  std::printf("widened after %d calls\n", needed);

  // The controls run twice as many calls and never widen.
  for (const std::string& extra :
       {std::string(R"(,"pickMetric":"orca","clientSkewBalance":false)"),
        std::string(R"(,"pickMetric":"outstanding")")}) {
    TestChannel control("skew-control", TiledConfig(extra), false);
    control.SetAddresses(Addresses(backends));
    ASSERT_TRUE(WaitAllMembersReady(control.target(), 2)) << extra;
    for (auto& b : backends) b->ResetCalls();
    ASSERT_EQ(control.RunLoad(2 * needed + 200, 2), 0) << extra;
    StateView c;
    ASSERT_TRUE(Snapshot(control.target(), &c));
    EXPECT_EQ(c.logical_aperture, 2u) << extra;
    EXPECT_EQ(c.physical_aperture, 2u) << extra;
    EXPECT_EQ(c.skew_reason, "off") << extra;
    EXPECT_EQ(BackendsServing(backends), 2) << extra;
    for (const auto& e : c.endpoints) {
      EXPECT_EQ(e.reported_rps, -1) << e.address << ": not sampled when off";
      EXPECT_EQ(e.weight_factor, 1) << e.address;
    }
  }
}

TEST(SkewBalance, AClientBesideHeavyOthersProbesAndNarrowsBack) {
  // The servers report 100,000 calls/s: the others are far heavier.
  auto backends = Reporting(std::vector<double>(8, 0.3), std::vector<double>(8, 100000));
  TestChannel channel("skew-light", TiledConfig(R"(,"pickMetric":"orca")"), false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 2));
  Load load(&channel);
  // Its windows tile the ring: it probes, learns, narrows back, remembers.
  const bool remembered = WaitForState(
      channel.target(),
      [](const StateView& s) { return s.skew_reason == "remembered" && s.logical_aperture == 2; },
      30000);
  load.Stop();
  ASSERT_TRUE(remembered);
  StateView s;
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  EXPECT_GT(s.skew_others_rate, 1000);
  EXPECT_LT(s.skew_ratio, 0.1);
  EXPECT_EQ(s.skew_multiplier, 1);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 2));
  for (auto& b : backends) b->ResetCalls();
  ASSERT_EQ(channel.RunLoad(400, 2), 0);
  EXPECT_EQ(BackendsServing(backends), 2) << "back on its own two";
}

// Mesh of 4: one server reports 0.9, the others 0.3; the share of calls
// the busy one gets out of 2,000.
std::string MeshConfig(const std::string& extra) {
  return Config(R"({"mode":"mesh","eagerConnect":true,"pickMetric":"orca")" + extra + "}");
}

double BusyShare(const std::string& name, const std::string& extra,
                 std::vector<std::unique_ptr<Backend>>& backends, StateView* after,
                 TestChannel** keep = nullptr) {
  auto* channel_ptr = new TestChannel(name, MeshConfig(extra), false);
  std::unique_ptr<TestChannel> owned(channel_ptr);
  TestChannel& channel = *channel_ptr;
  channel.SetAddresses(Addresses(backends));
  EXPECT_TRUE(WaitAllMembersReady(channel.target(), 4));
  EXPECT_EQ(channel.RunLoad(100, 2), 0);  // every member reports
  if (extra.empty()) {
    Load load(&channel);
    EXPECT_TRUE(WaitForState(
        channel.target(),
        [&](const StateView& s) {
          const EndpointView* e = s.Find(backends[0]->address());
          return e != nullptr && e->weight_factor < 0.25;
        },
        30000));
  }
  for (auto& b : backends) b->ResetCalls();
  EXPECT_EQ(channel.RunLoad(2000, 4), 0);
  EXPECT_TRUE(Snapshot(channel.target(), after));
  uint64_t total = 0;
  for (auto& b : backends) total += b->calls();
  if (keep != nullptr) *keep = owned.release();
  return static_cast<double>(backends[0]->calls()) / total;
}

TEST(SkewBalance, AMemberReportingHighUtilizationLosesWeight) {
  auto backends = Reporting({0.9, 0.3, 0.3, 0.3}, {100, 100, 100, 100});
  StateView on, off;
  TestChannel* kept = nullptr;
  const double with = BusyShare("skew-weights-on", "", backends, &on, &kept);
  std::unique_ptr<TestChannel> channel(kept);
  const double without =
      BusyShare("skew-weights-off", R"(,"clientSkewBalance":false)", backends, &off);
  std::printf("busy member's share: %.3f with the balance, %.3f without\n", with, without);
  // Without: the orca cost alone, about its 1/16 of self-draws (6%). With:
  // its weight at most a quarter of the others' (about 1.3% of draws).
  EXPECT_LT(with, without / 2);
  EXPECT_EQ(on.skew_reason, "fixed_width") << "mesh has no window to widen";
  for (const auto& e : on.endpoints) {
    if (e.address == backends[0]->address()) {
      EXPECT_LT(e.weight_factor, 0.25);
    } else {
      EXPECT_GT(e.weight_factor, 1) << e.address;
    }
  }
  for (const auto& e : off.endpoints) EXPECT_EQ(e.weight_factor, 1) << e.address;
  // Turned off by a config update: every factor back to 1 at once.
  channel->SetAddresses(Addresses(backends), MeshConfig(R"(,"clientSkewBalance":false)"));
  EXPECT_TRUE(WaitForState(channel->target(), [](const StateView& s) {
    if (s.skew_reason != "off") return false;
    for (const auto& e : s.endpoints) {
      if (e.weight_factor != 1) return false;
    }
    return true;
  }));
}

}  // namespace
}  // namespace aperture_test
