// Stable mode end to end: real channels to real servers on 127.0.0.1. The
// expected members come from the core's plan (ap_stable_plan_create) over
// the keys of the real addresses, built here in the test's own address
// order: the policy must reach the same row through its own ring order,
// keys and coordinate.
#include <stdint.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/core/stable/ap_stable.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

// Members (address -> pick weight = share x members) of client
// `peer_index` of `peer_count`, peers keyed by their ordinals (a config
// coordinate has no peer list), equal weights.
std::map<std::string, double> PlanRow(const std::vector<std::string>& addresses,
                                      uint32_t peer_index, uint32_t peer_count,
                                      uint32_t min_aperture) {
  std::vector<uint64_t> endpoint_keys, peer_keys;
  for (const std::string& a : addresses) {
    endpoint_keys.push_back(ap_stable_key(a.c_str()));
  }
  for (uint32_t i = 0; i < peer_count; ++i) {
    peer_keys.push_back(ap_stable_ordinal_key(i));
  }
  ap_stable_plan* plan = nullptr;
  ap_error err;
  std::map<std::string, double> row;
  EXPECT_EQ(ap_stable_plan_create(endpoint_keys.data(), nullptr,
                                  endpoint_keys.size(), peer_keys.data(),
                                  peer_keys.size(), min_aperture, &plan, &err),
            AP_OK)
      << err.message;
  if (plan == nullptr) return row;
  const size_t count = ap_stable_plan_row_size(plan, peer_index);
  const uint32_t* members = ap_stable_plan_row_endpoints(plan, peer_index);
  const double* shares = ap_stable_plan_row_shares(plan, peer_index);
  for (size_t k = 0; k < count; ++k) {
    row[addresses[members[k]]] = shares[k] * static_cast<double>(count);
  }
  ap_stable_plan_destroy(plan);
  return row;
}

std::set<std::string> Keys(const std::map<std::string, double>& m) {
  std::set<std::string> out;
  for (const auto& kv : m) out.insert(kv.first);
  return out;
}

size_t CountNotIn(const std::set<std::string>& a,
                  const std::set<std::string>& b) {
  size_t n = 0;
  for (const auto& x : a) n += b.count(x) == 0 ? 1 : 0;
  return n;
}

std::string StableConfig(uint32_t peer_index, uint32_t peer_count,
                         uint32_t min_aperture, const std::string& extra = "") {
  return Config("{\"mode\":\"stable\",\"peerIndex\":" +
                std::to_string(peer_index) +
                ",\"peerCount\":" + std::to_string(peer_count) +
                ",\"minAperture\":" + std::to_string(min_aperture) +
                ",\"eagerConnect\":true" + extra + "}");
}

// The snapshot's members with their pick weights.
std::map<std::string, double> Members(const StateView& s) {
  std::map<std::string, double> out;
  for (const auto& e : s.endpoints) {
    if (e.in_aperture) out[e.address] = e.pick_weight;
  }
  return out;
}

void ExpectSameRow(const std::map<std::string, double>& got,
                   const std::map<std::string, double>& expected) {
  EXPECT_EQ(Keys(got), Keys(expected));
  for (const auto& kv : expected) {
    auto it = got.find(kv.first);
    if (it == got.end()) continue;
    EXPECT_NEAR(it->second, kv.second, 1e-6) << kv.first;
  }
}

// A stable channel connects to exactly its plan row, one connection per
// member and none elsewhere; calls succeed and reach only members.
TEST(StableMode, ConnectsExactlyToItsPlanRow) {
  auto backends = StartBackends(12);
  auto addresses = Addresses(backends);
  const uint32_t kIndex = 2, kCount = 5, kMinAperture = 3;
  auto expected = PlanRow(addresses, kIndex, kCount, kMinAperture);
  ASSERT_GE(expected.size(), kMinAperture);
  ASSERT_LT(expected.size(), addresses.size());
  TestChannel channel("stable-row", StableConfig(kIndex, kCount, kMinAperture));
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), expected.size()));

  StateView state;
  ASSERT_TRUE(Snapshot(channel.target(), &state));
  EXPECT_EQ(state.mode, "stable");
  EXPECT_EQ(state.coordinate_source, "config");
  EXPECT_EQ(state.peer_index, kIndex);
  EXPECT_EQ(state.peer_count, kCount);
  EXPECT_EQ(state.logical_aperture, kMinAperture);
  EXPECT_EQ(state.physical_aperture, expected.size());
  EXPECT_EQ(state.widened, 0u);
  EXPECT_EQ(state.subchannels_created, expected.size());
  ExpectSameRow(Members(state), expected);

  const int kCalls = 600;
  ASSERT_EQ(channel.RunLoad(kCalls, 4), 0);
  uint64_t seen = 0;
  for (const auto& b : backends) {
    const bool member = expected.count(b->address()) != 0;
    EXPECT_EQ(ServerConnectionCount(b->port()), member ? 1 : 0)
        << b->address();
    if (!member) {
      EXPECT_EQ(b->calls(), 0u) << "non-member " << b->address();
    }
    seen += b->calls();
  }
  EXPECT_EQ(seen, static_cast<uint64_t>(kCalls));
}

// Waits until the channel's policy has received `updates` resolver
// updates in all; false after 10 s.
bool WaitResolverUpdates(const TestChannel& channel, uint64_t updates) {
  return WaitForState(channel.target(), [&](const StateView& s) {
    return s.resolver_updates >= updates;
  });
}

// A re-resolution with the same answer (in any order, with the same config)
// computes no snapshot and no plan: snapshot_builds and rebuilds stay; a
// changed answer computes one and rebuilds. peer_keys says the config's
// coordinate keys the peers by ordinal.
TEST(StableMode, UnchangedUpdateBuildsNoSnapshot) {
  auto backends = StartBackends(10);
  auto addresses = Addresses(backends);
  TestChannel channel("stable-unchanged", StableConfig(1, 4, 3));
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.rebuilds == 1;
  }));
  StateView s0;
  ASSERT_TRUE(Snapshot(channel.target(), &s0));
  EXPECT_EQ(s0.snapshot_builds, 1u);
  EXPECT_EQ(s0.peer_keys, "ordinal");

  // The same list twice, once in another order.
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitResolverUpdates(channel, s0.resolver_updates + 1));
  auto reversed = addresses;
  std::reverse(reversed.begin(), reversed.end());
  channel.SetAddresses(reversed);
  ASSERT_TRUE(WaitResolverUpdates(channel, s0.resolver_updates + 2));
  StateView s1;
  ASSERT_TRUE(Snapshot(channel.target(), &s1));
  EXPECT_EQ(s1.resolver_updates, s0.resolver_updates + 2);
  EXPECT_EQ(s1.snapshot_builds, s0.snapshot_builds);
  EXPECT_EQ(s1.rebuilds, s0.rebuilds);
  EXPECT_EQ(s1.fingerprint, s0.fingerprint);
  EXPECT_EQ(Members(s1), Members(s0));
  EXPECT_EQ(s1.subchannels_created, s0.subchannels_created);

  // One address fewer: one build, and the ring changed.
  channel.SetAddresses(
      std::vector<std::string>(addresses.begin(), addresses.end() - 1));
  ASSERT_TRUE(WaitResolverUpdates(channel, s1.resolver_updates + 1));
  StateView s2;
  ASSERT_TRUE(Snapshot(channel.target(), &s2));
  EXPECT_EQ(s2.snapshot_builds, s1.snapshot_builds + 1);
  EXPECT_EQ(s2.rebuilds, s1.rebuilds + 1);
  EXPECT_NE(s2.fingerprint, s1.fingerprint);

  // A config change that the ring reads (minAperture) builds again; one it
  // does not read (choiceCount) does not.
  channel.SetAddresses(
      std::vector<std::string>(addresses.begin(), addresses.end() - 1),
      StableConfig(1, 4, 3, ",\"choiceCount\":3"));
  ASSERT_TRUE(WaitResolverUpdates(channel, s2.resolver_updates + 1));
  StateView s3;
  ASSERT_TRUE(Snapshot(channel.target(), &s3));
  EXPECT_EQ(s3.snapshot_builds, s2.snapshot_builds);
  channel.SetAddresses(
      std::vector<std::string>(addresses.begin(), addresses.end() - 1),
      StableConfig(1, 4, 4, ",\"choiceCount\":3"));
  ASSERT_TRUE(WaitResolverUpdates(channel, s3.resolver_updates + 1));
  StateView s4;
  ASSERT_TRUE(Snapshot(channel.target(), &s4));
  EXPECT_EQ(s4.snapshot_builds, s3.snapshot_builds + 1);
  EXPECT_EQ(s4.logical_aperture, 4u);
}

// Outside stable mode there are no stable peer keys; the builds count the
// same way.
TEST(StableMode, OtherModesShowNoPeerKeys) {
  auto backends = StartBackends(6);
  auto addresses = Addresses(backends);
  TestChannel channel(
      "smooth-peer-keys",
      Config("{\"mode\":\"smooth\",\"peerIndex\":0,\"peerCount\":2,"
             "\"minAperture\":2}"));
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.rebuilds == 1;
  }));
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.resolver_updates >= 2;
  }));
  StateView s;
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  EXPECT_EQ(s.mode, "smooth");
  EXPECT_EQ(s.peer_keys, "");
  EXPECT_EQ(s.snapshot_builds, 1u);
}

// Removing a backend from the resolver moves the members exactly as the
// plan of the new address list says: a member leaving is replaced where
// the plan says so; a non-member leaving changes nothing for this client
// (ap_stable.h: a client's members are its own walk and the endpoints it
// covers, neither of which holds the endpoint that left).
TEST(StableMode, RemovalMovesMembersAsThePlanPredicts) {
  auto backends = StartBackends(12);
  auto all = Addresses(backends);
  const uint32_t kIndex = 1, kCount = 4, kMinAperture = 3;
  TestChannel channel("stable-removal",
                      StableConfig(kIndex, kCount, kMinAperture));
  channel.SetAddresses(all);
  auto members = Keys(PlanRow(all, kIndex, kCount, kMinAperture));
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), members.size()));

  std::vector<std::string> current = all;
  auto remove = [&](const std::string& gone) {
    StateView s0;
    ASSERT_TRUE(Snapshot(channel.target(), &s0));
    current.erase(std::find(current.begin(), current.end(), gone));
    auto next_row = PlanRow(current, kIndex, kCount, kMinAperture);
    auto next = Keys(next_row);
    channel.SetAddresses(current);
    ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& s) {
      return s.resolver_updates > s0.resolver_updates;
    }));
    StateView s1;
    ASSERT_TRUE(Snapshot(channel.target(), &s1));
    EXPECT_EQ(s1.endpoints.size(), current.size());
    ExpectSameRow(Members(s1), next_row);
    EXPECT_EQ(s1.subchannels_created - s0.subchannels_created,
              CountNotIn(next, members));
    EXPECT_EQ(s1.subchannels_destroyed - s0.subchannels_destroyed,
              CountNotIn(members, next));
    members = next;
    ASSERT_TRUE(WaitAllMembersReady(channel.target(), members.size()));
  };

  // A member leaves.
  const std::string member_gone = *members.begin();
  auto before = members;
  remove(member_gone);
  EXPECT_EQ(members.count(member_gone), 0u);
  // Every other member stays (membership follows keys, not positions).
  for (const std::string& m : before) {
    if (m != member_gone) {
      EXPECT_EQ(members.count(m), 1u) << m;
    }
  }

  // A non-member leaves: this client's members do not move.
  std::string outsider;
  for (const std::string& a : current) {
    if (members.count(a) == 0) {
      outsider = a;
      break;
    }
  }
  ASSERT_FALSE(outsider.empty());
  before = members;
  remove(outsider);
  EXPECT_EQ(members, before);

  // Calls reach only the members, over one connection each.
  for (const auto& b : backends) b->ResetCalls();
  ASSERT_EQ(channel.RunLoad(300, 4), 0);
  for (const auto& b : backends) {
    const bool member = members.count(b->address()) != 0;
    if (!member) {
      EXPECT_EQ(b->calls(), 0u) << b->address();
    }
    EXPECT_TRUE(WaitFor([&] {
      return ServerConnectionCount(b->port()) == (member ? 1 : 0);
    })) << b->address() << " connections " << ServerConnectionCount(b->port());
  }
}

// Health widening works in stable mode: a stopped member is replaced by a
// widened endpoint until it comes back, and calls keep succeeding.
TEST(StableMode, StoppedMemberWidensAndNarrowsBack) {
  auto backends = StartBackends(10);
  auto addresses = Addresses(backends);
  const uint32_t kIndex = 0, kCount = 3, kMinAperture = 3;
  auto row = PlanRow(addresses, kIndex, kCount, kMinAperture);
  // minReady = every member: losing one widens by one.
  TestChannel channel(
      "stable-widen",
      StableConfig(kIndex, kCount, kMinAperture,
                   ",\"minReady\":" + std::to_string(row.size())),
      /*retries=*/false);
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), row.size()));
  const std::string victim_address = row.begin()->first;
  Backend* victim = FindBackend(backends, victim_address);
  ASSERT_NE(victim, nullptr);
  victim->Stop();

  std::string added;
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    added.clear();
    for (const auto& e : v.endpoints) {
      if (e.widened && e.connectivity == 2) added = e.address;
    }
    return v.widened >= 1 && v.Find(victim_address)->connectivity != 2 &&
           !added.empty();
  }));
  EXPECT_EQ(row.count(added), 0u) << added;
  StateView s;
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  EXPECT_EQ(s.mode, "stable");
  EXPECT_GE(s.widenings, 1u);
  for (const auto& kv : row) EXPECT_TRUE(s.IsMember(kv.first)) << kv.first;

  const uint64_t victim_calls = victim->calls();
  ASSERT_EQ(channel.RunLoad(300, 4), 0);
  EXPECT_EQ(victim->calls(), victim_calls);
  Backend* added_backend = FindBackend(backends, added);
  ASSERT_NE(added_backend, nullptr);
  EXPECT_GT(added_backend->calls(), 0u);

  victim->Restart();
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.widened == 0 && v.Find(victim_address)->connectivity == 2 &&
           !v.Find(added)->in_aperture;
  }, 30000));
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  ExpectSameRow(Members(s), row);
}

}  // namespace
}  // namespace aperture_test
