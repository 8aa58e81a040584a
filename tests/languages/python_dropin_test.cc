// Python on the system's gRPC core: grpcio built by bazel/python-grpcio.sh
// (its Cython extension links libgrpc.so.29) gets the aperture policy both
// ways, by LD_PRELOAD=libaperture.so and by `import aperture`. Real Python
// processes, real interop servers on 127.0.0.1 that count the calls they
// receive; the slices are read from those counts.
//
// Where the grpcio build lives comes from bazel/setup.sh, which builds it
// once outside the tree and writes bazel/python.bazelrc (imported by
// .bazelrc): APERTURE_PYTHON_DIR; or APERTURE_PYTHON_UNAVAILABLE with the
// reason when its Debian packages are missing and cannot be installed (the
// tests are then skipped with that reason); or APERTURE_PYTHON_BUILD_FAILED
// with the build's error (the tests fail with it).
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <set>
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
constexpr char kConfig[] =
    "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"continuous\",\"minAperture\":2}}]}";
constexpr int kServers = 6;  // 3 peers x 2: each slice is exactly 2 servers
constexpr int kPeers = 3;
constexpr int kCalls = 60;

// The sanitizer runtime, when the library under test is instrumented
// (--config=asan): it must be loaded before everything else.
std::string SanitizerRuntime() {
  std::string lib = Runfile("policy/libaperture.so");
  if (atoi(Shell("objdump -p " + Quote(lib) + " | grep -c libasan").c_str()) == 0) return "";
  std::string asan = Shell("gcc -print-file-name=libasan.so");
  while (!asan.empty() && asan.back() == '\n') asan.pop_back();
  return asan;
}

struct Result {
  int exit_code = -1;
  long ok = -1, failed = -1;
  std::map<std::string, long> peers;  // hostname -> calls, as the client saw them
  std::map<std::string, std::vector<std::string>> values;  // KEY=VALUE lines
  std::string output;

  std::string Value(const std::string &key) const {
    auto it = values.find(key);
    return it == values.end() || it->second.empty() ? "" : it->second.front();
  }
};

Result Parse(int exit_code, const std::string &output) {
  Result r;
  r.exit_code = exit_code;
  r.output = output;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("calls ok=", 0) == 0) {
      std::istringstream words(line);
      std::string w;
      words >> w >> w;
      r.ok = atol(w.c_str() + 3);
      words >> w;
      r.failed = atol(w.c_str() + 7);
      words >> w;  // peers
      while (words >> w) {
        size_t eq = w.rfind('=');
        if (eq != std::string::npos) r.peers[w.substr(0, eq)] = atol(w.c_str() + eq + 1);
      }
      continue;
    }
    size_t eq = line.find('=');
    if (eq != std::string::npos && eq > 0 && line.find(' ') > eq) {
      r.values[line.substr(0, eq)].push_back(line.substr(eq + 1));
    }
  }
  return r;
}

// The named config error gRPC logs when a channel's service config is
// rejected: "errors validating aperture LB policy config: [...]".
std::string ConfigError(const std::string &output) {
  size_t at = output.find("errors validating aperture LB policy config");
  if (at == std::string::npos) return "";
  size_t end = output.find('\n', at);
  return output.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

class PythonDropInTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string unavailable = Env("APERTURE_PYTHON_UNAVAILABLE");
    if (!unavailable.empty()) GTEST_SKIP() << "grpcio on the system core: " << unavailable;
    std::string failed = Env("APERTURE_PYTHON_BUILD_FAILED");
    ASSERT_TRUE(failed.empty()) << "bazel/python-grpcio.sh failed: " << failed;
    grpcio_ = Env("APERTURE_PYTHON_DIR");
    if (grpcio_.empty()) {
      GTEST_SKIP() << "APERTURE_PYTHON_DIR is not set: bazel/setup.sh builds grpcio on the "
                      "system core and writes bazel/python.bazelrc (docs/languages.md)";
    }
    int rc = -1;
    std::string out = Shell("PYTHONPATH=" + Quote(grpcio_) + " " + kPython +
                                " -c 'import grpc, grpc._cython.cygrpc as c; print(c.__file__)' 2>&1",
                            &rc);
    ASSERT_EQ(0, rc) << "grpcio in " << grpcio_ << " does not import: " << out;
    asan_ = SanitizerRuntime();
  }

  // The environment of a Python process: the module from the runfiles
  // before the grpcio build (which also holds an installed copy).
  std::string PythonEnv(const std::string &module_dir) const {
    return "PYTHONPATH=" + Quote(module_dir + ":" + grpcio_) +
           " PYTHONDONTWRITEBYTECODE=1 ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0";
  }
  std::string ModuleDir() const { return Runfile("policy/python"); }
  std::string Library() const { return Runfile("policy/libaperture.so"); }
  std::string Preload(const std::string &extra) const {
    std::string list = asan_.empty() ? extra : (asan_ + (extra.empty() ? "" : " " + extra));
    return list.empty() ? "" : " LD_PRELOAD=" + Quote(list);
  }

  Result RunPython(const std::string &env, const std::string &target, const std::string &config,
                   int calls, const std::string &flags = "") const {
    int rc = -1;
    std::string out = Shell(env + " " + kPython + " " +
                                Quote(Runfile("tests/languages/python_client.py")) + " " +
                                Quote(target) + " " + Quote(config) + " " + std::to_string(calls) +
                                " " + flags + " 2>&1",
                            &rc);
    return Parse(rc, out);
  }

  // Peer k of kPeers that knows nothing of aperture: preload + environment.
  Result RunPreloaded(int k, const std::string &target, int calls = kCalls,
                      const std::string &config = kConfig, const std::string &flags = "") const {
    return RunPython(PythonEnv(ModuleDir()) + Preload(Library()) +
                         " APERTURE_PEER_INDEX=" + std::to_string(k) +
                         " APERTURE_PEER_COUNT=" + std::to_string(kPeers),
                     target, config, calls, flags);
  }

  // Peer k of kPeers through the module (APERTURE_LIBRARY names the file).
  Result RunImported(int k, const std::string &target, int calls = kCalls,
                     const std::string &extra_flags = "") const {
    return RunPython(PythonEnv(ModuleDir()) + Preload("") + " APERTURE_LIBRARY=" + Quote(Library()),
                     target, kConfig, calls,
                     "--coordinate " + std::to_string(k) + " " + std::to_string(kPeers) + " " +
                         extra_flags);
  }

  std::string SameConfigErrorInPythonAndC(const ServerSet &servers,
                                          const std::string &config) const;

  std::string grpcio_;
  std::string asan_;
};

// Calls each server counted itself; -1 when its stats are unreadable.
std::vector<long> ServerCalls(const ServerSet &servers) {
  std::vector<long> calls;
  for (int i = 0; i < servers.size(); i++) {
    Json s = servers.Snapshot(i);
    calls.push_back(s ? static_cast<long>(Num(s.get(), "calls")) : -1);
  }
  return calls;
}

// The servers' counts once they add up to `total` (they write their stats
// every 50 ms); waits at most 5 s, then returns what they say.
std::vector<long> ServerCallsReaching(const ServerSet &servers, long total) {
  std::vector<long> calls;
  for (int attempt = 0; attempt < 100; attempt++) {
    calls = ServerCalls(servers);
    long sum = 0;
    for (long c : calls) sum += c;
    if (sum >= total) break;
    usleep(50 * 1000);
  }
  return calls;
}

// Runs the 3 peers one after another through `run` and returns, for each,
// the servers whose own counts grew while it ran. Every call must succeed
// and the client's view must match the servers' counts.
template <typename Run>
std::vector<std::set<int>> Slices(const ServerSet &servers, Run run, long *total) {
  std::vector<std::set<int>> slices;
  std::vector<long> before = ServerCallsReaching(servers, *total);
  for (int k = 0; k < kPeers; k++) {
    Result r = run(k);
    EXPECT_EQ(0, r.exit_code) << r.output;
    EXPECT_EQ(kCalls, r.ok) << r.output;
    EXPECT_EQ(0, r.failed) << r.output;
    *total += kCalls;
    std::vector<long> after = ServerCallsReaching(servers, *total);
    std::set<int> slice;
    long received = 0;
    for (int i = 0; i < servers.size(); i++) {
      long got = after[i] - before[i];
      received += got;
      if (got > 0) slice.insert(i);
      // What the client saw (the server's hostname metadata) is what the
      // server counted.
      auto seen = r.peers.find(servers.hostname(i));
      EXPECT_EQ(got, seen == r.peers.end() ? 0 : seen->second)
          << "peer " << k << " at " << servers.hostname(i) << "\n" << r.output;
    }
    EXPECT_EQ(kCalls, received) << "peer " << k;
    slices.push_back(slice);
    before = after;
  }
  return slices;
}

// Each peer reaches exactly its 2 servers, the slices are disjoint and
// together cover all 6.
void ExpectDisjointCover(const std::vector<std::set<int>> &slices) {
  ASSERT_EQ(static_cast<size_t>(kPeers), slices.size());
  std::set<int> all;
  for (size_t k = 0; k < slices.size(); k++) {
    EXPECT_EQ(2u, slices[k].size()) << "peer " << k;
    for (int s : slices[k]) EXPECT_TRUE(all.insert(s).second) << "server s" << s << " in two slices";
  }
  EXPECT_EQ(static_cast<size_t>(kServers), all.size()) << "the slices do not cover the servers";
}

TEST_F(PythonDropInTest, PreloadedClientsTakeDisjointSlicesThatCoverTheServers) {
  ServerSet servers(kServers, {}, "python_preload");
  long total = 0;
  ExpectDisjointCover(Slices(
      servers, [&](int k) { return RunPreloaded(k, servers.Target()); }, &total));
}

// `import aperture` + aperture.set_coordinate(k, 3) gives the same slices
// as the preload with APERTURE_PEER_INDEX=k (same ring, same coordinate).
TEST_F(PythonDropInTest, ImportedModuleClientsTakeTheSameSlicesAsThePreload) {
  ServerSet servers(kServers, {}, "python_import");
  long total = 0;
  std::vector<std::set<int>> imported =
      Slices(servers, [&](int k) { return RunImported(k, servers.Target()); }, &total);
  ExpectDisjointCover(imported);
  std::vector<std::set<int>> preloaded =
      Slices(servers, [&](int k) { return RunPreloaded(k, servers.Target()); }, &total);
  EXPECT_EQ(preloaded, imported);
}

// grpc.aio runs on the same extension: asyncio clients take the same
// slices as synchronous ones.
TEST_F(PythonDropInTest, AsyncioClientsTakeTheSameSlicesAsSynchronousOnes) {
  ServerSet servers(kServers, {}, "python_aio");
  long total = 0;
  std::vector<std::set<int>> aio = Slices(
      servers, [&](int k) { return RunPreloaded(k, servers.Target(), kCalls, kConfig, "--aio"); },
      &total);
  ExpectDisjointCover(aio);
  std::vector<std::set<int>> sync =
      Slices(servers, [&](int k) { return RunPreloaded(k, servers.Target()); }, &total);
  EXPECT_EQ(sync, aio);
}

// A Python client serves its own status (aperture.start_status_server) and
// reads it with aperture.status(): its ring is the one the servers saw.
TEST_F(PythonDropInTest, ClientReadsItsOwnStatusThroughTheStatusProto) {
  ServerSet servers(kServers, {}, "python_status");
  Result r = RunImported(1, servers.Target(), 30, "--status");
  ASSERT_EQ(0, r.exit_code) << r.output;
  ASSERT_EQ(30, r.ok) << r.output;
  char resolved[4096];
  ASSERT_NE(nullptr, realpath(Library().c_str(), resolved));
  EXPECT_EQ(std::string(resolved), r.Value("library")) << r.output;  // APERTURE_LIBRARY's file
  std::vector<long> calls = ServerCallsReaching(servers, 30);
  Json status(io_json_parse(r.Value("status").c_str(), nullptr, 0));
  ASSERT_TRUE(status) << r.output;
  const json_value *rings = io_json_get(status.get(), "rings");
  ASSERT_EQ(1u, io_json_size(rings)) << r.output;
  const json_value *ring = io_json_at(rings, 0);
  EXPECT_STREQ(servers.Target().c_str(), io_json_string(io_json_get(ring, "target")));
  EXPECT_STREQ("continuous", io_json_string(io_json_get(ring, "mode")));
  EXPECT_EQ(1, Num(ring, "peer_index"));
  EXPECT_EQ(kPeers, Num(ring, "peer_count"));
  EXPECT_STREQ("api", io_json_string(io_json_get(ring, "coordinate_source_name")));
  EXPECT_EQ(kServers, Num(ring, "endpoint_count"));
  const json_value *endpoints = io_json_get(ring, "endpoints");
  ASSERT_EQ(static_cast<size_t>(kServers), io_json_size(endpoints));
  double picks = 0;
  int members = 0;
  for (size_t e = 0; e < io_json_size(endpoints); e++) {
    const json_value *ep = io_json_at(endpoints, e);
    std::string address = io_json_string(io_json_get(ep, "address"));
    int server = -1;
    for (int i = 0; i < servers.size(); i++) {
      if (servers.Address(i) == address) server = i;
    }
    ASSERT_GE(server, 0) << address;
    bool member = io_json_bool(io_json_get(ep, "in_aperture"), 0) != 0;
    members += member;
    // Members are exactly the servers that received calls, with the
    // policy's pick count equal to the server's own count.
    EXPECT_EQ(member, calls[server] > 0) << address;
    EXPECT_EQ(calls[server], Num(ep, "picks")) << address;
    EXPECT_EQ(0, Num(ep, "failures")) << address;
    picks += Num(ep, "picks");
  }
  EXPECT_EQ(2, members);
  EXPECT_EQ(30, picks);
}

// Runs a Python client (preloaded, peer 0) and the plain C client with the
// same service config, 2 calls each; returns the named config error they
// share after checking that both failed every call and no server saw one.
std::string PythonDropInTest::SameConfigErrorInPythonAndC(const ServerSet &servers,
                                                          const std::string &config) const {
  Result py = RunPreloaded(0, servers.Target(), 2, config);
  int c_rc = -1;
  std::string c_out =
      Shell("ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0" + Preload(Library()) + " " +
                Quote(Runfile("tests/lb/plain_c_client")) + " " + Quote(servers.Target()) + " " +
                Quote(config) + " 2 2>&1",
            &c_rc);
  Result c = Parse(c_rc, c_out);
  EXPECT_EQ(1, py.exit_code) << py.output;
  EXPECT_EQ(2, py.failed) << py.output;
  EXPECT_EQ(1, c.exit_code) << c.output;
  std::string named = ConfigError(c.output);
  EXPECT_FALSE(named.empty()) << c.output;
  EXPECT_EQ(named, ConfigError(py.output)) << py.output;
  EXPECT_FALSE(py.Value("first_error").empty()) << py.output;
  EXPECT_EQ(c.Value("first_error"), py.Value("first_error"));
  std::vector<long> calls = ServerCalls(servers);
  EXPECT_EQ(0, calls[0] + calls[1]);
  return named;
}

// An invalid aperture config reaches Python exactly as it reaches C: gRPC
// names the bad fields in the same error, and the calls fail with the
// same status.
TEST_F(PythonDropInTest, ConfigErrorReachesPythonAsItReachesC) {
  ServerSet servers(2, {}, "python_config_error");
  std::string named = SameConfigErrorInPythonAndC(
      servers,
      "{\"loadBalancingConfig\":[{\"aperture\":{\"minAperture\":0,\"choiceCount\":11}}]}");
  EXPECT_NE(std::string::npos, named.find("field:minAperture error:")) << named;
  EXPECT_NE(std::string::npos, named.find("field:choiceCount error:")) << named;
}

// The contract: a misspelt field and a field of a newer release
// are ignored, not errors. A preloaded Python client's calls succeed, its
// status read through aperture.status() holds one warning per field, and
// it logs each once.
// (Until this release both fields were errors, named the same in Python
// and C; this test replaced that one.)
TEST_F(PythonDropInTest, IgnoredConfigFieldsAreWarningsInTheStatusAndTheLog) {
  const std::string typo =
      "unknown field \"minApperture\" ignored (did you mean \"minAperture\"?)";
  const std::string future = "unknown field \"futureField\" ignored";
  const std::string config =
      "{\"loadBalancingConfig\":[{\"aperture\":{\"minApperture\":2,\"futureField\":{\"x\":1}}}]}";
  ServerSet servers(3, {}, "python_warnings");
  Result py = RunPreloaded(0, servers.Target(), 30, config, "--status");
  EXPECT_EQ(0, py.exit_code) << py.output;
  EXPECT_EQ(30, py.ok) << py.output;
  EXPECT_EQ(0, py.failed) << py.output;
  Json status(io_json_parse(py.Value("status").c_str(), nullptr, 0));
  ASSERT_TRUE(status) << py.output;
  const json_value *rings = io_json_get(status.get(), "rings");
  ASSERT_EQ(1u, io_json_size(rings)) << py.output;
  const json_value *warnings = io_json_get(io_json_at(rings, 0), "config_warnings");
  ASSERT_EQ(2u, io_json_size(warnings)) << py.output;
  EXPECT_EQ(future, io_json_string(io_json_at(warnings, 0)));
  EXPECT_EQ(typo, io_json_string(io_json_at(warnings, 1)));

  // Logged once each (gRPC's log goes to the process's stderr).
  for (const std::string &w : {typo, future}) {
    size_t n = 0;
    for (size_t at = py.output.find(w); at != std::string::npos; at = py.output.find(w, at + 1)) {
      n += py.output.compare(at + w.size(), 1, "\n") == 0;  // the log line, not the status JSON
    }
    EXPECT_EQ(1u, n) << w << " in\n" << py.output;
  }
}

// Errors of the C API become ApertureError with the C message and code.
TEST_F(PythonDropInTest, CApiErrorsBecomePythonExceptionsWithTheCMessage) {
  ServerSet servers(2, {}, "python_api_errors");
  Result r = RunImported(0, servers.Target(), 1, "--api-errors");
  EXPECT_EQ(0, r.exit_code) << r.output;
  auto it = r.values.find("api_error");
  ASSERT_NE(r.values.end(), it) << r.output;
  std::vector<std::string> want = {
      "APERTURE_EINVAL peer_index must be less than peer_count (3), got 3",
      "APERTURE_ERANGE peer_count must be in [1, 1000000], got 0",
      "APERTURE_ERANGE peer_count must be in [1, 1000000], got 1000001"};
  EXPECT_EQ(want, it->second) << r.output;
}

// With automatic registration off, register() after the first channel is
// too late: APERTURE_ESTATE with the C message, and the channel has no
// aperture policy.
TEST_F(PythonDropInTest, RegisteringAfterTheFirstChannelRaisesEstate) {
  ServerSet servers(2, {}, "python_late");
  Result r = RunPython(PythonEnv(ModuleDir()) + Preload("") + " APERTURE_NO_AUTOREGISTER=1" +
                           " APERTURE_LIBRARY=" + Quote(Library()),
                       servers.Target(), kConfig, 2, "--register-late");
  EXPECT_EQ(1, r.exit_code) << r.output;
  EXPECT_EQ(2, r.failed) << r.output;
  EXPECT_EQ(0u, r.Value("register_error").find("APERTURE_ESTATE too late to register")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("No known policies in list: aperture")) << r.output;
}

// Control: neither preload nor import, and this grpcio knows no aperture.
TEST_F(PythonDropInTest, WithoutTheLibraryPythonChannelsHaveNoAperturePolicy) {
  ServerSet servers(2, {}, "python_control");
  Result r = RunPython(PythonEnv(ModuleDir()) + Preload(""), servers.Target(), kConfig, 2);
  EXPECT_EQ(1, r.exit_code) << r.output;
  EXPECT_EQ(0, r.ok) << r.output;
  EXPECT_EQ(2, r.failed) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("No known policies in list: aperture")) << r.output;
}

// The Debian package's module, unpacked under another root, finds the
// package's library beside it (no APERTURE_LIBRARY) and gives the policy.
TEST_F(PythonDropInTest, DebianPackageModuleFindsThePackageLibrary) {
  std::string root = TempDir("python_deb");
  int rc = -1;
  std::string out = Shell("dpkg -x " + Quote(Runfile("policy/pkg/aperture.deb")) + " " +
                              Quote(root) + " 2>&1",
                          &rc);
  ASSERT_EQ(0, rc) << out;
  std::string multiarch = Shell("gcc -print-multiarch");
  while (!multiarch.empty() && multiarch.back() == '\n') multiarch.pop_back();
  ServerSet servers(kServers, {}, "python_deb_servers");
  Result r = RunPython(PythonEnv(root + "/usr/lib/python3/dist-packages") + Preload(""),
                       servers.Target(), kConfig, 30, "--coordinate 0 3");
  EXPECT_EQ(0, r.exit_code) << r.output;
  EXPECT_EQ(30, r.ok) << r.output;
  char resolved[4096];
  std::string want = root + "/usr/lib/" + multiarch + "/libaperture.so";
  ASSERT_NE(nullptr, realpath(want.c_str(), resolved)) << want;
  EXPECT_EQ(std::string(resolved), r.Value("library")) << r.output;
  EXPECT_EQ(2u, r.peers.size()) << r.output;
}

}  // namespace
