// The gray scenario's figures from call logs (interop/fleet/fleet_gray_calls.h)
// on made-up calls whose answers are known: who a call is attributed to,
// the failure split, the quantiles, and the detect and recover windows.
#include "interop/fleet/fleet_gray_calls.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

gray_servers FourServers() {
  gray_servers s = {};
  s.n = 4;
  for (int i = 0; i < 4; i++) snprintf(s.addrs[i], sizeof(s.addrs[i]), "127.0.0.1:%d", 5000 + i);
  return s;
}

TEST(GrayCallsTest, AttributesHostnamesAndSingleAddressesButNotTheTarget) {
  gray_servers s = FourServers();
  EXPECT_EQ(2, io_fleet_gray_server_of(&s, "s2"));
  EXPECT_EQ(3, io_fleet_gray_server_of(&s, "ipv4:127.0.0.1:5003"));
  // gRPC's peer of a call that never reached a connection: the target
  EXPECT_EQ(GRAY_UNATTRIBUTED,
            io_fleet_gray_server_of(&s, "ipv4:127.0.0.1:5000,127.0.0.1:5001,127.0.0.1:5002"));
  EXPECT_EQ(GRAY_UNATTRIBUTED, io_fleet_gray_server_of(&s, "s4"));  // no such slot
  EXPECT_EQ(GRAY_UNATTRIBUTED, io_fleet_gray_server_of(&s, "s1x"));
  EXPECT_EQ(GRAY_UNATTRIBUTED, io_fleet_gray_server_of(&s, "ipv4:127.0.0.1:6000"));
  EXPECT_EQ(GRAY_UNATTRIBUTED, io_fleet_gray_server_of(&s, "-"));
  EXPECT_EQ(GRAY_UNATTRIBUTED, io_fleet_gray_server_of(&s, nullptr));
}

TEST(GrayCallsTest, ParsesLinesAndRefusesMalformedOnes) {
  gray_servers s = FourServers();
  gray_call c = {};
  ASSERT_EQ(0, io_fleet_gray_parse_line(&s, "123456 300100 4 ipv4:127.0.0.1:5001\n", &c));
  EXPECT_EQ(123456, c.start_us);
  EXPECT_EQ(300100, c.latency_us);
  EXPECT_EQ(4, c.code);
  EXPECT_EQ(1, c.server);
  gray_call before = c;
  EXPECT_EQ(-1, io_fleet_gray_parse_line(&s, "123 456 17 s1", &c));  // code out of range
  EXPECT_EQ(-1, io_fleet_gray_parse_line(&s, "123 456 0", &c));      // no server
  EXPECT_EQ(-1, io_fleet_gray_parse_line(&s, "abc 456 0 s1", &c));
  EXPECT_EQ(before.start_us, c.start_us);  // untouched
}

// Calls every 10 ms from t=0 to 4 s, round robin over four servers, except
// that server 1 gets none from 1.3 s (fault at 1 s) until the heal at 2 s,
// when its calls go to server 2 instead; from 2.4 s server 1 is back in turn.
// Calls on server 1 in the fault fail (DEADLINE_EXCEEDED, 300 ms); two
// calls on server 3 fail too, and one with no server.
std::vector<gray_call> Timeline() {
  std::vector<gray_call> calls;
  int turn = 0;
  for (int64_t t = 0; t < 4000000; t += 10000) {
    int server = turn++ % 4;
    if (server == 1 && t >= 1300000 && t < 2400000) server = 2;
    gray_call c = {t, 2000, 0, server};
    if (server == 1 && t >= 1000000 && t < 2000000) {
      c.code = 4;
      c.latency_us = 300000;
    }
    calls.push_back(c);
  }
  calls[10].code = 14;
  calls[10].server = 3;
  calls[11].code = 14;
  calls[11].server = 3;
  calls[12].code = 4;
  calls[12].server = GRAY_UNATTRIBUTED;
  return calls;
}

TEST(GrayCallsTest, SplitsFailuresAndFindsDetectAndRecoverWindows) {
  std::vector<gray_call> calls = Timeline();
  gray_windows w = {1000000, 2000000, 1, 4, 200, 10};
  gray_figures f;
  ASSERT_EQ(0, io_fleet_gray_figures(calls.data(), calls.size(), &w, &f));
  EXPECT_EQ(400, f.calls);
  // server 1's calls in [1.0, 1.3) s failed: 8 of them
  long on_faulty = 0;
  for (const gray_call &c : calls) on_faulty += c.server == 1 && c.code != 0;
  EXPECT_EQ(8, on_faulty);
  EXPECT_EQ(8, f.failed_faulty);
  EXPECT_EQ(2, f.failed_healthy);
  EXPECT_EQ(1, f.failed_unattributed);
  EXPECT_EQ(f.failed_faulty + 3, f.failed);
  EXPECT_EQ(f.calls - f.failed, f.ok);
  EXPECT_EQ(2, f.by_code[14]);
  // server 1 gone from the window [1.4, 1.6) s (the one from 1.2 s still has
  // a call at 1.2..1.3): detect = 600 ms; no relapse until the heal
  EXPECT_DOUBLE_EQ(600, f.detect_ms);
  EXPECT_EQ(0, f.relapses);
  // back in turn from 2.4 s: the window [2.4, 2.6) s has 5 of its 20 calls
  // (25% >= 12.5%), the two before none
  EXPECT_DOUBLE_EQ(600, f.recover_ms);
  EXPECT_DOUBLE_EQ(2, f.p50_ms);
  EXPECT_DOUBLE_EQ(300, f.p99_ms);
}

TEST(GrayCallsTest, NeverDetectedOrRecoveredIsMinusOne) {
  std::vector<gray_call> calls;
  for (int64_t t = 0; t < 3000000; t += 10000) {
    int server = static_cast<int>(t / 10000) % 4;
    // server 1 keeps its share during the fault and is gone after the heal
    if (t >= 2000000 && server == 1) server = 0;
    calls.push_back({t, 1000, 0, server});
  }
  gray_windows w = {1000000, 2000000, 1, 4, 200, 10};
  gray_figures f;
  ASSERT_EQ(0, io_fleet_gray_figures(calls.data(), calls.size(), &w, &f));
  EXPECT_DOUBLE_EQ(-1, f.detect_ms);
  EXPECT_DOUBLE_EQ(-1, f.recover_ms);
  EXPECT_NEAR(0.25, f.share_during, 0.01);
  EXPECT_DOUBLE_EQ(0, f.share_after);
  EXPECT_EQ(0, f.failed);
}

// A partition: clients 0 and 1 lose servers 0 and 1 from 1 s to 2 s (their
// calls there fail), clients 2 and 3 keep every server. Four clients each
// call every server in turn every 10 ms.
TEST(GrayCallsTest, PartitionCountsOnlyItsClientsToItsServers) {
  std::vector<gray_call> calls;
  for (int64_t t = 0; t < 3000000; t += 10000) {
    for (int c = 0; c < 4; c++) {
      int server = static_cast<int>((t / 10000 + c) % 4);
      bool cut = c < 2 && server < 2 && t >= 1000000 && t < 2000000;
      // the partitioned clients' picks move off the cut servers after 0.3 s
      if (cut && t >= 1300000) server += 2;
      cut = cut && server < 2;
      calls.push_back({t, cut ? 300000 : 2000, cut ? 4 : 0, server, c});
    }
  }
  calls[2].code = 14;  // t = 0, client 2 on server 2: outside the partition
  gray_windows w = {1000000, 2000000, 1, 4, 200, 10, 0x3u, 0x3u};
  gray_figures f;
  ASSERT_EQ(0, io_fleet_gray_figures(calls.data(), calls.size(), &w, &f));
  EXPECT_EQ(1200, f.calls);
  // 30 steps of 10 ms in [1.0, 1.3) s: client 0 on s0/s1 in 16, client 1 in 15
  EXPECT_EQ(31, f.failed_faulty);
  EXPECT_EQ(1, f.failed_healthy);
  // windows over clients 0 and 1 only: [1.4, 1.6) s is the first without s0/s1
  EXPECT_DOUBLE_EQ(600, f.detect_ms);
  // back at once after the heal: half of those clients' calls (fair share
  // of two servers of four: 50%, half of it 25%)
  EXPECT_DOUBLE_EQ(200, f.recover_ms);
  EXPECT_NEAR(0.5, f.share_after, 0.01);
}

// The budget: calls on the faulty server that started before the fault and
// ended after it (whatever their status), plus 0.1% of every call.
TEST(GrayCallsTest, BudgetIsTheCallsInFlightAtTheFaultPlusATenthOfAPercent) {
  std::vector<gray_call> calls;
  for (int64_t t = 0; t < 3000000; t += 1000) {  // 3,000 calls, 1 ms apart
    calls.push_back({t, 2000, 0, static_cast<int>(t / 1000) % 4, 0});
  }
  // in flight to s1 at the fault (1 s): one ends after it, one fails at
  // its deadline; one on s1 ended exactly at the fault; s2's does not count
  calls[997] = {997000, 5000, 0, 1, 0};     // s1, 0.997 .. 1.002 s
  calls[993] = {993000, 300000, 4, 1, 0};   // s1, fails at 1.293 s
  calls[989] = {989000, 11000, 0, 1, 0};    // s1, ends at 1.000 s: not in flight
  calls[998] = {998000, 300000, 4, 2, 0};   // s2: a healthy server's
  gray_windows w = {1000000, 2000000, 1, 4, 200, 10};
  gray_figures f;
  ASSERT_EQ(0, io_fleet_gray_figures(calls.data(), calls.size(), &w, &f));
  EXPECT_EQ(2, f.inflight_at_fault);
  EXPECT_EQ(2 + 3, f.failed_budget);  // 3,000 calls: 3
  EXPECT_EQ(2, f.failed);
  // a partition counts only its clients' calls to its servers
  gray_windows part = {1000000, 2000000, 1, 4, 200, 10, 0x2u, 0x2u};  // client 1 only
  ASSERT_EQ(0, io_fleet_gray_figures(calls.data(), calls.size(), &part, &f));
  EXPECT_EQ(0, f.inflight_at_fault);
  EXPECT_EQ(3, f.failed_budget);
}

TEST(GrayCallsTest, RefusesBadWindowsAndNoCalls) {
  std::vector<gray_call> calls = Timeline();
  gray_figures f;
  gray_windows heal_first = {2000000, 1000000, 1, 4, 200, 10};
  EXPECT_EQ(-1, io_fleet_gray_figures(calls.data(), calls.size(), &heal_first, &f));
  gray_windows no_bucket = {1000000, 2000000, 1, 4, 0, 10};
  EXPECT_EQ(-1, io_fleet_gray_figures(calls.data(), calls.size(), &no_bucket, &f));
  gray_windows bad_slot = {1000000, 2000000, 4, 4, 200, 10};
  EXPECT_EQ(-1, io_fleet_gray_figures(calls.data(), calls.size(), &bad_slot, &f));
  gray_windows bad_mask = {1000000, 2000000, 1, 4, 200, 10, 0x10u, 0};
  EXPECT_EQ(-1, io_fleet_gray_figures(calls.data(), calls.size(), &bad_mask, &f));
  gray_windows w = {1000000, 2000000, 1, 4, 200, 10};
  EXPECT_EQ(-1, io_fleet_gray_figures(calls.data(), 0, &w, &f));
  EXPECT_EQ(-1, io_fleet_gray_figures(nullptr, 1, &w, &f));
}

}  // namespace
