// Debounced membership through real channels to real servers on 127.0.0.1
// (gRPC's fake resolver drives the address lists): removalGraceMs keeps a
// restarted address's subchannel and ring slot, expiry removes it,
// updateCoalesceMs turns a burst of updates into one rebuild, and the
// config fields are validated by name.
#include <stdint.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/core/lib/config/core_configuration.h"
#include "src/core/lib/json/json.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

std::vector<std::string> Without(const std::vector<std::string>& all,
                                 const std::string& gone) {
  std::vector<std::string> out;
  for (const auto& a : all) {
    if (a != gone) out.push_back(a);
  }
  return out;
}

StateView Snap(const std::string& target) {
  StateView s;
  EXPECT_TRUE(Snapshot(target, &s)) << target;
  return s;
}

bool IsDraining(const StateView& s) {
  return s.last_status.find("draining") != std::string::npos;
}

// Sets `addresses` and waits until the published state satisfies `done`
// (the resolver_updates counter moves before the update is published).
bool SetAndWait(TestChannel* channel, const std::vector<std::string>& addresses,
                const std::function<bool(const StateView&)>& done) {
  channel->SetAddresses(addresses);
  return WaitForState(channel->target(), done);
}

// Sets `addresses`, takes the aperture's members once it has any and waits
// until all of them are READY. Returns the members; empty when either wait
// timed out.
std::vector<std::string> SetAndWaitMembersReady(
    TestChannel* channel, const std::vector<std::string>& addresses) {
  channel->SetAddresses(addresses);
  StateView s;
  if (!WaitFor([&] {
        return Snapshot(channel->target(), &s) && !s.Members().empty();
      })) {
    return {};
  }
  std::vector<std::string> members = s.Members();
  if (!WaitAllMembersReady(channel->target(), members.size())) return {};
  return members;
}

// Waits until `address` is no longer draining and READY again, then until
// a call reaches `backend`.
void WaitBackInService(TestChannel* channel, Backend* backend,
                       const std::string& address) {
  ASSERT_TRUE(WaitForState(channel->target(), [&](const StateView& v) {
    return !IsDraining(v) && v.Find(address)->connectivity == 2;
  }, 30000)) << address << " is still draining or not READY";
  backend->ResetCalls();
  ASSERT_TRUE(WaitFor([&] {
    return channel->Call().ok() && backend->calls() > 0;
  })) << address << " gets no calls";
}

// A member restarts at the same address and the resolver drops it and
// brings it back within the grace: no subchannel is created or destroyed,
// the ring is not rebuilt, the member keeps its slot (and its counters) but
// gets no calls while it is away, and gets calls again once back.
TEST(DebouncedMembership, RestartWithinGraceCausesNoChurn) {
  auto backends = StartBackends(8);
  auto all = Addresses(backends);
  // minReady 1: no widening, so the counters isolate the member's own fate.
  TestChannel channel("grace-restart", Config(
      "{\"peerIndex\":0,\"peerCount\":2,\"minAperture\":3,"
      "\"eagerConnect\":true,\"minReady\":1,\"removalGraceMs\":600000}"));
  const auto members = SetAndWaitMembersReady(&channel, all);
  ASSERT_GE(members.size(), 2u);
  ASSERT_LT(members.size(), all.size());
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(channel.Call().ok());
  StateView s0 = Snap(channel.target());
  const std::string victim_address = members[0];
  Backend* victim = FindBackend(backends, victim_address);
  ASSERT_NE(victim, nullptr);
  const uint64_t victim_picks = s0.Find(victim_address)->picks;
  ASSERT_GT(victim_picks, 0u);
  EXPECT_EQ(s0.rebuilds, 1u);
  EXPECT_EQ(s0.subchannels_created, members.size());
  EXPECT_EQ(s0.subchannels_destroyed, 0u);

  // The restart: the server stops, the resolver drops its address.
  victim->Stop();
  ASSERT_TRUE(SetAndWait(&channel, Without(all, victim_address), IsDraining));
  StateView away = Snap(channel.target());
  EXPECT_TRUE(IsDraining(away)) << away.last_status;
  const EndpointView* slot = away.Find(victim_address);
  ASSERT_NE(slot, nullptr) << "the draining member lost its ring slot";
  EXPECT_TRUE(slot->in_aperture);
  EXPECT_TRUE(slot->draining);
  EXPECT_EQ(away.draining, 1u);
  for (const auto& e : away.endpoints) {
    EXPECT_EQ(e.draining, e.address == victim_address) << e.address;
  }
  EXPECT_EQ(away.Members(), members);
  EXPECT_EQ(away.fingerprint, s0.fingerprint);
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(channel.Call().ok());
  EXPECT_EQ(Snap(channel.target()).Find(victim_address)->picks, victim_picks);

  // Back at the same address, and back in the resolver's list.
  victim->Restart();
  ASSERT_TRUE(SetAndWait(&channel, all, [](const StateView& v) {
    return !IsDraining(v);
  }));
  ASSERT_NO_FATAL_FAILURE(WaitBackInService(&channel, victim, victim_address));
  StateView back = Snap(channel.target());
  EXPECT_EQ(back.rebuilds, s0.rebuilds);
  EXPECT_EQ(back.subchannels_created, s0.subchannels_created);
  EXPECT_EQ(back.subchannels_destroyed, s0.subchannels_destroyed);
  EXPECT_EQ(back.fingerprint, s0.fingerprint);
  EXPECT_EQ(back.Members(), members);
  EXPECT_EQ(back.draining, 0u);
  EXPECT_FALSE(back.Find(victim_address)->draining);
  // Same endpoint object: its pick counter carried on from before.
  EXPECT_GT(back.Find(victim_address)->picks, victim_picks);
}

// While a member drains, the health widening covers it with the next
// endpoint; when it comes back the aperture narrows again. The member's
// own subchannel stays throughout.
TEST(DebouncedMembership, WideningCoversADrainingMember) {
  auto backends = StartBackends(8);
  auto all = Addresses(backends);
  // 8 endpoints, client 0 of 2, minAperture 3: the window [0, 1/2) holds
  // exactly 4 members; minReady 4 widens as soon as one is unusable.
  TestChannel channel("grace-widen", Config(
      "{\"peerIndex\":0,\"peerCount\":2,\"minAperture\":3,"
      "\"minReady\":4,\"eagerConnect\":true,\"removalGraceMs\":600000}"));
  const auto members = SetAndWaitMembersReady(&channel, all);
  ASSERT_EQ(members.size(), 4u);
  StateView s0 = Snap(channel.target());
  ASSERT_EQ(s0.widened, 0u);
  const std::string victim_address = members[1];

  ASSERT_TRUE(SetAndWait(&channel, Without(all, victim_address), IsDraining));
  StateView away = Snap(channel.target());
  EXPECT_TRUE(IsDraining(away)) << away.last_status;
  EXPECT_EQ(away.widened, 1u);
  EXPECT_EQ(away.rebuilds, s0.rebuilds);
  std::string added;
  for (const auto& e : away.endpoints) {
    if (e.widened) added = e.address;
  }
  ASSERT_FALSE(added.empty());
  EXPECT_NE(added, victim_address);
  // Only the widened endpoint got a new subchannel; nothing was destroyed.
  EXPECT_EQ(away.subchannels_created, s0.subchannels_created + 1);
  EXPECT_EQ(away.subchannels_destroyed, s0.subchannels_destroyed);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.Find(added)->connectivity == 2;
  }));
  Backend* victim = FindBackend(backends, victim_address);
  Backend* extra = FindBackend(backends, added);
  ASSERT_NE(victim, nullptr);
  ASSERT_NE(extra, nullptr);
  victim->ResetCalls();
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(channel.Call().ok());
  EXPECT_EQ(victim->calls(), 0u);
  EXPECT_GT(extra->calls(), 0u);
  EXPECT_EQ(ServerConnectionCount(victim->port()), 1);  // still connected

  ASSERT_TRUE(SetAndWait(&channel, all, [](const StateView& v) {
    return !IsDraining(v);
  }));
  StateView back = Snap(channel.target());
  EXPECT_FALSE(IsDraining(back)) << back.last_status;
  EXPECT_EQ(back.widened, 0u);
  EXPECT_EQ(back.rebuilds, s0.rebuilds);
  EXPECT_EQ(back.Members(), members);
  EXPECT_EQ(back.subchannels_created, s0.subchannels_created + 1);
  EXPECT_EQ(back.subchannels_destroyed, s0.subchannels_destroyed + 1);
}

// Gone for longer than the grace: the timer removes the member, its
// subchannel and its connection, in one rebuild.
TEST(DebouncedMembership, GonePastGraceIsRemoved) {
  auto backends = StartBackends(5);
  auto all = Addresses(backends);
  // The grace is long enough for the test to see the member draining first
  // (polling every 10 ms), short enough to keep the test quick.
  TestChannel channel("grace-expiry", Config(
      "{\"mode\":\"mesh\",\"eagerConnect\":true,\"removalGraceMs\":2500}"));
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 5));
  StateView s0 = Snap(channel.target());
  ASSERT_EQ(s0.rebuilds, 1u);
  const std::string gone = all[2];
  Backend* gone_backend = FindBackend(backends, gone);
  ASSERT_NE(gone_backend, nullptr);

  ASSERT_TRUE(SetAndWait(&channel, Without(all, gone), [&](const StateView& v) {
    return IsDraining(v) && v.Find(gone) != nullptr;
  }));
  EXPECT_EQ(Snap(channel.target()).subchannels_destroyed, 0u);
  // No further resolver update: only the policy's timer can remove it.
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.Find(gone) == nullptr;
  }));
  StateView after = Snap(channel.target());
  EXPECT_EQ(after.resolver_updates, s0.resolver_updates + 1);
  EXPECT_EQ(after.rebuilds, s0.rebuilds + 1);
  EXPECT_EQ(after.subchannels_created, s0.subchannels_created);
  EXPECT_EQ(after.subchannels_destroyed, s0.subchannels_destroyed + 1);
  EXPECT_EQ(after.endpoints.size(), 4u);
  EXPECT_FALSE(IsDraining(after)) << after.last_status;
  ASSERT_TRUE(WaitFor([&] { return ServerConnectionCount(gone_backend->port()) == 0; }));
  gone_backend->ResetCalls();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(channel.Call().ok());
  EXPECT_EQ(gone_backend->calls(), 0u);
}

// Without removalGraceMs (the default) a removal is immediate, as before.
TEST(DebouncedMembership, ZeroGraceRemovesAtOnce) {
  auto backends = StartBackends(4);
  auto all = Addresses(backends);
  TestChannel channel("grace-zero", Config(
      "{\"mode\":\"mesh\",\"eagerConnect\":true}"));
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 4));
  StateView s0 = Snap(channel.target());
  ASSERT_TRUE(SetAndWait(&channel, Without(all, all[0]), [&](const StateView& v) {
    return v.Find(all[0]) == nullptr;
  }));
  StateView after = Snap(channel.target());
  EXPECT_EQ(after.Find(all[0]), nullptr);
  EXPECT_EQ(after.rebuilds, s0.rebuilds + 1);
  EXPECT_EQ(after.subchannels_destroyed, s0.subchannels_destroyed + 1);
}

// A burst of updates arriving within updateCoalesceMs of the first list's
// rebuild is applied once, at the window's end, with the latest list.
TEST(DebouncedMembership, BurstWithinCoalesceWindowIsOneRebuild) {
  auto backends = StartBackends(10);
  auto all = Addresses(backends);
  // A long window: the burst below takes milliseconds, so it falls inside
  // it even on a loaded machine.
  TestChannel channel("coalesce-burst", Config(
      "{\"mode\":\"mesh\",\"eagerConnect\":true,\"updateCoalesceMs\":4000}"));
  std::vector<std::string> first(all.begin(), all.begin() + 5);
  ASSERT_TRUE(SetAndWait(&channel, first, [](const StateView& v) {
    return v.endpoints.size() == 5u;
  }));
  StateView s0 = Snap(channel.target());
  ASSERT_EQ(s0.rebuilds, 1u);
  ASSERT_EQ(s0.endpoints.size(), 5u);

  // Five updates: grow one by one to all ten, the last one reordered.
  const int kBurst = 5;
  for (int k = 1; k <= kBurst; ++k) {
    std::vector<std::string> next(all.begin(), all.begin() + 5 + k);
    if (k == kBurst) std::reverse(next.begin(), next.end());
    channel.SetAddresses(next);
  }
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.resolver_updates == s0.resolver_updates + kBurst;
  }));
  StateView held = Snap(channel.target());
  EXPECT_EQ(held.rebuilds, 1u) << "an update inside the window was applied";
  EXPECT_EQ(held.endpoints.size(), 5u);

  // The window ends: one rebuild with the latest list.
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.endpoints.size() == 10u;
  }, 20000));
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 10));
  StateView after = Snap(channel.target());
  EXPECT_EQ(after.rebuilds, 2u);
  EXPECT_EQ(after.resolver_updates, s0.resolver_updates + kBurst);
  EXPECT_EQ(after.subchannels_created, 10u);  // each new address once
  EXPECT_EQ(after.subchannels_destroyed, 0u);
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(channel.Call().ok());
  for (const auto& b : backends) EXPECT_GT(b->calls(), 0u) << b->address();
}

// The restart happens as with DNS: the resolver's answer only has the
// address again when the policy asks, and nothing asks while every live
// member is READY. The draining member's subchannel coming back READY makes
// the policy ask, so the slot is restored long before its grace runs out.
TEST(DebouncedMembership, DrainingMemberReadyAgainAsksTheResolver) {
  auto backends = StartBackends(4);
  auto all = Addresses(backends);
  TestChannel channel("grace-ready-again", Config(
      "{\"mode\":\"mesh\",\"eagerConnect\":true,\"minReady\":1,"
      "\"removalGraceMs\":600000}"));
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), all.size()));
  const std::string victim_address = all[1];
  Backend* victim = FindBackend(backends, victim_address);
  ASSERT_NE(victim, nullptr);
  StateView s0 = Snap(channel.target());

  victim->Stop();
  ASSERT_TRUE(SetAndWait(&channel, Without(all, victim_address), IsDraining));
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.Find(victim_address)->connectivity != 2;
  }));
  // From now on a re-resolution answers with the full list; no update is
  // pushed. (Set before the restart: an attempt failing in between may
  // also ask, which restores the slot just the same.)
  channel.SetReresolutionAddresses(all);
  victim->Restart();
  ASSERT_NO_FATAL_FAILURE(WaitBackInService(&channel, victim, victim_address));
  StateView back = Snap(channel.target());
  EXPECT_EQ(back.rebuilds, s0.rebuilds);
  EXPECT_EQ(back.subchannels_created, s0.subchannels_created);
  EXPECT_EQ(back.subchannels_destroyed, 0u);
}

// gRPC's DNS resolver never polls: with reresolutionIntervalMs the policy
// asks on its own, so a changed answer arrives while every member is
// healthy (nothing else would ask).
TEST(Reresolution, IntervalPicksUpAChangedAnswer) {
  auto backends = StartBackends(4);
  auto all = Addresses(backends);
  std::vector<std::string> first(all.begin(), all.begin() + 3);
  TestChannel channel("reresolve-interval", Config(
      "{\"mode\":\"mesh\",\"eagerConnect\":true,"
      "\"reresolutionIntervalMs\":200}"));
  channel.SetAddresses(first);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 3));
  channel.SetReresolutionAddresses(all);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.Members().size() == 4u;
  })) << "no re-resolution within 10 s at a 200 ms interval";
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 4));
  backends[3]->ResetCalls();
  ASSERT_TRUE(WaitFor([&] {
    return channel.Call().ok() && backends[3]->calls() > 0;
  }));
}

void ExpectFieldError(const std::string& json, const std::string& field) {
  absl::Status s = ParseThroughRegistry(json);
  EXPECT_FALSE(s.ok()) << json;
  EXPECT_NE(std::string(s.message()).find("field:" + field + " error:"),
            std::string::npos)
      << json << " -> " << s.message();
}

TEST(DebouncedMembershipConfig, FieldsAreValidatedByName) {
  EXPECT_TRUE(ParseThroughRegistry("{\"removalGraceMs\":0}").ok());
  EXPECT_TRUE(ParseThroughRegistry(
                  "{\"removalGraceMs\":86400000,\"updateCoalesceMs\":250}")
                  .ok());
  ExpectFieldError("{\"removalGraceMs\":-1}", "removalGraceMs");
  ExpectFieldError("{\"removalGraceMs\":1.5}", "removalGraceMs");
  ExpectFieldError("{\"removalGraceMs\":\"5s\"}", "removalGraceMs");
  ExpectFieldError("{\"removalGraceMs\":86400001}", "removalGraceMs");
  ExpectFieldError("{\"updateCoalesceMs\":-3}", "updateCoalesceMs");
  ExpectFieldError("{\"updateCoalesceMs\":true}", "updateCoalesceMs");
  ExpectFieldError("{\"updateCoalesceMs\":1e9}", "updateCoalesceMs");
  EXPECT_TRUE(ParseThroughRegistry("{\"reresolutionIntervalMs\":0}").ok());
  EXPECT_TRUE(ParseThroughRegistry("{\"reresolutionIntervalMs\":100}").ok());
  ExpectFieldError("{\"reresolutionIntervalMs\":99}", "reresolutionIntervalMs");
  ExpectFieldError("{\"reresolutionIntervalMs\":-1}", "reresolutionIntervalMs");
  ExpectFieldError("{\"reresolutionIntervalMs\":\"1s\"}",
                   "reresolutionIntervalMs");
  ExpectFieldError("{\"reresolutionIntervalMs\":86400001}",
                   "reresolutionIntervalMs");
  absl::Status both = ParseThroughRegistry(
      "{\"removalGraceMs\":-1,\"updateCoalesceMs\":-1}");
  EXPECT_NE(std::string(both.message()).find("field:removalGraceMs"),
            std::string::npos);
  EXPECT_NE(std::string(both.message()).find("field:updateCoalesceMs"),
            std::string::npos);
}

}  // namespace
}  // namespace aperture_test
