// The interop client's --rpc and --metadata (spelled as in gRPC's xDS
// interop client), checked at the servers: the method mix they count, and
// affinity keys that pin calls to one server.
#include <sys/wait.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

constexpr char kHashConfig[] =
    "{\"loadBalancingConfig\":[{\"aperture\":{\"minAperture\":4,\"affinity\":\"hash\","
    "\"affinityHeader\":\"x-user\"}}]}";

// Per-server counts of one method ("unary_call", "empty_call").
std::vector<long> MethodCounts(const std::vector<Json> &stats, const char *method) {
  std::vector<long> out;
  for (const auto &s : stats) out.push_back(static_cast<long>(io_json_get_number(s.get(), method, -1)));
  return out;
}

int ServersWithCalls(const std::vector<long> &counts) {
  int n = 0;
  for (long c : counts) n += c > 0;
  return n;
}

long Sum(const std::vector<long> &counts) {
  long t = 0;
  for (long c : counts) t += c;
  return t;
}

TEST(ClientOptionsTest, RpcListSendsTheMethodsInTurn) {
  ServerSet servers(2, {}, "opts_rpc");
  Json summary = RunClient({"--target", servers.Target(), "--lb", "round_robin", "--calls", "100",
                            "--rpc", "UnaryCall,EmptyCall"},
                           servers.dir());
  ASSERT_TRUE(summary);
  EXPECT_EQ(100, io_json_get_number(summary.get(), "ok", -1));
  std::vector<Json> stats = servers.StopAll();
  EXPECT_EQ(50, Sum(MethodCounts(stats, "unary_call")));
  EXPECT_EQ(50, Sum(MethodCounts(stats, "empty_call")));
}

TEST(ClientOptionsTest, MetadataKeyPinsCallsToOneServerUnderHashAffinity) {
  ServerSet servers(4, {}, "opts_md");
  Json summary = RunClient({"--target", servers.Target(), "--service-config", kHashConfig,
                            "--calls", "80", "--metadata", "x-user:alice"},
                           servers.dir());
  ASSERT_TRUE(summary);
  EXPECT_EQ(80, io_json_get_number(summary.get(), "ok", -1));
  EXPECT_STREQ("alice", io_json_string(io_json_get(io_json_get(summary.get(), "metadata"), "x-user")));
  std::vector<long> unary = MethodCounts(servers.StopAll(), "unary_call");
  EXPECT_EQ(80, Sum(unary));
  EXPECT_EQ(1, ServersWithCalls(unary));  // one key, one owner
}

TEST(ClientOptionsTest, MetadataForOneRpcOnlyKeysThatMethod) {
  // EmptyCalls carry the key and stay on one server; UnaryCalls carry none
  // and spread over the aperture (P2C over 4 servers, 60 calls).
  ServerSet servers(4, {}, "opts_md_rpc");
  Json summary =
      RunClient({"--target", servers.Target(), "--service-config", kHashConfig, "--calls", "120",
                 "--rpc", "UnaryCall,EmptyCall", "--metadata", "EmptyCall:x-user:bob"},
                servers.dir());
  ASSERT_TRUE(summary);
  EXPECT_EQ(120, io_json_get_number(summary.get(), "ok", -1));
  std::vector<Json> stats = servers.StopAll();
  std::vector<long> empty = MethodCounts(stats, "empty_call");
  std::vector<long> unary = MethodCounts(stats, "unary_call");
  EXPECT_EQ(60, Sum(empty));
  EXPECT_EQ(60, Sum(unary));
  EXPECT_EQ(1, ServersWithCalls(empty));
  EXPECT_GT(ServersWithCalls(unary), 1);
}

TEST(ClientOptionsTest, BadValuesExitWithUsageErrorNamingTheFlag) {
  std::string dir = TempDir("opts_bad");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--rpc", "StreamingCall"}, {"--rpc", "UnaryCall,"},
        {"--metadata", "novalue"}, {"--metadata", "Upper:v"}, {"--metadata", "grpc-x:v"},
        {"--metadata", ""}}) {
    args.insert(args.begin(), {"--target", "ipv4:127.0.0.1:1"});
    Child c(InteropBinary("client"), args, dir + "/log");
    int status = c.Wait(10000);
    ASSERT_GE(status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(2, WEXITSTATUS(status)) << args[2] << " " << args[3];
  }
}

}  // namespace
