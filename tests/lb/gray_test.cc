// Gray failures through real channels and real servers on 127.0.0.1: a
// member that accepts calls and never answers them while its connection
// stays up (Backend::Freeze, as a hung process). Its subchannel stays READY,
// so only the policy's own health signals (ap_health.h) keep calls away.
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/lb/lb_test_util.h"
#include "tests/lb/tcp_proxy.h"

namespace aperture_test {
namespace {

// Every one of the 4 backends in the aperture; no retries, so each call is
// one attempt on one member.
std::string AllMembers(const std::string& extra) {
  return Config("{\"mode\":\"continuous\",\"minAperture\":4,\"peerIndex\":0,"
                "\"peerCount\":1,\"eagerConnect\":true" + extra + "}");
}

// The policy's health sweep (every second) has measured how often the
// members' calls fail: from then on a silence on one member while the
// others answer is evidence against it (ap_health.h).
bool WaitPeersKnown(const std::string& name) {
  return WaitForState(name, [](const StateView& v) { return v.peer_failure_share >= 0; }, 5000);
}

// With 8 calls in flight and a 300 ms deadline, one frozen member of 4:
// the draws are independent, so without ejection both land on it for
// about 1 call in 16 (about 190 of these 3,000) and each such call waits
// out its deadline. With ejection after 5 failures in a row, what fails
// is what was sent before the first deadlines (at most the 8 in flight)
// plus one probe per ejection (3 s, then 6 s). 40 leaves room for a slow machine
// (more ejections while the load runs longer) and is far below 190.
TEST(Gray, FrozenMemberIsEjectedAndFewCallsFail) {
  auto backends = StartBackends(4);
  TestChannel channel("gray-freeze", AllMembers(""), /*retries=*/false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady("gray-freeze", 4));
  ASSERT_EQ(channel.RunLoad(400, 8), 0);
  ASSERT_TRUE(WaitPeersKnown("gray-freeze"));

  backends[0]->Freeze(true);
  std::map<int, int> by_code;
  const int failed = channel.RunLoad(3000, 8, &by_code, nullptr, 300);
  RecordProperty("failed_calls", failed);
  printf("frozen member: %d of 3000 calls failed\n", failed);
  EXPECT_LE(failed, 40);
  EXPECT_GE(failed, 1);  // the calls it held when it froze
  for (const auto& kv : by_code)
    EXPECT_EQ(kv.first, static_cast<int>(grpc::StatusCode::DEADLINE_EXCEEDED));
  StateView view;
  ASSERT_TRUE(Snapshot("gray-freeze", &view));
  const EndpointView* frozen = view.Find(backends[0]->address());
  ASSERT_NE(frozen, nullptr);
  EXPECT_GE(frozen->ejections, 1u);
  EXPECT_NE(frozen->health, "ok");
  // Every failure was on the frozen member: none on a healthy one.
  for (size_t i = 1; i < backends.size(); ++i)
    EXPECT_EQ(view.Find(backends[i]->address())->failures, 0u);

  // Thawed, it gets calls again: the next probation probe succeeds and
  // reinstates it.
  backends[0]->Freeze(false);
  const uint64_t before = backends[0]->calls();
  EXPECT_TRUE(WaitFor([&] {
    channel.RunLoad(100, 8);
    return backends[0]->calls() > before + 10;
  }, 10000));
  ASSERT_TRUE(Snapshot("gray-freeze", &view));
  EXPECT_EQ(view.Find(backends[0]->address())->health, "ok");
}

// Without deadlines, a frozen member fails nothing; it holds calls. The
// callers that drew it wait, and new callers would keep drawing it (about
// 1 call in 16 lands there whatever the loads, when both draws pick it).
// Stuck detection (calls in flight there and none ended for its threshold)
// takes it out of the pick: a second load, started once the first one's
// calls have waited there past stuckCallMs, runs to its end on the others
// while the member is still frozen. Without it, the second load's callers
// would end up waiting on the frozen member too.
TEST(Gray, StuckMemberIsAvoidedWhileItHoldsCalls) {
  auto backends = StartBackends(4);
  TestChannel channel("gray-stuck", AllMembers(",\"stuckCallMs\":200"), false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady("gray-stuck", 4));
  ASSERT_EQ(channel.RunLoad(100, 8), 0);
  backends[0]->Freeze(true);
  int first_failed = -1, second_failed = -1;
  std::thread first([&] { first_failed = channel.RunLoad(400, 8, nullptr, nullptr, 60000); });
  ASSERT_TRUE(WaitFor([&] { return backends[0]->held() > 0; }, 10000));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // > stuckCallMs
  StateView view;
  const bool have_view = Snapshot("gray-stuck", &view);
  const size_t held_before = backends[0]->held();
  std::atomic<bool> second_done{false};
  std::thread second([&] {
    second_failed = channel.RunLoad(1000, 8, nullptr, nullptr, 60000);
    second_done = true;
  });
  const bool went_on = WaitFor([&] { return second_done.load(); }, 20000);
  const size_t held_after = backends[0]->held();
  backends[0]->Freeze(false);
  second.join();
  first.join();
  EXPECT_TRUE(went_on) << "new calls kept landing on the frozen member";
  EXPECT_EQ(held_after, held_before) << "calls were sent to a stuck member";
  EXPECT_EQ(first_failed, 0);
  EXPECT_EQ(second_failed, 0);
  ASSERT_TRUE(have_view);
  EXPECT_EQ(view.Find(backends[0]->address())->health, "stuck");
}

// Aperture as the child of gRPC's outlier_detection: calls flow through
// both, and outlier_detection's failure-percentage ejection takes a frozen
// member out (aperture sees its subchannel leave READY) with aperture's own
// ejection switched off.
TEST(Gray, ApertureUnderOutlierDetection) {
  auto backends = StartBackends(4);
  const std::string config =
      "{\"loadBalancingConfig\":[{\"outlier_detection_experimental\":{"
      "\"interval\":\"0.5s\",\"baseEjectionTime\":\"30s\","
      "\"maxEjectionPercent\":50,"
      "\"failurePercentageEjection\":{\"threshold\":50,\"enforcementPercentage\":100,"
      "\"minimumHosts\":1,\"requestVolume\":5},"
      "\"childPolicy\":[{\"aperture\":{\"mode\":\"continuous\",\"minAperture\":4,"
      "\"peerIndex\":0,\"peerCount\":1,\"eagerConnect\":true,\"ejectAfterFailures\":0,"
      "\"stuckCallMs\":0}}]}}]}";
  TestChannel channel("gray-od", config, false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady("gray-od", 4));
  ASSERT_EQ(channel.RunLoad(400, 8), 0);
  for (const auto& b : backends) EXPECT_GT(b->calls(), 0u);

  backends[0]->Freeze(true);
  const std::string frozen = backends[0]->address();
  const bool ejected = WaitFor([&] {
    channel.RunLoad(200, 8, nullptr, nullptr, 100);
    StateView view;
    return Snapshot("gray-od", &view) && view.Find(frozen) != nullptr &&
           !view.MemberReady(frozen);
  }, 15000);
  EXPECT_TRUE(ejected) << "outlier_detection did not eject the frozen member";
  // Ejected by the parent, it gets no more calls: the next load is clean.
  EXPECT_EQ(channel.RunLoad(500, 8, nullptr, nullptr, 1000), 0);
  backends[0]->Freeze(false);
}

// A call that fails after a silence begins a run; a second failure in it
// (a call held beside it, or the next call sent there, with no success
// between) ejects the member while its peers' calls answer (the policy's
// sweep found them failing under 0.5%). With ejectAfterFailures far above
// any run this test can make, only that rule can eject the frozen member.
// Without it, every time the calls held there reached their deadline the
// member would be usable again, take calls until it looked stuck, and
// fail them 300 ms later, over and over (hundreds of the 3,000 calls, as
// the first test's note counts). With it, what fails is what it held at
// the freeze (at most the 8 in flight), the few calls picked onto it
// before its stuck threshold (25 ms here), and one per ejection after
// that; 40 is the first test's bound.
// (This replaces Gray.AStuckSpellEjectsOnItsFirstFailure: one such failure
// no longer ejects, since a healthy member's tail call ends the same way;
// Gray.HealthyMembersWithALatencyTailAreNotEjected is the other side.)
TEST(Gray, ASilenceThatStandsOutEjectsOnItsSecondFailure) {
  auto backends = StartBackends(4);
  TestChannel channel("gray-spell", AllMembers(",\"ejectAfterFailures\":1000000"), false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady("gray-spell", 4));
  ASSERT_EQ(channel.RunLoad(400, 8), 0);
  StateView view;
  ASSERT_TRUE(Snapshot("gray-spell", &view));
  for (const auto& b : backends) {
    // Fast members (a few ms): the threshold is 8x their latency EWMA,
    // within [stuckCallMinMs 25, stuckCallMs 1000].
    const EndpointView* e = view.Find(b->address());
    ASSERT_NE(e, nullptr);
    EXPECT_GE(e->stuck_after_ms, 25u);
    EXPECT_LE(e->stuck_after_ms, 1000u);
    EXPECT_EQ(e->ejection_reason, "none");
  }
  ASSERT_TRUE(WaitPeersKnown("gray-spell"));
  ASSERT_TRUE(Snapshot("gray-spell", &view));
  EXPECT_EQ(view.peer_failure_share, 0);  // the peers answer every call
  backends[0]->Freeze(true);
  std::map<int, int> by_code;
  const int failed = channel.RunLoad(3000, 8, &by_code, nullptr, 300);
  printf("silence that stands out: %d of 3000 calls failed\n", failed);
  EXPECT_GE(failed, 1);
  EXPECT_LE(failed, 40);
  ASSERT_TRUE(Snapshot("gray-spell", &view));
  const EndpointView* frozen = view.Find(backends[0]->address());
  ASSERT_NE(frozen, nullptr);
  EXPECT_GE(frozen->ejections, 1u);
  EXPECT_TRUE(frozen->ejection_reason == "stuck" || frozen->ejection_reason == "probe")
      << frozen->ejection_reason;
  for (size_t i = 1; i < backends.size(); ++i) {
    EXPECT_EQ(view.Find(backends[i]->address())->failures, 0u);
    EXPECT_EQ(view.Find(backends[i]->address())->ejections, 0u);
  }
  backends[0]->Freeze(false);
}

// The other side of the rule above: four healthy members, each answering a
// seeded share of its calls 200 ms late, and deadlines inside that tail
// (100 ms), so those calls fail, often after a silence, on every member.
// The peers fail as often: such failures are the service's tail, not
// evidence against a member: at most 2 ejections in all (the fleet
// scenario `tail`'s target; before, the first failure after each silence
// ejected: 85 ejections in this test, 162 in 10 s of the fleet scenario),
// and the share of failed calls is the tail's. Two loads: 2 calls in
// flight with a 10% tail, 8 with 4%.
TEST(Gray, HealthyMembersWithALatencyTailAreNotEjected) {
  auto backends = StartBackends(4);
  TestChannel channel("gray-tail", AllMembers(""), false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady("gray-tail", 4));
  ASSERT_EQ(channel.RunLoad(400, 8), 0);
  struct Load {
    double share;
    int concurrency, calls;
  };
  uint64_t seed = 11;
  for (const Load& load : {Load{0.10, 2, 1000}, Load{0.04, 8, 2000}}) {
    for (auto& b : backends) b->SetTail(load.share, 200, seed++);
    const int failed = channel.RunLoad(load.calls, load.concurrency, nullptr, nullptr, 100);
    printf("tail %.0f%%, %d in flight: %d of %d calls failed\n", load.share * 100,
           load.concurrency, failed, load.calls);
    // binomial(calls, share), 6 sd: the tail calls, and no others
    const double sd = std::sqrt(load.calls * load.share * (1 - load.share));
    EXPECT_NEAR(failed, load.calls * load.share, 6 * sd);
  }
  StateView view;
  ASSERT_TRUE(Snapshot("gray-tail", &view));
  uint64_t ejections = 0, failures = 0;
  for (const auto& b : backends) {
    const EndpointView* e = view.Find(b->address());
    ASSERT_NE(e, nullptr);
    ejections += e->ejections;
    failures += e->failures;
  }
  printf("tail: %llu ejections\n", static_cast<unsigned long long>(ejections));
  EXPECT_GT(failures, 0u);  // the tail did fail calls on the members
  EXPECT_LE(ejections, 2u);
  for (auto& b : backends) b->SetTail(0, 0, 0);
}

// The bound: at most maxEjectionPercent of the aperture's members out at
// once, at least one. Two of four members freeze (as in a partition): with
// 25% only the first to be ejected is out, the other stays in (on
// probation: one call at a time); with the default 50% both are out. The
// status says how many are out and how many may be.
TEST(Gray, AtMostMaxEjectionPercentOfTheMembersAreOut) {
  struct Case {
    const char* name;
    std::string extra;
    uint32_t percent, max_out;
  };
  for (const Case& c : {Case{"gray-bound-25", ",\"maxEjectionPercent\":25", 25, 1},
                        Case{"gray-bound-50", "", 50, 2}}) {
    auto backends = StartBackends(4);
    TestChannel channel(c.name, AllMembers(c.extra), false);
    channel.SetAddresses(Addresses(backends));
    ASSERT_TRUE(WaitAllMembersReady(c.name, 4));
    ASSERT_EQ(channel.RunLoad(400, 8), 0);
    ASSERT_TRUE(WaitPeersKnown(c.name));
    backends[0]->Freeze(true);
    backends[1]->Freeze(true);
    channel.RunLoad(1500, 8, nullptr, nullptr, 300);
    StateView view;
    ASSERT_TRUE(Snapshot(c.name, &view));
    EXPECT_EQ(view.max_ejection_percent, c.percent) << c.name;
    EXPECT_EQ(view.max_members_out, c.max_out) << c.name;
    EXPECT_EQ(view.members_out, c.max_out) << c.name;
    int ever_ejected = 0;
    for (int i = 0; i < 2; ++i) {
      const EndpointView* e = view.Find(backends[i]->address());
      ASSERT_NE(e, nullptr);
      ever_ejected += e->ejections > 0;
      EXPECT_NE(e->health, "ok") << c.name << " " << i;  // out, or one call at a time
    }
    EXPECT_EQ(ever_ejected, static_cast<int>(c.max_out)) << c.name;
    for (int i = 2; i < 4; ++i) {
      EXPECT_EQ(view.Find(backends[i]->address())->ejections, 0u) << c.name;
      EXPECT_EQ(view.Find(backends[i]->address())->failures, 0u) << c.name;
    }
    backends[0]->Freeze(false);
    backends[1]->Freeze(false);
  }
}

// A fixed threshold when the latency factor is 0: stuckCallMs itself.
TEST(Gray, StuckThresholdIsStuckCallMsWithoutTheLatencyFactor) {
  auto backends = StartBackends(4);
  TestChannel channel("gray-fixed",
                      AllMembers(",\"stuckLatencyFactor\":0,\"stuckCallMs\":700"), false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady("gray-fixed", 4));
  ASSERT_EQ(channel.RunLoad(200, 8), 0);
  StateView view;
  ASSERT_TRUE(Snapshot("gray-fixed", &view));
  for (const auto& b : backends) EXPECT_EQ(view.Find(b->address())->stuck_after_ms, 700u);
}

// Four members, the first behind a TcpProxy that can stop forwarding
// (TcpProxy::Freeze: from the client, a stopped process or a silent path:
// TCP acknowledges, HTTP/2 never answers).
struct ProxiedMembers {
  ProxiedMembers(const std::string& name, const std::string& extra)
      : backends(StartBackends(4)),
        proxy(backends[0]->port()),
        channel(name, AllMembers(extra), false),
        name(name) {}
  // Every member READY, 400 calls served, the peers' failure share known:
  // "", or what did not happen.
  std::string Start() {
    if (proxy.port() == 0) return "the proxy did not listen";
    std::vector<std::string> addresses = Addresses(backends);
    addresses[0] = proxy.address();
    channel.SetAddresses(addresses);
    if (!WaitAllMembersReady(name, 4)) return "not every member READY";
    if (channel.RunLoad(400, 8) != 0) return "a call failed before the fault";
    if (!WaitPeersKnown(name)) return "the peers' failure share stayed unknown";
    return "";
  }
  std::vector<std::unique_ptr<Backend>> backends;
  TcpProxy proxy;
  TestChannel channel;
  const std::string name;
};

// The proxied member freezes (ProxiedMembers). The policy's subchannels
// have HTTP/2 keepalive by default: the calls held there make the transport ping (keepaliveMs 200
// without a byte from the server), no answer comes (keepaliveTimeoutMs
// 1000) and the connection closes, so the member leaves READY and takes no
// more probes. gRPC's client spaces its pings 1 s apart and sends none on a
// connection without calls, so when the held calls end (300 ms deadlines)
// before the ping may go, the ping waits for the next call there: the first
// probe. The client therefore keeps serving while it waits, as a real one
// would; an idle client keeps the frozen connection until its next call.
// The new connection's handshake waits in the proxy; thawed, it completes,
// the member is READY with its health reset, and gets calls.
TEST(Gray, KeepaliveClosesAFrozenConnectionAndANewOneBringsTheMemberBack) {
  ProxiedMembers m("gray-keepalive", "");
  ASSERT_EQ(m.Start(), "");
  auto& backends = m.backends;
  TcpProxy& proxy = m.proxy;
  TestChannel& channel = m.channel;
  const uint64_t served = backends[0]->calls();
  EXPECT_GT(served, 0u);

  proxy.Freeze(true);
  std::map<int, int> by_code;
  const int failed = channel.RunLoad(2000, 8, &by_code, nullptr, 300);
  printf("frozen connection: %d of 2000 calls failed\n", failed);
  EXPECT_LE(failed, 40);  // as AStuckSpellEjectsOnItsFirstFailure
  StateView view;
  int failed_while_waiting = 0;
  EXPECT_TRUE(WaitFor(
      [&] {
        failed_while_waiting += channel.RunLoad(40, 2, nullptr, nullptr, 300);
        return Snapshot("gray-keepalive", &view) && !view.MemberReady(proxy.address());
      },
      20000))
      << "the frozen connection stayed READY";
  printf("while the connection closed: %d calls failed\n", failed_while_waiting);
  // Probes only: one per ejection (3 s, growing), each a held call.
  EXPECT_LE(failed_while_waiting, 4);
  for (size_t i = 1; i < backends.size(); ++i)
    EXPECT_EQ(view.Find(backends[i]->address())->failures, 0u);
  // Not READY: no calls go there, none fail.
  EXPECT_EQ(channel.RunLoad(1000, 8, nullptr, nullptr, 300), 0);

  proxy.Freeze(false);
  EXPECT_TRUE(WaitFor([&] {
    return Snapshot("gray-keepalive", &view) && view.MemberReady(proxy.address());
  })) << "the member did not come back";
  EXPECT_GE(proxy.accepted(), 2);  // a new connection
  ASSERT_TRUE(Snapshot("gray-keepalive", &view));
  const EndpointView* back = view.Find(proxy.address());
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->health, "ok");
  EXPECT_EQ(back->ejection_reason, "none");  // reset by the new connection
  EXPECT_EQ(channel.RunLoad(1000, 8, nullptr, nullptr, 1000), 0);
  EXPECT_GT(backends[0]->calls(), served);
}

// keepaliveMs 0 leaves the channel's settings (gRPC: no keepalive): the
// frozen connection stays READY, the member only ejected, long after the
// 1.2 s keepalive would have needed.
TEST(Gray, WithoutKeepaliveAFrozenConnectionStaysReady) {
  ProxiedMembers m("gray-nokeepalive", ",\"keepaliveMs\":0");
  ASSERT_EQ(m.Start(), "");
  TcpProxy& proxy = m.proxy;
  TestChannel& channel = m.channel;
  proxy.Freeze(true);
  channel.RunLoad(2000, 8, nullptr, nullptr, 300);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  StateView view;
  ASSERT_TRUE(Snapshot("gray-nokeepalive", &view));
  EXPECT_TRUE(view.MemberReady(proxy.address()));
  const EndpointView* frozen = view.Find(proxy.address());
  ASSERT_NE(frozen, nullptr);
  EXPECT_GE(frozen->ejections, 1u);
  EXPECT_EQ(proxy.accepted(), 1);
  proxy.Freeze(false);
}

// Keepalive's other side: a healthy member that pauses (a long GC pause, a
// throttled container; from the client, the proxy's freeze) and answers
// again inside its calls' deadlines (10 s here). A pause shorter than
// keepaliveMs + keepaliveTimeoutMs (1.2 s) costs nothing: the calls held
// there finish late, new ones go to the peers meanwhile, nothing is
// ejected. A longer one closes the connection, and the calls held there
// fail UNAVAILABLE where they would have finished late: at most the calls
// in flight, because a silent member gets no new calls (probation). With
// keepaliveMs 0 the same pause costs nothing.
TEST(Gray, APauseWithinTheDeadlineCostsAtMostTheCallsHeldWhenKeepaliveCloses) {
  struct Case {
    const char* name;
    const char* extra;
    int pause_ms;
    bool closes;
  };
  for (const Case& c : {Case{"gray-pause-short", "", 600, false},
                        Case{"gray-pause-long", "", 4000, true},
                        Case{"gray-pause-long-off", ",\"keepaliveMs\":0", 4000, false}}) {
    ProxiedMembers m(c.name, c.extra);
    ASSERT_EQ(m.Start(), "") << c.name;
    auto& backends = m.backends;
    TcpProxy& proxy = m.proxy;
    TestChannel& channel = m.channel;

    std::atomic<bool> paused_and_back{false};
    std::thread pause([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      proxy.Freeze(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(c.pause_ms));
      proxy.Freeze(false);
      paused_and_back.store(true);
    });
    // Batches until the pause is over, then one more; a batch waits at
    // most its calls' deadline, and the whole at most the pause + 15 s.
    std::map<int, int> by_code;
    int failed = 0;
    int batches = 0;
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(c.pause_ms + 15000);
    for (bool last = false; !last && std::chrono::steady_clock::now() < give_up; ++batches) {
      last = paused_and_back.load();
      failed += channel.RunLoad(50, 8, &by_code, nullptr, 10000);
    }
    pause.join();
    EXPECT_TRUE(paused_and_back.load()) << c.name;
    printf("%s: pause %d ms, %d batches, %d calls failed\n", c.name, c.pause_ms, batches,
           failed);
    StateView view;
    ASSERT_TRUE(Snapshot(c.name, &view));
    if (c.closes) {
      EXPECT_GE(proxy.accepted(), 2) << c.name << ": keepalive did not close the connection";
      EXPECT_LE(failed, 8) << c.name;  // at most the 8 in flight: one close
      EXPECT_EQ(failed, by_code[static_cast<int>(grpc::StatusCode::UNAVAILABLE)]) << c.name;
    } else {
      EXPECT_EQ(failed, 0) << c.name;
      EXPECT_EQ(proxy.accepted(), 1) << c.name;
      for (const EndpointView& e : view.endpoints) EXPECT_EQ(e.ejections, 0u) << c.name;
    }
    for (size_t i = 1; i < backends.size(); ++i)
      EXPECT_EQ(view.Find(backends[i]->address())->failures, 0u) << c.name;
  }
}

}  // namespace
}  // namespace aperture_test
