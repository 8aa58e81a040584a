// End-to-end tests of the aperture policy through real channels to real
// servers on 127.0.0.1: subsets, pick weights, connections, updates.
#include <math.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

using oracle::Mode;

// Continuous mode, 20 backends, client 1 of 3 with minAperture 5: calls go
// only to the members, in proportion to their pick weights, over exactly
// one connection per member.
TEST(AperturePolicy, CallsReachOnlyMembersInProportionToPickWeights) {
  auto backends = StartBackends(20);
  auto addresses = Addresses(backends);
  TestChannel channel("subset-weights", Config(
      "{\"mode\":\"continuous\",\"peerIndex\":1,\"peerCount\":3,\"minAperture\":5,"
      "\"eagerConnect\":true}"));
  channel.SetAddresses(addresses);
  auto expected = ExpectedMembers(addresses, Mode::kContinuous, 1, 3, 5);
  ASSERT_GE(expected.size(), 5u);
  ASSERT_LT(expected.size(), 20u);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), expected.size()));

  StateView state;
  ASSERT_TRUE(Snapshot(channel.target(), &state));
  EXPECT_EQ(state.physical_aperture, expected.size());
  EXPECT_EQ(state.logical_aperture, 5u);
  EXPECT_EQ(state.coordinate_source, "config");
  EXPECT_EQ(state.mode, "continuous");
  EXPECT_EQ(state.widened, 0u);
  for (const auto& kv : expected) {
    const EndpointView* e = state.Find(kv.first);
    ASSERT_NE(e, nullptr) << kv.first;
    EXPECT_TRUE(e->in_aperture) << kv.first;
    EXPECT_NEAR(e->pick_weight, kv.second, 1e-9) << kv.first;
  }

  // Sequential calls: no load, so P2C keeps the first weighted draw and the
  // counts follow the pick weights.
  const int kCalls = 3000;
  for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(channel.Call().ok());
  double total_weight = 0;
  for (const auto& kv : expected) total_weight += kv.second;
  uint64_t seen = 0;
  for (const auto& b : backends) {
    auto it = expected.find(b->address());
    if (it == expected.end()) {
      EXPECT_EQ(b->calls(), 0u) << "non-member " << b->address();
      EXPECT_EQ(ServerConnectionCount(b->port()), 0) << b->address();
      continue;
    }
    seen += b->calls();
    // Binomial count; 6 standard deviations plus 10 never flakes in
    // practice (p < 1e-8 per member) yet catches a wrong weighting.
    double p = it->second / total_weight;
    double mean = kCalls * p;
    double tolerance = 6 * sqrt(kCalls * p * (1 - p)) + 10;
    EXPECT_NEAR(static_cast<double>(b->calls()), mean, tolerance)
        << b->address() << " pick weight " << it->second;
    EXPECT_EQ(ServerConnectionCount(b->port()), 1) << b->address();
  }
  EXPECT_EQ(seen, static_cast<uint64_t>(kCalls));
  ASSERT_TRUE(Snapshot(channel.target(), &state));
  uint64_t picks = 0;
  for (const auto& e : state.endpoints) picks += e.picks;
  EXPECT_EQ(picks, static_cast<uint64_t>(kCalls));
}

// Configured per-address weights change the ring and the pick weights.
TEST(AperturePolicy, ConfiguredWeightsShiftTraffic) {
  auto backends = StartBackends(6);
  auto addresses = Addresses(backends);
  std::vector<double> weights = {4, 1, 1, 1, 1, 1};
  TestChannel channel("weighted", Config(
      "{\"mode\":\"mesh\",\"eagerConnect\":true,\"weights\":{\"" +
      addresses[0] + "\":4}}"));
  channel.SetAddresses(addresses);
  auto expected =
      ExpectedMembers(addresses, Mode::kMesh, 0, 1, 12, &weights);
  ASSERT_EQ(expected.size(), 6u);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 6));
  const int kCalls = 1800;
  for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(channel.Call().ok());
  double total = 0;
  for (const auto& kv : expected) total += kv.second;
  for (const auto& b : backends) {
    double p = expected[b->address()] / total;
    double tolerance = 6 * sqrt(kCalls * p * (1 - p)) + 10;
    EXPECT_NEAR(static_cast<double>(b->calls()), kCalls * p, tolerance)
        << b->address();
  }
  // The heavy one gets about 4/9 of the calls, the others about 1/9.
  EXPECT_GT(backends[0]->calls(), 2 * backends[1]->calls());
}

std::set<std::string> MemberSet(const std::map<std::string, double>& m) {
  std::set<std::string> out;
  for (const auto& kv : m) out.insert(kv.first);
  return out;
}

size_t CountNotIn(const std::set<std::string>& a, const std::set<std::string>& b) {
  size_t n = 0;
  for (const auto& x : a) n += b.count(x) == 0 ? 1 : 0;
  return n;
}

// Resolver updates that add, remove or reorder endpoints create and destroy
// subchannels only for the endpoints that enter or leave the aperture.
TEST(AperturePolicy, UpdatesMoveOnlyTheDelta) {
  auto backends = StartBackends(16);
  auto all = Addresses(backends);
  auto expected_members = [](const std::vector<std::string>& addresses) {
    return ExpectedMembers(addresses, Mode::kContinuous, 0, 2, 4);
  };
  TestChannel channel("updates", Config(
      "{\"mode\":\"continuous\",\"peerIndex\":0,\"peerCount\":2,\"minAperture\":4,"
      "\"eagerConnect\":true}"));
  std::vector<std::string> current(all.begin(), all.begin() + 10);
  channel.SetAddresses(current);
  auto members = MemberSet(expected_members(current));
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), members.size()));
  StateView before;
  ASSERT_TRUE(Snapshot(channel.target(), &before));
  EXPECT_EQ(before.subchannels_created, members.size());
  EXPECT_EQ(before.subchannels_destroyed, 0u);

  auto apply = [&](const std::vector<std::string>& next) {
    StateView s0;
    EXPECT_TRUE(Snapshot(channel.target(), &s0));
    channel.SetAddresses(next);
    auto next_members = MemberSet(expected_members(next));
    EXPECT_TRUE(WaitForState(channel.target(), [&](const StateView& s) {
      return s.resolver_updates > s0.resolver_updates;
    }));
    StateView s1;
    EXPECT_TRUE(Snapshot(channel.target(), &s1));
    EXPECT_EQ(s1.subchannels_created - s0.subchannels_created,
              CountNotIn(next_members, members));
    EXPECT_EQ(s1.subchannels_destroyed - s0.subchannels_destroyed,
              CountNotIn(members, next_members));
    std::vector<std::string> got = s1.Members();
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), next_members);
    members = next_members;
    EXPECT_TRUE(WaitAllMembersReady(channel.target(), members.size()));
  };

  // Reorder: the same set in another order moves nothing.
  std::vector<std::string> shuffled = current;
  std::mt19937 rng(7);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::string fingerprint = before.fingerprint;
  apply(shuffled);
  StateView after_shuffle;
  ASSERT_TRUE(Snapshot(channel.target(), &after_shuffle));
  EXPECT_EQ(after_shuffle.fingerprint, fingerprint);
  EXPECT_EQ(after_shuffle.subchannels_created, before.subchannels_created);
  EXPECT_EQ(after_shuffle.subchannels_destroyed, 0u);
  // Add six endpoints, then remove four of the original ones.
  std::vector<std::string> grown = all;
  std::shuffle(grown.begin(), grown.end(), rng);
  apply(grown);
  std::vector<std::string> shrunk(all.begin() + 4, all.end());
  apply(shrunk);
  // Every member still has exactly one connection on its server.
  for (const auto& b : backends) {
    int expected = members.count(b->address()) != 0 ? 1 : 0;
    EXPECT_TRUE(WaitFor([&] { return ServerConnectionCount(b->port()) == expected; }))
        << b->address() << " connections " << ServerConnectionCount(b->port());
  }
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(channel.Call().ok());
  for (const auto& b : backends) {
    if (members.count(b->address()) == 0) {
      EXPECT_EQ(b->calls(), 0u) << b->address();
    }
  }
}

// Least-loaded P2C steers calls away from a slow backend. What the slow
// one gets grows with the run's length (a call there every time its count
// in flight is no higher than the other draw's), and the run is longer on a
// loaded machine: 300 ms calls and a bound of half the fair share leave a
// wide margin (about 3 in flight per 300 ms, a 2.5 s run: some 25 calls).
TEST(AperturePolicy, SlowBackendGetsFarFewerCalls) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<Backend>(/*delay_ms=*/300));
  for (int i = 0; i < 5; ++i) backends.push_back(std::make_unique<Backend>());
  TestChannel channel("slow", Config("{\"mode\":\"mesh\",\"eagerConnect\":true}"));
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 6));
  const int kCalls = 1200;
  ASSERT_EQ(channel.RunLoad(kCalls, /*concurrency=*/12), 0);
  uint64_t fair = kCalls / 6;
  EXPECT_LT(backends[0]->calls(), fair / 2)
      << "slow backend got " << backends[0]->calls() << " of " << kCalls;
  for (size_t i = 1; i < backends.size(); ++i) {
    EXPECT_GT(backends[i]->calls(), fair / 2) << backends[i]->address();
  }
}

// A member that dies stops receiving calls, calls elsewhere keep working,
// the aperture widens to the next endpoint and narrows back on recovery.
TEST(AperturePolicy, KilledMemberWidensAndNarrowsBack) {
  auto backends = StartBackends(10);
  auto addresses = Addresses(backends);
  auto members = MemberSet(ExpectedMembers(addresses, Mode::kContinuous, 0, 5, 3));
  // minReady = every member: losing one widens by one. No retries: a call
  // attempt that fails on the stopped member would otherwise be retried
  // transparently elsewhere, counted as a failure by the policy but not by
  // the caller.
  TestChannel channel("widen", Config(
      "{\"mode\":\"continuous\",\"peerIndex\":0,\"peerCount\":5,\"minAperture\":3,"
      "\"eagerConnect\":true,\"minReady\":" +
      std::to_string(members.size()) + "}"), /*retries=*/false);
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), members.size()));
  StateView s;
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  ASSERT_EQ(s.widened, 0u);
  // Kill the member with the largest pick weight.
  const EndpointView* victim_view = nullptr;
  for (const auto& e : s.endpoints) {
    if (e.in_aperture && (victim_view == nullptr ||
                          e.pick_weight > victim_view->pick_weight)) {
      victim_view = &e;
    }
  }
  ASSERT_NE(victim_view, nullptr);
  std::string victim_address = victim_view->address;
  Backend* victim = FindBackend(backends, victim_address);
  ASSERT_NE(victim, nullptr);

  // Load runs while the member is stopped; only calls that were on the
  // stopped member may fail (the policy counts failures per endpoint).
  std::atomic<bool> stopped{false};
  std::thread killer([&] {
    while (victim->calls() < 50) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    victim->Stop();
    stopped = true;
  });
  // A 30 s deadline per call: a call must not fail on a surviving member
  // because a loaded machine stalled it past the default 5 s.
  std::string error;
  std::map<int, int> codes;
  int failures = channel.RunLoad(600, 4, &codes, &error, 30000);
  killer.join();
  ASSERT_TRUE(stopped.load());
  std::string code_list;
  for (const auto& kv : codes) {
    code_list += " code " + std::to_string(kv.first) + " x" + std::to_string(kv.second);
  }
  StateView after_kill;
  ASSERT_TRUE(Snapshot(channel.target(), &after_kill));
  for (const auto& e : after_kill.endpoints) {
    if (e.address == victim_address) {
      EXPECT_EQ(e.failures, static_cast<uint64_t>(failures)) << error << code_list;
    } else {
      EXPECT_EQ(e.failures, 0u) << e.address << ":" << code_list << " " << error;
    }
  }

  // Once the policy sees it failed, it widens by one and the victim gets
  // nothing more.
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.widened >= 1 && v.Find(victim_address)->connectivity != 2;
  }));
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  EXPECT_GE(s.widenings, 1u);
  std::string added;
  for (const auto& e : s.endpoints) {
    if (e.widened) added = e.address;
  }
  ASSERT_FALSE(added.empty());
  EXPECT_EQ(members.count(added), 0u);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.Find(added)->connectivity == 2;
  }));
  uint64_t victim_calls = victim->calls();
  ASSERT_EQ(channel.RunLoad(300, 4), 0);
  EXPECT_EQ(victim->calls(), victim_calls);
  Backend* added_backend = FindBackend(backends, added);
  ASSERT_NE(added_backend, nullptr);
  EXPECT_GT(added_backend->calls(), 0u);

  // Recovery: the aperture narrows back to its members and drops the extra
  // subchannel.
  victim->Restart();
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.widened == 0 &&
           v.Find(victim_address)->connectivity == 2 &&
           !v.Find(added)->in_aperture;
  }, 30000));
  ASSERT_TRUE(WaitFor([&] { return ServerConnectionCount(added_backend->port()) == 0; }));
  uint64_t added_calls = added_backend->calls();
  ASSERT_EQ(channel.RunLoad(300, 4), 0);
  EXPECT_EQ(added_backend->calls(), added_calls);
  EXPECT_GT(victim->calls(), victim_calls);
}

// With every endpoint down, calls fail fast with UNAVAILABLE naming why.
TEST(AperturePolicy, NothingReachableFailsWithReason) {
  auto backends = StartBackends(3);
  auto addresses = Addresses(backends);
  TestChannel channel("down", Config("{\"mode\":\"mesh\",\"eagerConnect\":true}"));
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 3));
  for (auto& b : backends) b->Stop();
  grpc::Status status;
  ASSERT_TRUE(WaitFor([&] {
    status = channel.Call(1000);
    return status.error_code() == grpc::StatusCode::UNAVAILABLE &&
           status.error_message().find("aperture: no reachable endpoint") !=
               std::string::npos;
  }, 20000)) << status.error_message();
  StateView s;
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  EXPECT_NE(s.last_status.find("no reachable endpoint"), std::string::npos);
  // Recovery.
  for (auto& b : backends) b->Restart();
  ASSERT_TRUE(WaitFor([&] { return channel.Call(1000).ok(); }, 30000));
}

// An empty address list or a resolver error gives TRANSIENT_FAILURE with a
// clear status; a later good update recovers.
TEST(AperturePolicy, EmptyListAndResolverErrorThenRecovery) {
  auto backends = StartBackends(4);
  TestChannel channel("empty", Config("{}"));
  channel.SetResolverError("lookup failed for test");
  grpc::Status status = channel.Call(2000);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(status.error_message().find("lookup failed for test"),
            std::string::npos) << status.error_message();
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitFor([&] { return channel.Call(1000).ok(); }));
  channel.SetAddresses({});
  ASSERT_TRUE(WaitFor([&] {
    grpc::Status s = channel.Call(1000);
    status = s;
    return s.error_code() == grpc::StatusCode::UNAVAILABLE;
  }));
  EXPECT_NE(status.error_message().find("aperture: empty address list"),
            std::string::npos) << status.error_message();
  StateView s;
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  EXPECT_EQ(s.subchannels_created, s.subchannels_destroyed);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitFor([&] { return channel.Call(1000).ok(); }));
}

}  // namespace
}  // namespace aperture_test
