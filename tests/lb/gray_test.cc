// Gray failures through real channels and real servers on 127.0.0.1: a
// member that accepts calls and never answers them while its connection
// stays up (Backend::Freeze, as a hung process). Its subchannel stays READY,
// so only the policy's own health signals (ap_health.h) keep calls away.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

// Every one of the 4 backends in the aperture; no retries, so each call is
// one attempt on one member.
std::string AllMembers(const std::string& extra) {
  return Config("{\"mode\":\"continuous\",\"minAperture\":4,\"peerIndex\":0,"
                "\"peerCount\":1,\"eagerConnect\":true" + extra + "}");
}

uint64_t CallsOf(const std::vector<std::unique_ptr<Backend>>& backends, size_t from) {
  uint64_t total = 0;
  for (size_t i = from; i < backends.size(); ++i) total += backends[i]->calls();
  return total;
}

// With 8 calls in flight and a 300 ms deadline, one frozen member of 4:
// the draws are independent, so without ejection both land on it for
// about 1 call in 16 (about 190 of these 3,000) and each such call waits
// out its deadline. With ejection after 5 failures in a row, what fails
// is what was sent before the first deadlines (at most the 8 in flight)
// plus one probe per ejection (1 s). 40 leaves room for a slow machine
// (more ejections while the load runs longer) and is far below 190.
TEST(Gray, FrozenMemberIsEjectedAndFewCallsFail) {
  auto backends = StartBackends(4);
  TestChannel channel("gray-freeze", AllMembers(""), /*retries=*/false);
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitAllMembersReady("gray-freeze", 4));
  ASSERT_EQ(channel.RunLoad(200, 8), 0);

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
// Stuck detection (calls in flight there and none ended for stuckCallMs)
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

}  // namespace
}  // namespace aperture_test
