// The per-endpoint counters outlive the policy's hold on them exactly as
// long as calls are in flight there (endpoint_counters.h, Ownership), through
// real channels and servers on 127.0.0.1: a member holds calls unanswered
// (Backend::Freeze) while the policy drops it, by an update that removes it
// or by being replaced on the channel (its shutdown); the held calls end
// late, after that. The counters the status reports stay exact up to the
// drop, the dropped member's counters stay alive while its calls are held
// and are freed once, when the last of them ends (LiveEndpointCounters();
// a free before a late end, or a second free, fails under --config=asan:
// `bazel test --config=asan //tests/lb:counters_lifetime_test`).
#include <stdint.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "policy/lb/picker/endpoint_counters.h"
#include "policy/lb/test_hooks.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

using aperture_lb::EndpointCounters;
using aperture_lb::LiveEndpointCounters;

// Both backends in the aperture, no retries (one call, one pick), and no
// health checks: a frozen member keeps getting the calls where both P2C
// draws land on it (1 in 4 with two members), rather than being avoided.
std::string TwoMembers() {
  return Config(
      "{\"mode\":\"continuous\",\"minAperture\":2,\"peerIndex\":0,"
      "\"peerCount\":1,\"eagerConnect\":true,\"stuckCallMs\":0,"
      "\"ejectAfterFailures\":0}");
}

constexpr int kCalls = 40;

// kCalls calls, all in flight at once, while backend `frozen` holds what
// it gets; the constructor waits until every call is either answered by
// `other` or held. Thaw() lets the held calls end (late) and waits for
// the load; the destructor thaws too, so a failed assertion cannot leave
// a thread behind.
class HeldCalls {
 public:
  HeldCalls(TestChannel& channel, Backend& frozen, Backend& other)
      : frozen_(frozen) {
    frozen.Freeze(true);
    const uint64_t other_before = other.calls();
    load_ = std::thread([this, &channel] {
      failed_ = channel.RunLoad(kCalls, kCalls, nullptr, nullptr, 60000);
    });
    all_placed_ = WaitFor([&] {
      return frozen.held() + (other.calls() - other_before) == kCalls;
    }, 20000);
  }
  ~HeldCalls() { Thaw(); }

  // Every call answered or held, and some held: about 10 of 40 land on
  // the frozen member (both draws on it); none with probability 0.75^40,
  // about 1e-5.
  bool ready() const { return all_placed_ && frozen_.held() > 0; }
  // Thaws the frozen backend and returns the failed calls of the load.
  int Thaw() {
    frozen_.Freeze(false);
    if (load_.joinable()) load_.join();
    return failed_;
  }

 private:
  Backend& frozen_;
  std::thread load_;
  int failed_ = -1;
  bool all_placed_ = false;
};

// The status shows the counters exactly while the calls are held: each
// member was picked for every call it received (held ones included), the
// frozen one has its held calls outstanding, the other none.
void ExpectExactCounters(const std::string& target, const Backend& frozen,
                         const Backend& other) {
  const uint64_t held = frozen.held();
  const uint64_t received = frozen.calls();
  const uint64_t answered = other.calls();
  const bool exact = WaitForState(target, [&](const StateView& v) {
    const EndpointView* f = v.Find(frozen.address());
    const EndpointView* o = v.Find(other.address());
    return f != nullptr && o != nullptr && f->picks == received &&
           f->outstanding == held && o->picks == answered &&
           o->outstanding == 0;
  }, 10000);
  StateView view;
  ASSERT_TRUE(Snapshot(target, &view));
  const EndpointView* f = view.Find(frozen.address());
  const EndpointView* o = view.Find(other.address());
  ASSERT_NE(f, nullptr);
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(exact) << "frozen: picks " << f->picks << " outstanding "
                     << f->outstanding << " (received " << received << ", held "
                     << held << "); other: picks "
                     << o->picks << " outstanding " << o->outstanding
                     << " (answered " << answered << ")";
  EXPECT_EQ(f->failures, 0u);
  EXPECT_EQ(o->failures, 0u);
}

// An update removes the member that holds calls: its counters stay alive
// while the calls are held, and are freed when they end, after the
// removal; the remaining member's counters keep counting exactly.
TEST(CountersLifetime, RemovedMemberKeepsItsCountersUntilItsLateCallsEnd) {
  const int64_t base = LiveEndpointCounters();
  auto backends = StartBackends(2);
  Backend& frozen = *backends[0];
  Backend& other = *backends[1];
  const std::string target = "counters-removed";
  {
    TestChannel channel(target, TwoMembers(), /*retries=*/false);
    channel.SetAddresses(Addresses(backends));
    ASSERT_TRUE(WaitAllMembersReady(target, 2));
    ASSERT_EQ(channel.RunLoad(20, 4), 0);
    EXPECT_EQ(LiveEndpointCounters(), base + 2);

    HeldCalls calls(channel, frozen, other);
    ASSERT_TRUE(calls.ready()) << "held " << frozen.held();
    ExpectExactCounters(target, frozen, other);
    const uint64_t held = frozen.held();
    const uint64_t received = frozen.calls();

    channel.SetAddresses({other.address()});
    ASSERT_TRUE(WaitForState(target, [&](const StateView& v) {
      return v.Find(frozen.address()) == nullptr && v.Members().size() == 1;
    }));
    // The policy let go (no endpoint, picker or status entry lists it);
    // the held calls are what keeps its counters.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(LiveEndpointCounters(), base + 2);
    EXPECT_EQ(frozen.held(), held) << "the removal ended no held call";

    EXPECT_EQ(calls.Thaw(), 0);  // the late ends
    EXPECT_EQ(frozen.calls(), received) << "no call after the removal";
    EXPECT_TRUE(WaitFor([&] { return LiveEndpointCounters() == base + 1; }))
        << "live: " << LiveEndpointCounters() - base;

    // The remaining member counts on exactly.
    const uint64_t other_before = other.calls();
    ASSERT_EQ(channel.RunLoad(30, 4), 0);
    EXPECT_EQ(other.calls(), other_before + 30);
    EXPECT_TRUE(WaitForState(target, [&](const StateView& v) {
      const EndpointView* o = v.Find(other.address());
      return o != nullptr && o->picks == other.calls() && o->outstanding == 0;
    }));
  }
  EXPECT_TRUE(WaitFor([&] { return LiveEndpointCounters() == base; }))
      << "live after the channel: " << LiveEndpointCounters() - base;
}

// The channel replaces the policy (a new service config picks another LB
// policy), which shuts it down while one member holds calls: the idle
// member's counters go with the policy, the busy member's stay until its
// held calls end late, after the shutdown, and are freed then.
TEST(CountersLifetime, PolicyShutdownFreesBusyCountersWhenTheirLateCallsEnd) {
  const int64_t base = LiveEndpointCounters();
  auto backends = StartBackends(2);
  Backend& frozen = *backends[0];
  Backend& other = *backends[1];
  const std::string target = "counters-shutdown";
  TestChannel channel(target, TwoMembers(), /*retries=*/false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady(target, 2));
  ASSERT_EQ(channel.RunLoad(20, 4), 0);
  EXPECT_EQ(LiveEndpointCounters(), base + 2);

  HeldCalls calls(channel, frozen, other);
  ASSERT_TRUE(calls.ready()) << "held " << frozen.held();
  ExpectExactCounters(target, frozen, other);
  const uint64_t held = frozen.held();
  const uint64_t received = frozen.calls();

  channel.SetAddresses(
      Addresses(backends),
      "{\"loadBalancingConfig\":[{\"round_robin\":{}}]}");
  StateView view;
  ASSERT_TRUE(WaitFor([&] { return !Snapshot(target, &view); }))
      << "the aperture policy is still registered";
  EXPECT_TRUE(WaitFor([&] { return LiveEndpointCounters() == base + 1; }))
      << "live: " << LiveEndpointCounters() - base
      << " (the idle member's counters go with the policy)";
  EXPECT_EQ(frozen.held(), held) << "the shutdown ended no held call";

  EXPECT_EQ(calls.Thaw(), 0);  // the late ends
  EXPECT_EQ(frozen.calls(), received);
  EXPECT_TRUE(WaitFor([&] { return LiveEndpointCounters() == base; }))
      << "live: " << LiveEndpointCounters() - base;
  // The channel works on under round_robin.
  EXPECT_EQ(channel.RunLoad(10, 2), 0);
}

}  // namespace
}  // namespace aperture_test
