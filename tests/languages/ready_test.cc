// Waiting for READY the way start-up checks and readiness probes do, under
// the default aperture config ({"aperture":{}}) and, for comparison, under
// round_robin, against 3 real interop servers on 127.0.0.1. Each language
// reaches the policy by LD_PRELOAD=libaperture.so (both policies run with
// the preload, so both run under the same conditions):
//   - C: one connect request, grpc_channel_check_connectivity_state(ch, 1),
//     then only watches (tests/languages/c_ready_client.c);
//   - C++: grpc::Channel::WaitForConnected (cpp_client --wait-ready);
//   - Python: grpc.channel_ready_future(ch).result(timeout=5)
//     (python_client.py --wait-ready; skipped with the reason when grpcio
//     on the system core is unavailable, as in python_dropin_test).
// Each wait must return READY within 5 s and the calls after it succeed.
// The time to READY of both policies is measured in the same run and
// reported (stdout and the test's XML properties), never asserted: a
// figure, not a pass mark (docs/design.md, "When the policy connects").
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"
#include "tests/languages/lang_shell.h"

namespace {

using lang_test::Env;
using lang_test::Quote;
using lang_test::Runfile;
using lang_test::Shell;

constexpr char kAperture[] = "{\"loadBalancingConfig\":[{\"aperture\":{}}]}";
constexpr char kRoundRobin[] = "{\"loadBalancingConfig\":[{\"round_robin\":{}}]}";
constexpr int kCalls = 10;  // after the wait

// Runs per policy, alternating: 3, or APERTURE_READY_RUNS (1..100) for a
// longer measurement (docs/design.md quotes one).
int Runs() {
  const char *v = getenv("APERTURE_READY_RUNS");
  const int n = v != nullptr ? atoi(v) : 0;
  return n >= 1 && n <= 100 ? n : 3;
}

// One waiting program's run.
struct Waited {
  int exit_code = -1;
  bool ready = false;
  double ms = -1;  // to READY, from the channel's creation
  long ok = -1, failed = -1;
  std::string output;
};

Waited Parse(int exit_code, const std::string &output) {
  Waited w;
  w.exit_code = exit_code;
  w.output = output;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("ready_ms=", 0) == 0) {
      w.ready = true;
      w.ms = atof(line.c_str() + 9);
    } else if (line.rfind("calls ok=", 0) == 0) {
      std::istringstream words(line);
      std::string word;
      words >> word >> word;
      w.ok = atol(word.c_str() + 3);
      words >> word;
      w.failed = atol(word.c_str() + 7);
    }
  }
  return w;
}

// The sanitizer runtime when the library under test is instrumented
// (--config=asan): preloaded before it.
std::string SanitizerPreload() {
  int rc = -1;
  std::string lib = Runfile("policy/libaperture.so");
  if (atoi(Shell("objdump -p " + Quote(lib) + " | grep -c libasan", &rc).c_str()) == 0) return "";
  std::string asan = Shell("gcc -print-file-name=libasan.so", &rc);
  while (!asan.empty() && asan.back() == '\n') asan.pop_back();
  return asan + " ";
}

std::string Median(std::vector<double> v) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  char buf[96];
  snprintf(buf, sizeof buf, "%.1f ms (%.1f..%.1f)", v[v.size() / 2], v.front(), v.back());
  return buf;
}

class ReadyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    servers_ = std::make_unique<ServerSet>(3, std::vector<std::string>{}, "ready");
    env_ = "LD_PRELOAD=" + Quote(SanitizerPreload() + Runfile("policy/libaperture.so")) +
           " ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0";
  }

  // Runs `program` (a shell word list ending before its arguments) under
  // both policies, alternating, Runs() times each; every wait must return
  // READY and every call succeed. Reports the times as `what`.
  void ExpectReadyUnderBothPolicies(const std::string &what, const std::string &env,
                                    const std::string &program, const std::string &flags) {
    std::vector<double> times[2];
    const char *configs[2] = {kAperture, kRoundRobin};
    const char *names[2] = {"aperture", "round_robin"};
    const int runs = Runs();
    for (int run = 0; run < runs; run++) {
      for (int p = 0; p < 2; p++) {
        int rc = -1;
        std::string out = Shell(env + " " + program + " " + Quote(servers_->Target()) + " " +
                                    Quote(configs[p]) + " " + std::to_string(kCalls) + " " +
                                    flags + " 2>&1",
                                &rc);
        Waited w = Parse(rc, out);
        EXPECT_TRUE(w.ready) << what << " under " << names[p] << ": no READY within 5 s\n"
                             << out;
        EXPECT_EQ(0, w.exit_code) << out;
        EXPECT_EQ(kCalls, w.ok) << out;
        EXPECT_EQ(0, w.failed) << out;
        if (w.ready) times[p].push_back(w.ms);
      }
    }
    const std::string report = what + ": time to READY, median (min..max) of " +
                               std::to_string(runs) + ": aperture " + Median(times[0]) +
                               ", round_robin " + Median(times[1]);
    printf("%s\n", report.c_str());
    RecordProperty("time_to_ready", report);
  }

  std::unique_ptr<ServerSet> servers_;
  std::string env_;
};

TEST_F(ReadyTest, COneConnectRequestThenWatchesReachReady) {
  ExpectReadyUnderBothPolicies("C check_connectivity_state(ch, 1) + watches", env_,
                               Quote(Runfile("tests/languages/c_ready_client")), "");
}

// With grpc.client_idle_timeout_ms set, a channel without calls goes IDLE
// and gRPC drops its resolver and policy (and so its connections); one
// connect request then creates a new policy, which connects at once: READY
// again, under aperture as under round_robin.
TEST_F(ReadyTest, AChannelBackFromIdleIsReadyAgainOnOneConnectRequest) {
  const char *configs[2] = {kAperture, kRoundRobin};
  std::vector<double> again[2];
  for (int p = 0; p < 2; p++) {
    int rc = -1;
    std::string out = Shell(env_ + " " + Quote(Runfile("tests/languages/c_ready_client")) + " " +
                                Quote(servers_->Target()) + " " + Quote(configs[p]) + " " +
                                std::to_string(kCalls) + " 500 2>&1",
                            &rc);
    EXPECT_EQ(0, rc) << out;
    EXPECT_NE(std::string::npos, out.find("\nidle=yes\n")) << out;
    const size_t at = out.find("ready_again_ms=");
    ASSERT_NE(std::string::npos, at) << configs[p] << ": no READY after idle\n" << out;
    again[p].push_back(atof(out.c_str() + at + 15));
  }
  const std::string report = "C back from idle: time to READY again: aperture " +
                             Median(again[0]) + ", round_robin " + Median(again[1]);
  printf("%s\n", report.c_str());
  RecordProperty("time_to_ready_after_idle", report);
}

TEST_F(ReadyTest, CppWaitForConnectedReturns) {
  ExpectReadyUnderBothPolicies("C++ WaitForConnected", env_,
                               Quote(Runfile("tests/languages/cpp_client")), "--wait-ready");
}

TEST_F(ReadyTest, PythonChannelReadyFutureReturns) {
  const std::string unavailable = Env("APERTURE_PYTHON_UNAVAILABLE");
  if (!unavailable.empty()) GTEST_SKIP() << "grpcio on the system core: " << unavailable;
  const std::string failed = Env("APERTURE_PYTHON_BUILD_FAILED");
  ASSERT_TRUE(failed.empty()) << "bazel/python-grpcio.sh failed: " << failed;
  const std::string grpcio = Env("APERTURE_PYTHON_DIR");
  if (grpcio.empty()) {
    GTEST_SKIP() << "APERTURE_PYTHON_DIR is not set: bazel/setup.sh builds grpcio on the "
                    "system core and writes bazel/python.bazelrc (docs/languages.md)";
  }
  ExpectReadyUnderBothPolicies(
      "Python channel_ready_future",
      env_ + " PYTHONPATH=" + Quote(Runfile("policy/python") + ":" + grpcio) +
          " PYTHONDONTWRITEBYTECODE=1",
      "/usr/bin/python3 " + Quote(Runfile("tests/languages/python_client.py")), "--wait-ready");
}

}  // namespace
