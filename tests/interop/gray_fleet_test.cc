// The fleet's gray scenario, short: real server and client processes on
// 127.0.0.1, s1 frozen (SIGSTOP) and then slowed for 2 s each, for an
// aperture mode and round_robin in one run. Checks the report's shape (every
// row, the contract's fields), that calls were made, that the frozen server
// was resumed, and that no process of the run is left behind stopped. No
// timing targets: the figures are the fleet report's (docs/fleet.md).
#include <dirent.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

const json_value *FindGrayRun(const json_value *runs, const std::string &fault,
                              const std::string &mode) {
  for (size_t i = 0; i < io_json_size(runs); i++) {
    const json_value *r = io_json_at(runs, i);
    if (fault == io_json_string(io_json_get(r, "fault")) &&
        mode == io_json_string(io_json_get(r, "mode")))
      return r;
  }
  return nullptr;
}

// Processes whose command line mentions `dir` (the run's out dir is in
// every server's and client's arguments), with their state letter.
std::vector<std::string> ProcessesOf(const std::string &dir) {
  std::vector<std::string> found;
  DIR *d = opendir("/proc");
  if (d == nullptr) return found;
  // Any process may exit while it is read: C stdio, each read may fail.
  auto slurp = [](const std::string &path) {
    std::string text;
    FILE *f = fopen(path.c_str(), "r");
    if (f == nullptr) return text;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    fclose(f);
    return text;
  };
  while (struct dirent *e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string base = std::string("/proc/") + e->d_name;
    if (slurp(base + "/cmdline").find(dir) == std::string::npos) continue;
    std::string line = slurp(base + "/stat");
    size_t paren = line.rfind(')');
    std::string state = paren != std::string::npos && paren + 2 < line.size()
                            ? line.substr(paren + 2, 1)
                            : "?";
    found.push_back(std::string(e->d_name) + " state " + state);
  }
  closedir(d);
  return found;
}

TEST(GrayFleetTest, FreezeAndSlowRowsForApertureAndRoundRobinInOneRun) {
  std::string dir = TempDir("gray_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "gray", "--faults", "freeze,slow,link-down", "--modes",
               "smooth,round_robin", "--calls", "2000", "--fault-s", "2", "--json", "--out-dir",
               dir},
              dir + "/fleet.log");
  int status = fleet.Wait(180000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "fleet failed, see " << dir << "/fleet.log";
  // Nothing of the run is left: above all no server left stopped (state T).
  std::vector<std::string> left = ProcessesOf(dir);
  EXPECT_TRUE(left.empty()) << left.size() << " left, e.g. pid " << (left.empty() ? "" : left[0]);

  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  EXPECT_STREQ("gray", io_json_string(io_json_get(report.get(), "scenario")));
  EXPECT_STREQ("loopback", io_json_string(io_json_get(report.get(), "network")));
  const json_value *runs = io_json_get(report.get(), "runs");
  ASSERT_EQ(4u, io_json_size(runs));
  for (const char *fault : {"freeze", "slow"}) {
    for (const char *mode : {"smooth", "round_robin"}) {
      SCOPED_TRACE(std::string(fault) + " / " + mode);
      const json_value *r = FindGrayRun(runs, fault, mode);
      ASSERT_NE(nullptr, r);
      EXPECT_STREQ("gray", io_json_string(io_json_get(r, "scenario")));
      EXPECT_EQ(1, io_json_bool(io_json_get(r, "complete"), 0))
          << io_json_string(io_json_get(r, "error"));
      for (const char *field : {"calls", "failed", "failed_healthy", "p99_ms", "detect_ms",
                                "recover_ms"}) {
        EXPECT_NE(nullptr, io_json_get(r, field)) << "no field " << field;
      }
      const double calls = io_json_get_number(r, "calls", -1);
      EXPECT_GT(calls, 0);
      EXPECT_LE(calls, 2000 + 8 * 4);  // --calls, give or take the clients' rounding
      const double failed = io_json_get_number(r, "failed", -1);
      EXPECT_GE(failed, 0);
      EXPECT_LE(failed, calls);
      EXPECT_EQ(calls, io_json_get_number(r, "ok", -1) + failed);
      EXPECT_EQ(failed, io_json_get_number(r, "failed_healthy", -1) +
                            io_json_get_number(r, "failed_faulty", -1) +
                            io_json_get_number(r, "failed_unattributed", -1));
      EXPECT_GT(io_json_get_number(r, "p99_ms", -1), 0);
      const double detect = io_json_get_number(r, "detect_ms", -2);
      EXPECT_TRUE(detect == -1 || detect > 0) << detect;
      const double recover = io_json_get_number(r, "recover_ms", -2);
      EXPECT_TRUE(recover == -1 || recover > 0) << recover;
      if (std::string(fault) == "freeze") {
        EXPECT_EQ(1, io_json_bool(io_json_get(r, "resumed"), 0));
      } else {
        EXPECT_EQ(nullptr, io_json_get(r, "resumed"));
      }
    }
  }
  // round_robin keeps every READY connection: the resumed server answers
  // again after the freeze, and the slow one all along.
  EXPECT_GT(Num(FindGrayRun(runs, "freeze", "round_robin"), "share_after"), 0);
  EXPECT_GT(Num(FindGrayRun(runs, "slow", "round_robin"), "share_during"), 0);
  // link-down needs network namespaces: skipped on loopback, and said so.
  const json_value *skipped = io_json_get(report.get(), "skipped");
  ASSERT_EQ(1u, io_json_size(skipped));
  EXPECT_STREQ("link-down", io_json_string(io_json_get(io_json_at(skipped, 0), "fault")));
}

// The failure budget at its own scale (20,000 calls, 10 s faults, 4 servers
// all in every client's aperture, 8 calls in flight per client, 300 ms
// deadlines): while s1 is frozen or never answers, at most the calls in
// flight to it when the fault began plus 0.1% of all calls fail
// (failed_budget, from the call logs), and none on a healthy server. The
// report's figures, not a timing: what fails is what was sent to s1 before
// the policy stopped sending (docs/hardening.md). One aperture mode: the
// mechanism is the picker's, the same for every mode (the fleet report
// runs them all).
TEST(GrayFleetTest, FreezeAndNoAnswerStayWithinTheFailureBudget) {
  std::string dir = TempDir("gray_budget");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "gray", "--faults", "freeze,no-answer", "--modes", "smooth",
               "--json", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(240000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "fleet failed, see " << dir << "/fleet.log";
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  const json_value *runs = io_json_get(report.get(), "runs");
  ASSERT_EQ(2u, io_json_size(runs));
  for (const char *fault : {"freeze", "no-answer"}) {
    SCOPED_TRACE(fault);
    const json_value *r = FindGrayRun(runs, fault, "smooth");
    ASSERT_NE(nullptr, r);
    ASSERT_EQ(1, io_json_bool(io_json_get(r, "complete"), 0))
        << io_json_string(io_json_get(r, "error"));
    const double calls = Num(r, "calls"), inflight = Num(r, "inflight_at_fault");
    EXPECT_GE(calls, 20000);
    EXPECT_GE(inflight, 0);
    EXPECT_EQ(Num(r, "failed_budget"), inflight + static_cast<long>(calls) / 1000);
    EXPECT_LE(Num(r, "failed"), Num(r, "failed_budget")) << "see " << dir;
    EXPECT_EQ(0, Num(r, "failed_healthy"));
    EXPECT_EQ(1, io_json_bool(io_json_get(r, "within_budget"), 0));
  }
}

TEST(GrayFleetTest, UnknownFaultIsAUsageError) {
  std::string dir = TempDir("gray_usage");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "gray", "--faults", "freeze,melt", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(30000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2);
  std::ifstream log(dir + "/fleet.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(std::string::npos, text.find("unknown fault 'melt'")) << text;
}

}  // namespace
