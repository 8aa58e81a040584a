// The tail scenario's parts: the interop server's seeded latency tail
// (interop/testing/latency_tail.h), alone and as a real process whose
// delayed calls are exactly the seed's draws, and the scenario's figures
// from made-up call logs (interop/fleet/fleet_tail_calls.h).
#include <signal.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include <grpc/grpc.h>
#include <gtest/gtest.h>

#include "grpc/testing/messages.pb-c.h"
#include "interop/common/proc.h"
#include "interop/common/unary_call.h"
#include "interop/fleet/fleet_tail_calls.h"
#include "interop/testing/latency_tail.h"
#include "tests/interop/fleet_helper.h"

namespace {

TEST(LatencyTailTest, DrawsTheSeedsShareAndRefusesBadValues) {
  latency_tail *t = io_latency_tail_create(0.1, 200, 42);
  ASSERT_NE(t, nullptr);
  long tails = 0;
  const int n = 100000;
  for (int k = 0; k < n; k++) {
    const long ms = io_latency_tail_next_ms(t);
    ASSERT_TRUE(ms == 0 || ms == 200);
    // the stateless draw agrees with the server's, call by call
    ASSERT_EQ(ms == 200, io_latency_tail_is_tail(42, (uint64_t)k, 0.1) == 1) << k;
    tails += ms == 200;
  }
  EXPECT_EQ((uint64_t)tails, io_latency_tail_count(t));
  io_latency_tail_destroy(t);
  // binomial(100000, 0.1): sd 95; 6 sd
  EXPECT_NEAR(tails, 10000, 570);
  // another seed, another pattern
  int differ = 0;
  for (int k = 0; k < 1000; k++)
    differ += io_latency_tail_is_tail(42, k, 0.1) != io_latency_tail_is_tail(43, k, 0.1);
  EXPECT_GT(differ, 50);

  struct Case {
    double share;
    long ms;
    long want;
  };
  for (Case c : {Case{0, 200, 0}, Case{1, 30, 30}, Case{0.5, 0, 0} /* no delay: no tail */}) {
    t = io_latency_tail_create(c.share, c.ms, 1);
    ASSERT_NE(t, nullptr);
    for (int k = 0; k < 1000; k++) ASSERT_EQ(c.want, io_latency_tail_next_ms(t)) << c.share;
    io_latency_tail_destroy(t);
  }
  EXPECT_EQ(nullptr, io_latency_tail_create(1.5, 10, 1));
  EXPECT_EQ(nullptr, io_latency_tail_create(-0.1, 10, 1));
  EXPECT_EQ(nullptr, io_latency_tail_create(0.1, LATENCY_TAIL_MAX_MS + 1, 1));
  EXPECT_EQ(0, io_latency_tail_next_ms(nullptr));
  EXPECT_EQ(0u, io_latency_tail_count(nullptr));
}

class TailServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { grpc_init(); }
  static void TearDownTestSuite() { grpc_shutdown(); }
};

// Calls one after the other reach the server in order, so call k is
// delayed exactly when the seed's draw k says so: with a 400 ms tail and
// 150 ms deadlines, those calls and no others fail.
TEST_F(TailServerTest, TheSeedsDrawsAreTheCallsThatAnswerLate) {
  std::string dir = TempDir("tail_server");
  std::vector<std::string> args = {InteropBinary("server"), "--port",        "0",
                                   "--tail-share",          "0.25",          "--tail-ms",
                                   "400",                   "--tail-seed",   "7",
                                   "--stats-file",          dir + "/s.json"};
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  proc *p = io_proc_start(argv.data(), (dir + "/server.log").c_str());
  ASSERT_NE(p, nullptr);
  char line[128] = "";
  ASSERT_EQ(0, io_proc_wait_line(p, "listening ", 10000, line, sizeof(line)));
  const std::string target = std::string("ipv4:") + line;
  grpc_channel *ch = io_unary_channel_create(target.c_str(), nullptr);
  const int n = 40;
  int late = 0, expected = 0;
  for (int k = 0; k < n; k++) {
    Grpc__Testing__SimpleRequest req = GRPC__TESTING__SIMPLE_REQUEST__INIT;
    unary_result r;
    ASSERT_EQ(0, io_unary_call(ch, "/grpc.testing.TestService/UnaryCall", &req.base,
                               &grpc__testing__simple_response__descriptor, nullptr, nullptr, 150,
                               &r));
    const bool tail = io_latency_tail_is_tail(7, (uint64_t)k, 0.25) == 1;
    EXPECT_EQ(tail ? GRPC_STATUS_DEADLINE_EXCEEDED : GRPC_STATUS_OK, r.code) << "call " << k;
    late += r.code == GRPC_STATUS_DEADLINE_EXCEEDED;
    expected += tail;
    io_unary_result_free(&r);
  }
  grpc_channel_destroy(ch);
  EXPECT_GT(expected, 0);  // the seed draws some tail calls, and not all
  EXPECT_LT(expected, n);
  EXPECT_EQ(expected, late);
  int status = io_proc_stop(p, 5000);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Json st = ReadJson(dir + "/s.json");
  ASSERT_TRUE(st);
  EXPECT_EQ(expected, Num(st.get(), "tail_calls"));
}

TEST_F(TailServerTest, RefusesBadTailFlags) {
  for (std::vector<std::string> flags :
       {std::vector<std::string>{"--tail-share", "2"}, {"--tail-share", "x"},
        {"--tail-ms", "-1"}, {"--tail-ms", "60001"}}) {
    std::vector<std::string> args = {InteropBinary("server"), "--port", "0"};
    args.insert(args.end(), flags.begin(), flags.end());
    Child c(args[0], std::vector<std::string>(args.begin() + 1, args.end()),
            TempDir("tail_flags") + "/server.log");
    int status = c.Wait(10000);
    EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2) << flags[1];
  }
}

// 3 servers, calls every 1 ms for 3.5 s: round robin, except that in the
// second window (1 s .. 2 s) server 2 takes every third call of server 0
// too; failed calls every 10th, one of them with no server.
TEST(TailCallsTest, FindsTheBusiestWholeWindowAndCountsEveryCall) {
  std::vector<gray_call> calls;
  int turn = 0;
  for (int64_t t = 0; t < 3500000; t += 1000) {
    int server = turn++ % 3;
    if (t >= 1000000 && t < 2000000 && server == 0 && turn % 2 == 0) server = 2;
    gray_call c = {t, 500, 0, server, 0};
    if (turn % 10 == 0) {
      c.code = 4;
      c.latency_us = 100000;
    }
    calls.push_back(c);
  }
  calls[50].server = GRAY_UNATTRIBUTED;
  tail_figures f;
  ASSERT_EQ(0, io_fleet_tail_figures(calls.data(), calls.size(), 3, 1000, 100, &f));
  EXPECT_EQ(3500, f.calls);
  EXPECT_EQ(350, f.failed);
  EXPECT_EQ(3150, f.ok);
  EXPECT_DOUBLE_EQ(0.1, f.failed_share);
  EXPECT_DOUBLE_EQ(0.5, f.p50_ms);
  EXPECT_DOUBLE_EQ(100, f.p99_ms);
  // windows 0, 1, 2 are whole; 3 (3.0 .. 3.5 s) is cut short and left out
  EXPECT_EQ(3, f.windows);
  EXPECT_EQ(1, f.busiest_window);
  EXPECT_EQ(2, f.busiest_server);
  // window 1: server 2 has its 333 or 334 plus half of server 0's
  long c[3] = {0, 0, 0};
  for (const gray_call &x : calls)
    if (x.start_us >= 1000000 && x.start_us < 2000000) c[x.server]++;
  EXPECT_DOUBLE_EQ((double)c[2] * 3 / 1000, f.busiest_max_mean);
  EXPECT_GT(f.busiest_max_mean, 1.4);
}

TEST(TailCallsTest, RefusesBadArgumentsAndSaysNothingOfThinWindows) {
  gray_call one = {0, 100, 0, 0, 0};
  tail_figures f;
  EXPECT_EQ(-1, io_fleet_tail_figures(nullptr, 1, 3, 1000, 1, &f));
  EXPECT_EQ(-1, io_fleet_tail_figures(&one, 0, 3, 1000, 1, &f));
  EXPECT_EQ(-1, io_fleet_tail_figures(&one, 1, 0, 1000, 1, &f));
  EXPECT_EQ(-1, io_fleet_tail_figures(&one, 1, GRAY_MAX_SERVERS + 1, 1000, 1, &f));
  EXPECT_EQ(-1, io_fleet_tail_figures(&one, 1, 3, 0, 1, &f));
  // 3 calls over 2.5 s: no window has 100 calls
  gray_call few[3] = {{0, 100, 0, 0, 0}, {1200000, 100, 0, 1, 0}, {2500000, 100, 0, 2, 0}};
  ASSERT_EQ(0, io_fleet_tail_figures(few, 3, 3, 1000, 100, &f));
  EXPECT_EQ(0, f.windows);
  EXPECT_EQ(-1, f.busiest_max_mean);
  EXPECT_EQ(-1, f.busiest_server);
}

}  // namespace
