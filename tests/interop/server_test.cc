// The interop server as a real process: TestService answers, rpc-behavior,
// health, stats file, clean SIGTERM.
#include <sys/wait.h>

#include <string>

#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <gtest/gtest.h>

#include "grpc/health/v1/health.pb-c.h"
#include "grpc/testing/empty.pb-c.h"
#include "grpc/testing/messages.pb-c.h"
#include "interop/common/unary_call.h"
#include "tests/common/raw_call.h"
#include "tests/interop/fleet_helper.h"

namespace {

class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { grpc_init(); }
  static void TearDownTestSuite() { grpc_shutdown(); }
};

struct Channel {
  explicit Channel(const std::string &target) : ch(io_unary_channel_create(target.c_str(), nullptr)) {}
  ~Channel() { grpc_channel_destroy(ch); }
  grpc_channel *ch;
};

unary_result Unary(grpc_channel *ch, const char *behavior, int timeout_ms = 10000) {
  Grpc__Testing__SimpleRequest req = GRPC__TESTING__SIMPLE_REQUEST__INIT;
  req.fill_server_id = 1;
  unary_result r;
  EXPECT_EQ(0, io_unary_call(ch, "/grpc.testing.TestService/UnaryCall", &req.base,
                          &grpc__testing__simple_response__descriptor,
                          behavior ? "rpc-behavior" : nullptr, behavior, timeout_ms, &r));
  return r;
}

TEST_F(ServerTest, UnaryCallFillsHostnameServerIdAndMetadata) {
  ServerSet servers(1);
  ASSERT_GT(servers.port(0), 0);
  Channel c(servers.Target());
  unary_result r = Unary(c.ch, nullptr);
  ASSERT_EQ(GRPC_STATUS_OK, r.code) << r.details;
  ASSERT_NE(nullptr, r.response);
  auto *resp = reinterpret_cast<Grpc__Testing__SimpleResponse *>(r.response);
  EXPECT_STREQ("s0", resp->hostname);
  EXPECT_STREQ("id0", resp->server_id);
  EXPECT_STREQ("s0", r.hostname_md);
  io_unary_result_free(&r);
}

TEST_F(ServerTest, EmptyCallAnswersWithHostnameMetadata) {
  ServerSet servers(1);
  Channel c(servers.Target());
  Grpc__Testing__Empty req = GRPC__TESTING__EMPTY__INIT;
  unary_result r;
  ASSERT_EQ(0, io_unary_call(c.ch, "/grpc.testing.TestService/EmptyCall", &req.base,
                          &grpc__testing__empty__descriptor, nullptr, nullptr, 10000, &r));
  EXPECT_EQ(GRPC_STATUS_OK, r.code) << r.details;
  EXPECT_NE(nullptr, r.response);
  EXPECT_STREQ("s0", r.hostname_md);
  io_unary_result_free(&r);
}

TEST_F(ServerTest, RpcBehaviorErrorCodeReturnsThatCode) {
  ServerSet servers(1);
  Channel c(servers.Target());
  for (int code : {1, 5, 7, 9, 14, 16}) {
    std::string behavior = "error-code-" + std::to_string(code);
    unary_result r = Unary(c.ch, behavior.c_str());
    EXPECT_EQ(code, static_cast<int>(r.code)) << behavior;
    EXPECT_EQ(nullptr, r.response);
    io_unary_result_free(&r);
  }
  // error-code-0 and unknown directives leave the call successful.
  unary_result r = Unary(c.ch, "error-code-0, some-future-directive");
  EXPECT_EQ(GRPC_STATUS_OK, r.code);
  io_unary_result_free(&r);
}

TEST_F(ServerTest, RpcBehaviorHostnameDirectiveAppliesOnlyOnThatServer) {
  ServerSet servers(2);
  Channel c0("ipv4:127.0.0.1:" + std::to_string(servers.port(0)));
  Channel c1("ipv4:127.0.0.1:" + std::to_string(servers.port(1)));
  const char *behavior = "hostname=s1 error-code-14";
  unary_result r0 = Unary(c0.ch, behavior);
  EXPECT_EQ(GRPC_STATUS_OK, r0.code) << r0.details;
  EXPECT_STREQ("s0", r0.hostname_md);
  io_unary_result_free(&r0);
  unary_result r1 = Unary(c1.ch, behavior);
  EXPECT_EQ(GRPC_STATUS_UNAVAILABLE, r1.code);
  io_unary_result_free(&r1);
}

TEST_F(ServerTest, RpcBehaviorSleepDelaysTheAnswerPastAShortDeadline) {
  ServerSet servers(1);
  Channel c(servers.Target());
  unary_result warm = Unary(c.ch, nullptr);  // connect first
  ASSERT_EQ(GRPC_STATUS_OK, warm.code);
  io_unary_result_free(&warm);
  // The server holds the answer 3 s; a 300 ms deadline must expire first.
  unary_result r = Unary(c.ch, "sleep-3000", 300);
  EXPECT_EQ(GRPC_STATUS_DEADLINE_EXCEEDED, r.code);
  io_unary_result_free(&r);
  // With a generous deadline the delayed call succeeds.
  unary_result ok = Unary(c.ch, "sleep-50,error-code-0", 20000);
  EXPECT_EQ(GRPC_STATUS_OK, ok.code);
  io_unary_result_free(&ok);
}

TEST_F(ServerTest, SleepingCallDoesNotBlockOthersOnASingleWorker) {
  ServerSet servers(1, {"--threads", "1"});
  Channel c(servers.Target());
  unary_result warm = Unary(c.ch, nullptr);
  ASSERT_EQ(GRPC_STATUS_OK, warm.code);
  io_unary_result_free(&warm);

  // Start a call that sleeps 1.5 s, without waiting for it.
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(nullptr);
  raw_call slow;
  raw_call_opts o = {};
  o.method = "/grpc.testing.TestService/UnaryCall";
  o.md_key = "rpc-behavior";
  o.md_value = "sleep-1500";
  o.timeout_ms = 30000;
  ASSERT_EQ(0, raw_call_start(&slow, c.ch, cq, &o));

  // Ten plain calls complete while the sleeping one is still pending.
  for (int i = 0; i < 10; i++) {
    unary_result r = Unary(c.ch, nullptr);
    EXPECT_EQ(GRPC_STATUS_OK, r.code);
    io_unary_result_free(&r);
  }
  grpc_event ev = grpc_completion_queue_next(cq, gpr_time_0(GPR_CLOCK_MONOTONIC), nullptr);
  EXPECT_EQ(GRPC_QUEUE_TIMEOUT, ev.type) << "the sleeping call finished before the plain calls";

  ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
  EXPECT_EQ(GRPC_OP_COMPLETE, ev.type);
  EXPECT_EQ(GRPC_STATUS_OK, slow.status);
  raw_call_release(&slow);
  grpc_completion_queue_shutdown(cq);
  grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
  grpc_completion_queue_destroy(cq);
}

TEST_F(ServerTest, HealthCheckServingAndUnknownServiceNotFound) {
  ServerSet servers(1);
  Channel c(servers.Target());
  Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  unary_result r;
  ASSERT_EQ(0, io_unary_call(c.ch, "/grpc.health.v1.Health/Check", &req.base,
                          &grpc__health__v1__health_check_response__descriptor, nullptr, nullptr,
                          10000, &r));
  ASSERT_EQ(GRPC_STATUS_OK, r.code) << r.details;
  ASSERT_NE(nullptr, r.response);
  EXPECT_EQ(GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING,
            reinterpret_cast<Grpc__Health__V1__HealthCheckResponse *>(r.response)->status);
  io_unary_result_free(&r);

  req.service = const_cast<char *>("no.such.Service");
  ASSERT_EQ(0, io_unary_call(c.ch, "/grpc.health.v1.Health/Check", &req.base,
                          &grpc__health__v1__health_check_response__descriptor, nullptr, nullptr,
                          10000, &r));
  EXPECT_EQ(GRPC_STATUS_NOT_FOUND, r.code);
  io_unary_result_free(&r);
}

TEST_F(ServerTest, StatsFileCountsCallsAndTheOneConnectionAndSigtermExitsCleanly) {
  ServerSet servers(1);
  {
    Channel c(servers.Target());
    for (int i = 0; i < 25; i++) {
      unary_result r = Unary(c.ch, i < 5 ? "error-code-3" : nullptr);
      io_unary_result_free(&r);
    }
    // Stop the server while the channel (one connection) is still open:
    // the final sample before shutdown sees it.
    Json stats = servers.Stop(0);
    ASSERT_TRUE(stats) << "server did not exit 0 or wrote no stats";
    EXPECT_EQ(25, io_json_get_number(stats.get(), "unary_call", -1));
    EXPECT_EQ(25, io_json_get_number(stats.get(), "calls", -1));
    EXPECT_EQ(20, io_json_get_number(io_json_get(stats.get(), "calls_by_code"), "0", -1));
    EXPECT_EQ(5, io_json_get_number(io_json_get(stats.get(), "calls_by_code"), "3", -1));
    EXPECT_EQ(1, io_json_get_number(stats.get(), "connections_current", -1));
    EXPECT_EQ(1, io_json_get_number(stats.get(), "connections_peak", -1));
    EXPECT_EQ(1, io_json_get_number(stats.get(), "connections_opened", -1));
  }
}

TEST_F(ServerTest, BadFlagsExitWithUsageError) {
  std::string dir = TempDir("badflags");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--port", "70000"}, {"--threads", "0"}, {"--bogus"},
        {"--extra-latency-ms", "x"}}) {
    Child c(InteropBinary("server"), args, dir + "/log");
    int status = c.Wait(10000);
    ASSERT_GE(status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(2, WEXITSTATUS(status)) << args[0];
  }
}

}  // namespace
