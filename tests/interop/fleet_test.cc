// The fleet runner end to end: real server and client processes, its
// report, and cleanup of every child it started.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

// A count field of a run that the report must contain: fails the test when
// it is missing or negative (Num's -1 would otherwise compare equal to
// another missing field).
double Count(const json_value *run, const char *field) {
  const json_value *v = io_json_get(run, field);
  EXPECT_NE(nullptr, v) << "report has no field " << field;
  double n = io_json_get_number(run, field, -1);
  EXPECT_GE(n, 0) << field;
  return n;
}

// Runs the fleet to completion; returns its report (empty on failure).
Json RunFleet(const std::vector<std::string> &args, const std::string &dir) {
  std::vector<std::string> all = args;
  all.insert(all.end(), {"--out-dir", dir, "--svg", dir + "/chart.svg"});
  Child fleet(InteropBinary("fleet"), all, dir + "/fleet.log");
  int status = fleet.Wait(120000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "fleet failed, see " << dir << "/fleet.log";
  return ReadJson(dir + "/report.json");
}

TEST(FleetTest, BalanceRoundRobinSpreadsAndPickFirstConcentrates) {
  std::string dir = TempDir("fleet_balance");
  Json report = RunFleet({"--scenario", "balance", "--modes", "round_robin,pick_first", "--servers",
                          "4", "--clients", "2", "--duration-s", "1"},
                         dir);
  ASSERT_TRUE(report);
  const json_value *rr = FindRun(report.get(), "balance", "round_robin");
  const json_value *pf = FindRun(report.get(), "balance", "pick_first");
  ASSERT_NE(nullptr, rr);
  ASSERT_NE(nullptr, pf);
  for (const json_value *r : {rr, pf}) {
    EXPECT_EQ(1, io_json_bool(io_json_get(r, "complete"), 0));
    EXPECT_EQ(0, Num(r, "failed"));
    // every call the clients saw succeed was answered by one of the servers
    double served = 0;
    const json_value *servers = io_json_get(r, "servers");
    ASSERT_EQ(4u, io_json_size(servers));
    for (size_t i = 0; i < io_json_size(servers); i++) served += Num(io_json_at(servers, i), "calls");
    EXPECT_EQ(Num(r, "ok"), served);
    EXPECT_GT(Num(r, "ok"), 0);
  }
  // round_robin: each of the 2 clients connects to all 4 servers, one
  // connection each, and spreads its calls (100 calls/s per client for 1 s
  // -> ~50 calls per server; 1.5 leaves room for the start-up picks that
  // land before every subchannel is READY).
  EXPECT_EQ(8, Num(rr, "connections_total"));
  EXPECT_EQ(1.0, Num(rr, "connections", "max_mean"));
  EXPECT_LT(Num(rr, "calls", "max_mean"), 1.5);
  EXPECT_GT(Num(rr, "calls", "min"), 0);
  // pick_first: both clients use the first address only.
  EXPECT_EQ(2, Num(pf, "connections_total"));
  EXPECT_EQ(4.0, Num(pf, "calls", "max_mean"));

  std::ifstream svg(dir + "/chart.svg");
  std::string head;
  std::getline(svg, head);
  EXPECT_EQ(0u, head.find("<svg")) << head;
}

TEST(FleetTest, KillFailsOnlyCallsOnTheKilledServerAndTrafficReturns) {
  // Each client keeps 16 calls in flight (a rate no client reaches), so
  // the SIGKILL always catches calls on s1: they must fail, and no other.
  std::string dir = TempDir("fleet_kill");
  Json report = RunFleet({"--scenario", "kill", "--modes", "round_robin", "--servers", "3",
                          "--clients", "2", "--duration-s", "5", "--rate", "100000",
                          "--concurrency", "16"},
                         dir);
  ASSERT_TRUE(report);
  const json_value *r = FindRun(report.get(), "kill", "round_robin");
  ASSERT_NE(nullptr, r);
  const double failed = Count(r, "failed"), on_killed = Count(r, "failed_on_disturbed");
  EXPECT_GT(on_killed, 0) << "the kill failed no call on the killed server";
  EXPECT_EQ(on_killed, failed) << "calls failed on live servers";
  const json_value *servers = io_json_get(r, "servers");
  ASSERT_EQ(3u, io_json_size(servers));
  EXPECT_EQ(1, Num(io_json_at(servers, 1), "killed"));
  EXPECT_GE(Num(r, "recover_s"), 0) << "no traffic reached the restarted server";
  EXPECT_GT(Num(r, "ok"), 0);
}

TEST(FleetTest, ChurnReachesClientsThroughResolverUpdates) {
  if (!NoDnsmasq().empty()) GTEST_SKIP() << NoDnsmasq();
  // s0 leaves and a spare joins through the clients' DNS resolver: every
  // client resolves again (at least 2 queries each), the added server gets
  // calls, and no call fails on a server that stayed.
  std::string dir = TempDir("fleet_churn");
  Json report = RunFleet({"--scenario", "churn", "--modes", "round_robin", "--servers", "3",
                          "--clients", "2", "--duration-s", "2"},
                         dir);
  ASSERT_TRUE(report);
  const json_value *r = FindRun(report.get(), "churn", "round_robin");
  ASSERT_NE(nullptr, r);
  EXPECT_GE(Num(r, "dns_queries"), 4);
  const json_value *servers = io_json_get(r, "servers");
  ASSERT_EQ(4u, io_json_size(servers));
  const json_value *added = io_json_at(servers, 3);
  EXPECT_EQ(1, Num(added, "added"));
  EXPECT_GT(Num(added, "calls"), 0) << "the added server got no traffic";
  EXPECT_EQ(1, Num(io_json_at(servers, 0), "removed"));
  EXPECT_EQ(Count(r, "failed_on_disturbed"), Count(r, "failed"))
      << "calls failed on servers that stayed";
  EXPECT_GT(Num(r, "ok"), 0);
}

TEST(FleetTest, SlowBackendLatencyShowsInTheTail) {
  // round_robin ignores latency: one server in 3 answers 40 ms late, so
  // about a third of the calls take >= 40 ms and p99 cannot be below it.
  std::string dir = TempDir("fleet_slow");
  Json report = RunFleet({"--scenario", "slow-backend", "--modes", "round_robin", "--servers", "3",
                          "--clients", "1", "--duration-s", "1"},
                         dir);
  ASSERT_TRUE(report);
  const json_value *r = FindRun(report.get(), "slow-backend", "round_robin");
  ASSERT_NE(nullptr, r);
  EXPECT_EQ(0, Num(r, "failed"));
  EXPECT_GE(Num(r, "latency_us", "p99"), 40000);
  EXPECT_GT(Num(r, "slow_share"), 0);
}

// Processes whose command line mentions `needle` and that are not zombies.
std::vector<int> LiveProcessesMentioning(const std::string &needle) {
  std::vector<int> out;
  DIR *d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent *e = readdir(d)) {
    int pid = atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
    std::string text((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (text.find(needle) == std::string::npos) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t paren = s.rfind(')');
    if (paren != std::string::npos && paren + 2 < s.size() && s[paren + 2] == 'Z') continue;
    out.push_back(pid);
  }
  closedir(d);
  return out;
}

TEST(FleetTest, SigtermStopsEveryProcessTheRunnerStarted) {
  std::string dir = TempDir("fleet_sigterm");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "balance", "--modes", "round_robin", "--servers", "3", "--clients",
               "2", "--duration-s", "60", "--out-dir", dir, "--svg", dir + "/chart.svg"},
              dir + "/fleet.log");
  // Wait until the clients run (their command lines carry the out dir).
  std::vector<int> children;
  for (int i = 0; i < 500 && children.size() < 5; i++) {
    usleep(20000);
    children = LiveProcessesMentioning(dir + "/");
  }
  ASSERT_GE(children.size(), 5u) << "servers and clients did not start";
  int status = fleet.Terminate(20000);
  ASSERT_GE(status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  for (int i = 0; i < 250 && !children.empty(); i++) {
    usleep(20000);
    children = LiveProcessesMentioning(dir + "/");
  }
  EXPECT_TRUE(children.empty()) << children.size() << " processes survived the runner";
}

TEST(FleetTest, UnknownScenarioOrModeIsAUsageError) {
  std::string dir = TempDir("fleet_bad");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--scenario", "nope"}, {"--servers", "0"}, {"--bogus"}}) {
    Child c(InteropBinary("fleet"), args, dir + "/log");
    int status = c.Wait(10000);
    ASSERT_GE(status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << args[0];
  }
  // An unknown mode is a usage error too (exit 2, documented in fleet.c),
  // reported by name before any process starts: no report is written.
  Child c(InteropBinary("fleet"),
          {"--modes", "round_robin,bogus", "--out-dir", dir + "/out", "--svg", dir + "/x.svg"},
          dir + "/modes.log");
  int status = c.Wait(10000);
  ASSERT_GE(status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << "status " << status;
  std::ifstream log(dir + "/modes.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(std::string::npos, text.find("unknown mode 'bogus'")) << text;
  EXPECT_FALSE(std::ifstream(dir + "/out/report.json").good());
}

}  // namespace
