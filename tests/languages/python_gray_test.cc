// Gray failures against stock servers: grpcio on the system core (built by
// bazel/python-grpcio.sh), one process each, with gRPC's default settings
// and a generic handler, some of them answering a seeded share of their
// calls late. A Python client with the aperture policy (`import aperture`,
// {"aperture":{"minAperture":4}}: every server a member) calls them with
// deadlines inside that tail, freezes a server (SIGSTOP) when asked, and
// reads `ejections` from its own status (aperture.status()):
//   - precision: healthy servers with a tail are not ejected (at most 2 in
//     a run), and the calls that fail are the tail's;
//   - recall: a frozen server is ejected, among healthy servers and among
//     servers with a tail, and no other is.
// Skipped with the reason where that Python build is unavailable, as the
// other Python tests (python_dropin_test.cc).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmath>
#include <memory>
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

constexpr char kPython[] = "/usr/bin/python3";  // the grpcio build is for Debian's
constexpr char kConfig[] = "{\"loadBalancingConfig\":[{\"aperture\":{\"minAperture\":4}}]}";
constexpr int kServers = 4;

// The sanitizer runtime when the library is instrumented (--config=asan).
std::string SanitizerRuntime() {
  int rc = -1;
  const std::string lib = Runfile("policy/libaperture.so");
  if (atoi(Shell("objdump -p " + Quote(lib) + " | grep -c libasan", &rc).c_str()) == 0) return "";
  std::string asan = Shell("gcc -print-file-name=libasan.so", &rc);
  while (!asan.empty() && asan.back() == '\n') asan.pop_back();
  return asan;
}

// One stock server process and what its `listening` line said.
struct Server {
  std::unique_ptr<Child> child;
  std::string address;
  int pid = -1;
};

class PythonGrayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string unavailable = Env("APERTURE_PYTHON_UNAVAILABLE");
    if (!unavailable.empty()) GTEST_SKIP() << "grpcio on the system core: " << unavailable;
    const std::string failed = Env("APERTURE_PYTHON_BUILD_FAILED");
    ASSERT_TRUE(failed.empty()) << "bazel/python-grpcio.sh failed: " << failed;
    grpcio_ = Env("APERTURE_PYTHON_DIR");
    if (grpcio_.empty()) {
      GTEST_SKIP() << "APERTURE_PYTHON_DIR is not set: bazel/setup.sh builds grpcio on the "
                      "system core and writes bazel/python.bazelrc (docs/languages.md)";
    }
    int rc = -1;
    const std::string out =
        Shell("PYTHONPATH=" + Quote(grpcio_) + " " + kPython + " -c 'import grpc' 2>&1", &rc);
    ASSERT_EQ(0, rc) << "grpcio in " << grpcio_ << " does not import: " << out;
    asan_ = SanitizerRuntime();
    dir_ = TempDir("python_gray");
  }

  std::string Script() const { return Runfile("tests/languages/python_gray.py"); }

  // Starts the servers: a seeded `share` of each one's calls waits tail_ms.
  std::vector<Server> StartServers(double share, int tail_ms) {
    std::vector<Server> servers(kServers);
    for (int i = 0; i < kServers; ++i) {
      Server &s = servers[i];
      const std::string name = "s" + std::to_string(i);
      // the environment through env(1): Child execs the binary directly
      s.child = std::make_unique<Child>(
          "/usr/bin/env",
          std::vector<std::string>{"PYTHONPATH=" + grpcio_, "PYTHONDONTWRITEBYTECODE=1", kPython,
                                   Script(), "serve", name, std::to_string(share),
                                   std::to_string(tail_ms), std::to_string(1000 + 7 * i)},
          dir_ + "/" + name + ".log");
      std::istringstream line(s.child->WaitLine("listening ", 20000));
      line >> s.address;
      std::string pid_word;
      line >> pid_word >> s.pid;
    }
    return servers;
  }

  // Runs the client against `servers`; its JSON line (empty on failure,
  // with the output in *output).
  Json RunClient(const std::vector<Server> &servers, double duration_s, int concurrency,
                 int deadline_ms, const std::string &freeze, std::string *output) {
    std::string target = "ipv4:";
    for (size_t i = 0; i < servers.size(); ++i) target += (i ? "," : "") + servers[i].address;
    const std::string preload = asan_.empty() ? "" : " LD_PRELOAD=" + Quote(asan_);
    const std::string env = "PYTHONPATH=" + Quote(Runfile("policy/python") + ":" + grpcio_) +
                            " PYTHONDONTWRITEBYTECODE=1 APERTURE_LIBRARY=" +
                            Quote(Runfile("policy/libaperture.so")) + preload +
                            " ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0";
    int rc = -1;
    *output = Shell(env + " " + kPython + " " + Quote(Script()) + " client " + Quote(target) +
                        " " + Quote(kConfig) + " " + std::to_string(duration_s) + " " +
                        std::to_string(concurrency) + " " + std::to_string(deadline_ms) + " " +
                        freeze + " 2>" + Quote(dir_ + "/client.log"),
                    &rc);
    if (rc != 0) return Json();
    const size_t at = output->rfind("\n{");
    const std::string line = output->substr(at == std::string::npos ? 0 : at + 1);
    return Json(io_json_parse(line.c_str(), nullptr, 0));
  }

  std::string grpcio_, asan_, dir_;
};

// An endpoint of the client's status, by address; nullptr when missing.
const json_value *Endpoint(const json_value *result, const std::string &address) {
  return FindRow(io_json_get(result, "endpoints"), "address", address);
}

// The sum of a field over the status's endpoints.
double SumOver(const json_value *result, const char *field) {
  const json_value *endpoints = io_json_get(result, "endpoints");
  double sum = 0;
  for (size_t i = 0; i < io_json_size(endpoints); ++i)
    sum += Num(io_json_at(endpoints, i), field);
  return sum;
}

// The setup: 2 calls in flight, 10% of calls 200 ms late, 100 ms
// deadlines: about a tenth of the calls fail under any policy. The old
// rule (a failure after a silence ejected at once) ejected healthy servers
// over a hundred times in 10 s of this load.
TEST_F(PythonGrayTest, StockServersWithALatencyTailAreNotEjected) {
  std::vector<Server> servers = StartServers(0.10, 200);
  for (const Server &s : servers) ASSERT_FALSE(s.address.empty()) << "see " << dir_;
  std::string output;
  Json r = RunClient(servers, 8, 2, 100, "", &output);
  ASSERT_TRUE(r) << output;
  const double ok = Num(r.get(), "ok"), failed = Num(r.get(), "failed");
  const double calls = ok + failed;
  printf("tail: %.0f calls, %.0f failed, %.0f ejections\n", calls, failed,
         SumOver(r.get(), "ejections"));
  ASSERT_GT(calls, 200);
  // binomial(calls, 0.1), 6 sd: the tail's calls fail, no others
  EXPECT_NEAR(failed, 0.1 * calls, 6 * std::sqrt(calls * 0.09)) << output;
  ASSERT_EQ(io_json_size(io_json_get(r.get(), "endpoints")), static_cast<size_t>(kServers));
  EXPECT_LE(SumOver(r.get(), "ejections"), 2) << output;
  for (const Server &s : servers) {
    const json_value *e = Endpoint(r.get(), s.address);
    ASSERT_NE(e, nullptr) << s.address;
    EXPECT_GT(Num(e, "picks"), 0) << s.address;
  }
}

// Healthy stock servers, one frozen for 3 s while 8 calls are in flight
// with 300 ms deadlines: it is ejected, no other server is, and what fails
// is about what it held (the bound of 40 is //tests/lb:gray_test's).
TEST_F(PythonGrayTest, AFrozenStockServerIsEjected) {
  std::vector<Server> servers = StartServers(0, 0);
  for (const Server &s : servers) ASSERT_FALSE(s.address.empty()) << "see " << dir_;
  ASSERT_GT(servers[1].pid, 0);
  std::string output;
  Json r = RunClient(servers, 7, 8, 300, "--freeze " + std::to_string(servers[1].pid) + " 2 3",
                     &output);
  ASSERT_TRUE(r) << output;
  const json_value *frozen = Endpoint(r.get(), servers[1].address);
  ASSERT_NE(frozen, nullptr) << output;
  printf("freeze: %.0f calls, %.0f failed, frozen server ejected %.0f times\n",
         Num(r.get(), "ok") + Num(r.get(), "failed"), Num(r.get(), "failed"),
         Num(frozen, "ejections"));
  EXPECT_GE(Num(frozen, "ejections"), 1) << output;
  EXPECT_EQ(SumOver(r.get(), "ejections") - Num(frozen, "ejections"), 0) << output;
  EXPECT_LE(Num(r.get(), "failed"), 40) << output;
}

// The same freeze among servers with the tail: the other servers' tail
// calls fail after silences too, so the frozen one's silences do not stand
// out and the failure run (5 in a row, one call at a time on probation)
// ejects it. Healthy servers stay in (at most 2 ejections among them).
TEST_F(PythonGrayTest, AFrozenStockServerAmongTailServersIsEjected) {
  std::vector<Server> servers = StartServers(0.10, 200);
  for (const Server &s : servers) ASSERT_FALSE(s.address.empty()) << "see " << dir_;
  ASSERT_GT(servers[1].pid, 0);
  std::string output;
  Json r = RunClient(servers, 7, 2, 100, "--freeze " + std::to_string(servers[1].pid) + " 2 3",
                     &output);
  ASSERT_TRUE(r) << output;
  const json_value *frozen = Endpoint(r.get(), servers[1].address);
  ASSERT_NE(frozen, nullptr) << output;
  printf("tail and freeze: %.0f calls, %.0f failed, frozen server ejected %.0f times\n",
         Num(r.get(), "ok") + Num(r.get(), "failed"), Num(r.get(), "failed"),
         Num(frozen, "ejections"));
  EXPECT_GE(Num(frozen, "ejections"), 1) << output;
  EXPECT_LE(SumOver(r.get(), "ejections") - Num(frozen, "ejections"), 2) << output;
}

}  // namespace
