// The interop client as a real process against real servers: policies,
// rpc-behavior, per-server counts, connections, LoadBalancerStatsService.
#include <sys/wait.h>
#include <string.h>

#include <map>
#include <string>

#include <grpc/grpc.h>
#include <gtest/gtest.h>

#include "grpc/testing/messages.pb-c.h"
#include "interop/common/unary_call.h"
#include "tests/interop/fleet_helper.h"

namespace {

std::map<std::string, long> Peers(const json_value *summary) {
  std::map<std::string, long> out;
  const json_value *peers = io_json_get(summary, "peers");
  for (size_t i = 0; i < io_json_size(peers); i++) {
    out[io_json_key_at(peers, i)] = static_cast<long>(io_json_number(io_json_at(peers, i), 0));
  }
  return out;
}

TEST(ClientTest, RoundRobinReachesEveryServerAndCountsAgreeWithTheServers) {
  ServerSet servers(3);
  Json summary = RunClient({"--target", servers.Target(), "--lb", "round_robin", "--calls", "300",
                            "--concurrency", "4"},
                           servers.dir());
  ASSERT_TRUE(summary);
  EXPECT_EQ(300, io_json_get_number(summary.get(), "started", -1));
  EXPECT_EQ(300, io_json_get_number(summary.get(), "ok", -1));
  EXPECT_EQ(0, io_json_get_number(summary.get(), "failed", -1));
  std::map<std::string, long> peers = Peers(summary.get());
  ASSERT_EQ(3u, peers.size());
  std::vector<Json> stats = servers.StopAll();
  long total = 0;
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(stats[i]);
    long calls = static_cast<long>(io_json_get_number(stats[i].get(), "calls", -1));
    EXPECT_GT(calls, 0) << "server " << i << " got no call";
    EXPECT_EQ(peers[servers.hostname(i)], calls) << "client and server disagree on s" << i;
    total += calls;
  }
  EXPECT_EQ(300, total);
  const json_value *lat = io_json_get(summary.get(), "latency_us");
  EXPECT_GT(io_json_get_number(lat, "p50", 0), 0);
  EXPECT_LE(io_json_get_number(lat, "p50", 0), io_json_get_number(lat, "p99", 0));
  EXPECT_LE(io_json_get_number(lat, "p99", 0), io_json_get_number(lat, "p999", 0));
  EXPECT_LE(io_json_get_number(lat, "p999", 0), io_json_get_number(lat, "max", 0));
}

TEST(ClientTest, PickFirstSendsEverythingToOneServer) {
  ServerSet servers(3);
  Json summary = RunClient({"--target", servers.Target(), "--lb", "pick_first", "--calls", "100"},
                           servers.dir());
  ASSERT_TRUE(summary);
  EXPECT_EQ(100, io_json_get_number(summary.get(), "ok", -1));
  std::map<std::string, long> peers = Peers(summary.get());
  ASSERT_EQ(1u, peers.size());
  EXPECT_EQ(100, peers.begin()->second);
}

TEST(ClientTest, EachChannelOpensItsOwnConnectionToEveryServer) {
  // round_robin connects every channel to every address: 4 channels give
  // exactly 4 connections per server. --linger-s keeps the channels open
  // for the servers' sampler (every 50 ms) to see them all.
  ServerSet servers(3);
  Json summary = RunClient({"--target", servers.Target(), "--lb", "round_robin", "--channels", "4",
                            "--calls", "200", "--linger-s", "1"},
                           servers.dir());
  ASSERT_TRUE(summary);
  EXPECT_EQ(200, io_json_get_number(summary.get(), "ok", -1));
  std::vector<Json> stats = servers.StopAll();
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(stats[i]);
    EXPECT_EQ(4, io_json_get_number(stats[i].get(), "connections_peak", -1)) << "server " << i;
    EXPECT_EQ(4, io_json_get_number(stats[i].get(), "connections_opened", -1)) << "server " << i;
  }
}

TEST(ClientTest, RpcBehaviorErrorCodeIsCountedByCode) {
  ServerSet servers(2);
  Json summary = RunClient({"--target", servers.Target(), "--lb", "round_robin", "--calls", "40",
                            "--rpc-behavior", "error-code-7"},
                           servers.dir());
  ASSERT_TRUE(summary);
  EXPECT_EQ(0, io_json_get_number(summary.get(), "ok", -1));
  EXPECT_EQ(40, io_json_get_number(summary.get(), "failed", -1));
  EXPECT_EQ(40, io_json_get_number(io_json_get(summary.get(), "by_code"), "7", -1));
}

TEST(ClientTest, RateAndDurationBoundTheRun) {
  // --calls 0 runs until --duration-s; at 50 calls/s for 1 s the client
  // cannot send more than 50 (+1 for the first tick) calls.
  ServerSet servers(1);
  Json summary = RunClient({"--target", servers.Target(), "--calls", "0", "--rate", "50",
                            "--duration-s", "1"},
                           servers.dir());
  ASSERT_TRUE(summary);
  double started = io_json_get_number(summary.get(), "started", -1);
  EXPECT_GT(started, 0);
  EXPECT_LE(started, 51);
}

TEST(ClientTest, BadFlagsExitWithUsageError) {
  std::string dir = TempDir("client_badflags");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--calls", "10"}, {"--target", "ipv4:127.0.0.1:1", "--rate", "-1"},
        {"--target", "ipv4:127.0.0.1:1", "--peer-index", "3", "--peer-count", "2"},
        {"--target", "ipv4:127.0.0.1:1", "--lb", "Bad Name"},
        {"--target", "ipv4:127.0.0.1:1", "--method", "stream"}}) {
    Child c(InteropBinary("client"), args, dir + "/log");
    int status = c.Wait(10000);
    ASSERT_GE(status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(2, WEXITSTATUS(status)) << args[0] << " " << args[1];
  }
}

class StatsServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { grpc_init(); }
  static void TearDownTestSuite() { grpc_shutdown(); }
};

TEST_F(StatsServiceTest, GetClientStatsReturnsPerPeerCountsOfTheNextCalls) {
  ServerSet servers(3);
  std::string summary_path = servers.dir() + "/stats_client.json";
  Child client(InteropBinary("client"),
               {"--target", servers.Target(), "--lb", "round_robin", "--calls", "0", "--rate",
                "200", "--duration-s", "30", "--stats-port", "0", "--summary-file", summary_path},
               servers.dir() + "/stats_client.log");
  std::string addr = client.WaitLine("stats listening ");
  ASSERT_FALSE(addr.empty());
  grpc_channel *ch = io_unary_channel_create(("ipv4:" + addr).c_str(), nullptr);

  Grpc__Testing__LoadBalancerStatsRequest req = GRPC__TESTING__LOAD_BALANCER_STATS_REQUEST__INIT;
  req.num_rpcs = 60;
  req.timeout_sec = 20;
  unary_result r;
  ASSERT_EQ(0, io_unary_call(ch, "/grpc.testing.LoadBalancerStatsService/GetClientStats", &req.base,
                          &grpc__testing__load_balancer_stats_response__descriptor, nullptr,
                          nullptr, 30000, &r));
  ASSERT_EQ(GRPC_STATUS_OK, r.code) << r.details;
  auto *resp = reinterpret_cast<Grpc__Testing__LoadBalancerStatsResponse *>(r.response);
  ASSERT_NE(nullptr, resp);
  long sum = 0;
  for (size_t i = 0; i < resp->n_rpcs_by_peer; i++) {
    EXPECT_GT(resp->rpcs_by_peer[i]->value, 0);
    sum += resp->rpcs_by_peer[i]->value;
  }
  EXPECT_EQ(0, resp->num_failures);
  EXPECT_EQ(60, sum + resp->num_failures);
  EXPECT_EQ(3u, resp->n_rpcs_by_peer);
  // The same calls split by method: one method here, so the same counts.
  ASSERT_EQ(1u, resp->n_rpcs_by_method);
  EXPECT_STREQ("UNARY_CALL", resp->rpcs_by_method[0]->key);
  const auto *by_method = resp->rpcs_by_method[0]->value;
  ASSERT_NE(nullptr, by_method);
  ASSERT_EQ(resp->n_rpcs_by_peer, by_method->n_rpcs_by_peer);
  for (size_t i = 0; i < resp->n_rpcs_by_peer; i++) {
    bool found = false;
    for (size_t k = 0; k < by_method->n_rpcs_by_peer; k++) {
      if (strcmp(resp->rpcs_by_peer[i]->key, by_method->rpcs_by_peer[k]->key) == 0) {
        EXPECT_EQ(resp->rpcs_by_peer[i]->value, by_method->rpcs_by_peer[k]->value);
        found = true;
      }
    }
    EXPECT_TRUE(found) << resp->rpcs_by_peer[i]->key;
  }
  io_unary_result_free(&r);

  Grpc__Testing__LoadBalancerAccumulatedStatsRequest acc_req =
      GRPC__TESTING__LOAD_BALANCER_ACCUMULATED_STATS_REQUEST__INIT;
  ASSERT_EQ(0, io_unary_call(ch, "/grpc.testing.LoadBalancerStatsService/GetClientAccumulatedStats",
                          &acc_req.base,
                          &grpc__testing__load_balancer_accumulated_stats_response__descriptor,
                          nullptr, nullptr, 10000, &r));
  ASSERT_EQ(GRPC_STATUS_OK, r.code) << r.details;
  auto *acc = reinterpret_cast<Grpc__Testing__LoadBalancerAccumulatedStatsResponse *>(r.response);
  ASSERT_EQ(1u, acc->n_stats_per_method);
  EXPECT_STREQ("UNARY_CALL", acc->stats_per_method[0]->key);
  auto *ms = acc->stats_per_method[0]->value;
  EXPECT_GE(ms->rpcs_started, 60);
  ASSERT_EQ(1u, ms->n_result);
  EXPECT_EQ(0, ms->result[0]->key);
  EXPECT_GE(ms->result[0]->value, 60);
  EXPECT_LE(ms->result[0]->value, ms->rpcs_started);
  io_unary_result_free(&r);

  // Invalid request: num_rpcs must be positive.
  req.num_rpcs = 0;
  ASSERT_EQ(0, io_unary_call(ch, "/grpc.testing.LoadBalancerStatsService/GetClientStats", &req.base,
                          &grpc__testing__load_balancer_stats_response__descriptor, nullptr,
                          nullptr, 10000, &r));
  EXPECT_EQ(GRPC_STATUS_INVALID_ARGUMENT, r.code);
  io_unary_result_free(&r);
  grpc_channel_destroy(ch);

  // SIGTERM stops the run early; the client still exits 0 with a summary.
  int status = client.Terminate(20000);
  ASSERT_GE(status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Json summary = ReadJson(summary_path);
  ASSERT_TRUE(summary);
  EXPECT_GE(io_json_get_number(summary.get(), "ok", -1), 60);
  EXPECT_EQ(0, io_json_get_number(summary.get(), "failed", -1));
}

}  // namespace
