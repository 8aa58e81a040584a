// The fleet's DNS responder drives gRPC's real (c-ares) resolver: a client
// with a dns:// target reaches exactly the servers the responder lists.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "interop/fleet/dns_stub.h"
#include "tests/interop/fleet_helper.h"

namespace {

TEST(DnsStub, RejectsBadArguments) {
  int port = 0;
  EXPECT_EQ(nullptr, io_dns_stub_start(nullptr, &port));
  EXPECT_EQ(nullptr, io_dns_stub_start("", &port));
  dns_stub *d = io_dns_stub_start("fleet.test", &port);
  ASSERT_NE(nullptr, d);
  const char *bad[] = {"300.1.1.1"};
  EXPECT_EQ(-1, io_dns_stub_set(d, bad, 1));
  EXPECT_EQ(-1, io_dns_stub_set(nullptr, bad, 0));
  EXPECT_EQ(0, io_dns_stub_set(d, nullptr, 0));
  io_dns_stub_stop(d);
}

TEST(DnsStub, ClientWithDnsTargetReachesTheListedServersOnly) {
  std::string dir = TempDir("dns");
  // Three servers on distinct loopback addresses sharing one port; the
  // responder lists only the first two.
  std::vector<std::unique_ptr<Child>> servers;
  std::string bin = InteropBinary("server");
  std::string port = "0";
  for (int i = 0; i < 3; i++) {
    std::string host = "127.0.0." + std::to_string(21 + i);
    servers.push_back(std::make_unique<Child>(
        bin,
        std::vector<std::string>{"--host", host, "--port", port, "--hostname", "d" + std::to_string(i)},
        dir + "/server.log"));
    std::string line = servers.back()->WaitLine("listening ");
    ASSERT_FALSE(line.empty());
    port = line.substr(line.rfind(':') + 1);
  }
  int dns_port = 0;
  dns_stub *d = io_dns_stub_start("fleet.test", &dns_port);
  ASSERT_NE(nullptr, d);
  const char *members[] = {"127.0.0.21", "127.0.0.22"};
  ASSERT_EQ(0, io_dns_stub_set(d, members, 2));
  std::string target = "dns://127.0.0.1:" + std::to_string(dns_port) + "/fleet.test:" + port;
  Json summary = RunClient({"--target", target, "--lb", "round_robin", "--calls", "100"}, dir);
  EXPECT_GE(io_dns_stub_queries(d), 1);
  io_dns_stub_stop(d);
  ASSERT_TRUE(summary) << "client failed, see " << dir;
  EXPECT_EQ(100, io_json_get_number(summary.get(), "ok", -1));
  const json_value *peers = io_json_get(summary.get(), "peers");
  EXPECT_EQ(2u, io_json_size(peers));
  EXPECT_GT(io_json_get_number(peers, "d0", 0), 0);
  EXPECT_GT(io_json_get_number(peers, "d1", 0), 0);
  EXPECT_EQ(nullptr, io_json_get(peers, "d2"));
}

}  // namespace
