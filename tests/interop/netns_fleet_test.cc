// The fleet runner's networks and DNS server end to end: --network netns
// (a namespace per server and client, joined on a bridge in a namespace of
// its own) and dnsmasq answering the DNS scenarios on both networks; the
// report's network, dns and hosts; nothing of a run left in the root
// namespace after a normal run or after SIGINT.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interop/common/proc.h"
#include "interop/fleet/fleet_dnsmasq.h"
#include "tests/interop/fleet_helper.h"

namespace {

// stdout of a shell command ("" when it fails to run).
std::string Shell(const std::string &cmd) {
  std::string out;
  FILE *f = popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  pclose(f);
  return out;
}

std::string ReadFile(const std::string &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Why --network netns cannot run here ("" when it can).
std::string NetnsUnavailable() {
  if (geteuid() != 0) return "--network netns needs root";
  if (system("ip netns list >/dev/null 2>&1") != 0) return "no `ip netns` (iproute2) here";
  // Root may still be unable to make one (a user namespace, a sandbox).
  const std::string probe = "approbe" + std::to_string(getpid());
  if (system(("ip netns add " + probe + " >/dev/null 2>&1").c_str()) != 0)
    return "`ip netns add` fails here";
  int del = system(("ip netns del " + probe + " >/dev/null 2>&1").c_str());
  (void)del;
  return "";
}

std::string DnsmasqUnavailable() { return NoDnsmasq(); }

// What the root namespace holds: its links' names, addresses and routes.
struct RootState {
  std::set<std::string> links;
  std::string addrs, routes;
};

RootState Root() {
  RootState s;
  std::istringstream in(Shell("ip -o link show | cut -d: -f2 | cut -d@ -f1"));
  for (std::string l; std::getline(in, l);) s.links.insert(l);
  s.addrs = Shell("ip -o addr show");
  s.routes = Shell("ip route show table all");
  return s;
}

// The namespace prefix the runner printed to its log ("apPID-"); "" if none.
std::string Prefix(const std::string &log) {
  const std::string text = ReadFile(log), key = "namespaces ";
  size_t at = text.find(key);
  if (at == std::string::npos) return "";
  size_t end = text.find('*', at);
  return end == std::string::npos ? "" : text.substr(at + key.size(), end - at - key.size());
}

// Namespaces named with the prefix now.
int Namespaces(const std::string &prefix) {
  std::istringstream in(Shell("ip netns list"));
  int n = 0;
  for (std::string l; std::getline(in, l);) n += l.rfind(prefix, 0) == 0;
  return n;
}

// Checks the report's header: its network, dnsmasq with queries, and
// every host's address in `net` (a prefix such as "198.18."); returns the
// number of hosts.
size_t CheckHeader(const json_value *report, const std::string &network,
                   const std::vector<std::string> &nets) {
  EXPECT_STREQ(network.c_str(), io_json_string(io_json_get(report, "network")));
  EXPECT_STREQ("dnsmasq", io_json_string(io_json_get(report, "dns")));
  EXPECT_GT(io_json_get_number(report, "dns_queries", -1), 0);
  const json_value *hosts = io_json_get(report, "hosts");
  int servers = 0, clients = 0;
  for (size_t i = 0; i < io_json_size(hosts); i++) {
    const char *name = io_json_string(io_json_get(io_json_at(hosts, i), "name"));
    const char *addr = io_json_string(io_json_get(io_json_at(hosts, i), "address"));
    EXPECT_TRUE(name != nullptr && addr != nullptr) << "host " << i;
    if (name == nullptr || addr == nullptr) continue;
    servers += name[0] == 's';
    clients += name[0] == 'c';
    bool in_net = false;
    for (const std::string &n : nets) in_net = in_net || std::string(addr).rfind(n, 0) == 0;
    EXPECT_TRUE(in_net) << name << " " << addr;
  }
  EXPECT_GT(servers, 0);
  EXPECT_GT(clients, 0);
  return io_json_size(hosts);
}

TEST(NetnsFleetTest, ChurnOnNamespacesWithDnsmasqLeavesNothingBehind) {
  const std::string why = NetnsUnavailable() + DnsmasqUnavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  const RootState before = Root();
  const std::string dir = TempDir("netns_churn");
  Child fleet(InteropBinary("fleet"),
              {"--network", "netns", "--scenario", "churn", "--modes", "round_robin,smooth",
               "--servers", "3", "--clients", "2", "--duration-s", "3", "--out-dir", dir,
               "--svg", dir + "/chart.svg"},
              dir + "/fleet.log");
  int status = fleet.Wait(60000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "see " << dir << "/fleet.log";
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  // churn: s0..s2 and the spare s3 it adds; 2 clients.
  EXPECT_EQ(6u, CheckHeader(report.get(), "netns", {"198.18.", "198.19."}));
  const json_value *runs = io_json_get(report.get(), "runs");
  ASSERT_EQ(2u, io_json_size(runs));
  for (size_t i = 0; i < io_json_size(runs); i++) {
    const json_value *run = io_json_at(runs, i);
    SCOPED_TRACE(io_json_string(io_json_get(run, "mode")));
    EXPECT_EQ(1, io_json_bool(io_json_get(run, "complete"), 0))
        << io_json_string(io_json_get(run, "error"));
    EXPECT_GT(io_json_get_number(run, "ok", 0), 0);
    EXPECT_EQ(0, io_json_get_number(run, "failed", -1));
    EXPECT_GT(io_json_get_number(run, "dns_queries", 0), 0);
  }
  // Every client asked dnsmasq in every mode (one dnsmasq per mode), from
  // its own address: each namespace reaches the bridge's address throughout.
  const json_value *hosts = io_json_get(report.get(), "hosts");
  for (int m = 0; m < 2; m++) {
    const std::string log = Shell("cat " + dir + "/dnsmasq-*-" + std::to_string(m) + ".log");
    for (size_t i = 0; i < io_json_size(hosts); i++) {
      const char *name = io_json_string(io_json_get(io_json_at(hosts, i), "name"));
      const char *addr = io_json_string(io_json_get(io_json_at(hosts, i), "address"));
      if (name == nullptr || addr == nullptr || name[0] != 'c') continue;
      EXPECT_NE(std::string::npos, log.find(std::string("query[A] fleet.test from ") + addr + "\n"))
          << "mode " << m << ": no query from " << name << " " << addr;
    }
  }
  const std::string prefix = Prefix(dir + "/fleet.log");
  ASSERT_FALSE(prefix.empty()) << "the runner named no namespaces";
  EXPECT_EQ(0, Namespaces(prefix)) << Shell("ip netns list");
  const RootState after = Root();
  EXPECT_EQ(before.links, after.links);
  EXPECT_EQ(std::string::npos, after.addrs.find("198.1")) << after.addrs;
  EXPECT_EQ(std::string::npos, after.routes.find("198.1")) << after.routes;
}

// The failure budget for the faults that need a network (as
// gray_fleet_test's for freeze and no-answer, at the reference scale): s1's
// link down, and clients 0, 1 blackholed from s0, s1, each for 10 s; at
// most the calls in flight to the faulty servers when the fault began plus
// 0.1% of all calls fail, none on a healthy server; nothing left behind.
TEST(NetnsFleetTest, GrayLinkDownAndPartitionStayWithinTheFailureBudget) {
  const std::string why = NetnsUnavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::string dir = TempDir("netns_gray");
  Child fleet(InteropBinary("fleet"),
              {"--network", "netns", "--scenario", "gray", "--faults", "link-down,partition",
               "--modes", "smooth", "--json", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(240000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "see " << dir << "/fleet.log";
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  EXPECT_STREQ("netns", io_json_string(io_json_get(report.get(), "network")));
  const json_value *runs = io_json_get(report.get(), "runs");
  ASSERT_EQ(2u, io_json_size(runs));
  for (size_t i = 0; i < io_json_size(runs); i++) {
    const json_value *r = io_json_at(runs, i);
    SCOPED_TRACE(io_json_string(io_json_get(r, "fault")));
    ASSERT_EQ(1, io_json_bool(io_json_get(r, "complete"), 0))
        << io_json_string(io_json_get(r, "error"));
    const double calls = io_json_get_number(r, "calls", -1);
    const double inflight = io_json_get_number(r, "inflight_at_fault", -1);
    EXPECT_GE(calls, 20000);
    EXPECT_GE(inflight, 0);
    EXPECT_EQ(io_json_get_number(r, "failed_budget", -1),
              inflight + static_cast<long>(calls) / 1000);
    EXPECT_LE(io_json_get_number(r, "failed", -1), io_json_get_number(r, "failed_budget", -1))
        << "see " << dir;
    EXPECT_EQ(0, io_json_get_number(r, "failed_healthy", -1));
  }
  const std::string prefix = Prefix(dir + "/fleet.log");
  ASSERT_FALSE(prefix.empty()) << "the runner named no namespaces";
  EXPECT_EQ(0, Namespaces(prefix)) << Shell("ip netns list");
}

TEST(NetnsFleetTest, SigintTearsDownEveryNamespace) {
  const std::string why = NetnsUnavailable() + DnsmasqUnavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  const RootState before = Root();
  const std::string dir = TempDir("netns_sigint");
  const std::string bin = InteropBinary("fleet"), log = dir + "/fleet.log";
  const std::string svg = dir + "/chart.svg";
  char *argv[] = {(char *)bin.c_str(), (char *)"--network", (char *)"netns", (char *)"--scenario",
                  (char *)"churn", (char *)"--modes", (char *)"round_robin", (char *)"--servers",
                  (char *)"3", (char *)"--clients", (char *)"2", (char *)"--duration-s",
                  (char *)"30", (char *)"--out-dir", (char *)dir.c_str(), (char *)"--svg",
                  (char *)svg.c_str(), nullptr};
  proc *p = io_proc_start(argv, log.c_str());
  ASSERT_NE(nullptr, p);
  // Running: the bridge, 3 servers and 2 clients in namespaces of their own
  // (the spare s3 starts later).
  std::string prefix;
  int seen = 0;
  for (int t = 0; t < 300 && seen < 6; t++) {
    usleep(100000);
    if (prefix.empty()) prefix = Prefix(log);
    if (!prefix.empty()) seen = Namespaces(prefix);
  }
  EXPECT_GE(seen, 6) << ReadFile(log);
  kill(io_proc_pid(p), SIGINT); // the runner alone: its handler tears down
  int status = 0;
  ASSERT_EQ(0, io_proc_wait(p, 10000, &status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  io_proc_stop(p, 0);
  ASSERT_FALSE(prefix.empty());
  EXPECT_EQ(0, Namespaces(prefix)) << Shell("ip netns list");
  const RootState after = Root();
  EXPECT_EQ(before.links, after.links);
  EXPECT_EQ(std::string::npos, after.addrs.find("198.1")) << after.addrs;
  // No process of the run is left (each was in the runner's registry and
  // got SIGKILL); the pattern's brackets keep pgrep's shell from matching.
  const std::string pattern = "[" + dir.substr(0, 1) + "]" + dir.substr(1);
  std::string left;
  for (int t = 0; t < 40; t++) {
    left = Shell("pgrep -f '" + pattern + "'");
    if (left.empty()) break;
    usleep(50000);
  }
  EXPECT_EQ("", left) << "processes of the run still running";
}

TEST(NetnsFleetTest, PeersOnNamespacesFindTheirCoordinateWithoutPeerSelf) {
  const std::string why = NetnsUnavailable() + DnsmasqUnavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::string dir = TempDir("netns_peers");
  Child fleet(InteropBinary("fleet"),
              {"--network", "netns", "--scenario", "peers", "--modes", "smooth", "--servers", "6",
               "--clients", "3", "--min-aperture", "2", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(60000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "see " << dir << "/fleet.log";
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  // Servers s0..s5, clients c0..c3 (3, then one joins).
  EXPECT_EQ(10u, CheckHeader(report.get(), "netns", {"198.18.", "198.19."}));
  const json_value *row = FindRow(io_json_get(report.get(), "peers"), "mode", "smooth");
  ASSERT_NE(nullptr, row);
  const std::string log = ReadFile(dir + "/fleet.log");
  ASSERT_EQ(1, io_json_bool(io_json_get(row, "complete"), 0))
      << io_json_string(io_json_get(row, "error")) << "\n"
      << log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
  EXPECT_EQ(0, io_json_get_number(row, "failed", -1));
  for (const char *change : {"join", "leave"}) {
    SCOPED_TRACE(change);
    const json_value *c = io_json_get(row, change);
    ASSERT_NE(nullptr, c);
    // Every client agreed on the peer list it found its own entry in
    // (coordinate source: peer target), and the servers saw the change
    // the core predicts.
    EXPECT_EQ(1, io_json_bool(io_json_get(c, "settled"), 0));
    EXPECT_GT(io_json_get_number(c, "predicted", 0), 0);
    EXPECT_EQ(io_json_get_number(c, "predicted", -1), io_json_get_number(c, "changed", -2));
  }
  // No client was given its own entry: each found it from its interfaces.
  for (int k = 0; k < 4; k++) {
    Json summary = ReadJson(dir + "/peers-smooth/client" + std::to_string(k) + ".json");
    ASSERT_TRUE(summary) << k;
    const std::string config = io_json_string(io_json_get(summary.get(), "service_config"));
    EXPECT_NE(std::string::npos, config.find("peerTarget")) << config;
    EXPECT_EQ(std::string::npos, config.find("peerSelf")) << config;
  }
}

TEST(NetnsFleetTest, LoopbackChurnUsesDnsmasq) {
  const std::string why = DnsmasqUnavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::string dir = TempDir("loopback_churn");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "churn", "--modes", "round_robin", "--servers", "3", "--clients", "2",
               "--duration-s", "2", "--out-dir", dir, "--svg", dir + "/chart.svg"},
              dir + "/fleet.log");
  int status = fleet.Wait(60000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "see " << dir << "/fleet.log";
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  EXPECT_EQ(6u, CheckHeader(report.get(), "loopback", {"127."}));
  const json_value *run = FindRun(report.get(), "churn", "round_robin");
  ASSERT_NE(nullptr, run);
  EXPECT_EQ(0, io_json_get_number(run, "failed", -1));
  EXPECT_GT(io_json_get_number(run, "dns_queries", 0), 0);
  // dnsmasq's own log beside the fleet's, with the queries counted.
  EXPECT_NE(std::string::npos, Shell("cat " + dir + "/dnsmasq-*.log").find("query[A] fleet.test"));
}

TEST(NetnsFleetTest, NoDnsScenarioReportsNone) {
  const std::string dir = TempDir("loopback_balance");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "balance", "--modes", "round_robin", "--servers", "2", "--clients",
               "1", "--duration-s", "1", "--out-dir", dir, "--svg", dir + "/chart.svg"},
              dir + "/fleet.log");
  int status = fleet.Wait(60000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  EXPECT_STREQ("loopback", io_json_string(io_json_get(report.get(), "network")));
  EXPECT_STREQ("none", io_json_string(io_json_get(report.get(), "dns")));
  EXPECT_EQ(0, io_json_get_number(report.get(), "dns_queries", -1));
}

TEST(NetnsFleetTest, NetnsWithoutRootExitsTwoWithTheReason) {
  // In a new user namespace the runner is not root (its uid is the
  // overflow uid) while its files stay readable as their owner's.
  if (access("/usr/bin/unshare", X_OK) != 0 || system("/usr/bin/unshare --user true") != 0)
    GTEST_SKIP() << "no unshare --user here";
  const std::string dir = TempDir("netns_not_root");
  Child fleet("/usr/bin/unshare",
              {"--user", InteropBinary("fleet"), "--network", "netns", "--scenario", "churn",
               "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(20000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
  EXPECT_NE(std::string::npos, ReadFile(dir + "/fleet.log").find("--network netns needs root"))
      << ReadFile(dir + "/fleet.log");
}

TEST(NetnsFleetTest, DnsScenarioWithoutDnsmasqFailsWithTheReason) {
  // dnsmasq hidden in a mount namespace of the runner's own (/dev/null
  // bound over the binary: not executable), so nothing else is affected.
  if (!NoDnsmasq().empty()) GTEST_SKIP() << NoDnsmasq();
  if (geteuid() != 0 || system("/usr/bin/unshare -m true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs root and unshare -m";
  char found[4096];
  ASSERT_EQ(0, io_fleet_dnsmasq_find(found, sizeof(found)));
  const std::string path = found, dir = TempDir("no_dnsmasq");
  const std::string script = "mount --bind /dev/null '" + path + "' && exec env PATH='" +
                             path.substr(0, path.rfind('/')) + "' '" + InteropBinary("fleet") +
                             "' --scenario churn --modes round_robin --servers 2 --clients 1"
                             " --duration-s 1 --out-dir '" + dir + "' --svg '" + dir + "/c.svg'";
  Child fleet("/usr/bin/unshare", {"-m", "/bin/sh", "-c", script}, dir + "/fleet.log");
  int status = fleet.Wait(30000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  const std::string log = ReadFile(dir + "/fleet.log");
  EXPECT_NE(std::string::npos, log.find("fleet: dnsmasq not found")) << log;
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  const json_value *run = FindRun(report.get(), "churn", "round_robin");
  ASSERT_NE(nullptr, run);
  EXPECT_EQ(0, io_json_bool(io_json_get(run, "complete"), 1));
  EXPECT_NE(nullptr, strstr(io_json_string(io_json_get(run, "error")), "DNS server"));
  EXPECT_STREQ("none", io_json_string(io_json_get(report.get(), "dns")));
}

TEST(NetnsFleetTest, BadNetworkIsAUsageError) {
  const std::string dir = TempDir("bad_network");
  Child fleet(InteropBinary("fleet"), {"--network", "wan", "--out-dir", dir}, dir + "/fleet.log");
  int status = fleet.Wait(20000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2);
  EXPECT_NE(std::string::npos, ReadFile(dir + "/fleet.log").find("flag --network"));
  Child xds(InteropBinary("fleet"), {"--network", "netns", "--scenario", "xds", "--out-dir", dir},
            dir + "/xds.log");
  status = xds.Wait(20000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2);
}

}  // namespace
