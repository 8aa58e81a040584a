// LD_PRELOAD=libaperture.so gives the aperture policy to programs in the
// other languages that run on the system's gRPC C core: a C++ program on
// libgrpc++ (service config through grpc::ChannelArguments) and a Ruby
// program on Debian's ruby-grpc. Neither knows aperture; each must reach
// only its aperture: peers 0 and 1 of 2 (continuous, minAperture 2 over 4
// servers) each reach 2 servers, disjoint halves of the 4, and both
// languages agree on who peer 0's members are.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

constexpr char kConfig[] =
    "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"continuous\",\"minAperture\":2}}]}";

std::string Runfile(const std::string &path) {
  const char *srcdir = getenv("TEST_SRCDIR");
  const char *ws = getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "aperture") + "/" + path;
}

struct Result {
  int exit_code = -1;
  long ok = -1, failed = -1;
  std::set<std::string> peers;
  std::string output;
};

std::string Quote(const std::string &s) { return "'" + s + "'"; }

// Runs `program` (argv as a shell-quoted line) with `env` prefixed.
Result RunProgram(const std::string &env, const std::string &program, const std::string &target,
                  int calls) {
  Result r;
  std::string cmd = env + " " + program + " " + Quote(target) + " " + Quote(kConfig) + " " +
                    std::to_string(calls) + " 2>&1";
  FILE *f = popen(cmd.c_str(), "r");
  if (f == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.output.append(buf, n);
  int status = pclose(f);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  size_t at = r.output.rfind("calls ok=");
  if (at == std::string::npos) return r;
  std::istringstream words(r.output.substr(at));
  std::string w;
  words >> w;  // calls
  words >> w;
  r.ok = atol(w.c_str() + 3);
  words >> w;
  r.failed = atol(w.c_str() + 7);
  words >> w;  // peers
  while (words >> w) {
    if (w.find('=') == std::string::npos) break;
    r.peers.insert(w.substr(0, w.rfind('=')));
  }
  return r;
}

// LD_PRELOAD of the library; under --config=asan (an instrumented
// library) the sanitizer runtime is preloaded before it.
std::string Preload(int peer_index) {
  std::string lib = Runfile("policy/libaperture.so");
  std::string preload = lib;
  FILE *f = popen(("objdump -p " + Quote(lib) + " | grep -c libasan").c_str(), "r");
  char buf[32] = "";
  if (f != nullptr) {
    if (fgets(buf, sizeof buf, f) == nullptr) buf[0] = '\0';
    pclose(f);
  }
  if (atoi(buf) > 0) {
    FILE *g = popen("gcc -print-file-name=libasan.so", "r");
    char asan[512] = "";
    if (g != nullptr) {
      if (fgets(asan, sizeof asan, g) == nullptr) asan[0] = '\0';
      pclose(g);
    }
    std::string a(asan);
    while (!a.empty() && a.back() == '\n') a.pop_back();
    preload = a + " " + lib;
  }
  return "LD_PRELOAD=" + Quote(preload) +
         " ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 APERTURE_PEER_INDEX=" +
         std::to_string(peer_index) + " APERTURE_PEER_COUNT=2";
}

std::string CppProgram() { return Quote(Runfile("tests/languages/cpp_client")); }
std::string RubyProgram() { return "ruby " + Quote(Runfile("tests/languages/ruby_client.rb")); }

// Peers 0 and 1 of one program: each reaches 2 of the 4 servers, the two
// halves are disjoint and cover all 4; returns peer 0's servers.
std::set<std::string> ExpectDisjointHalves(const ServerSet &servers, const std::string &program) {
  Result p0 = RunProgram(Preload(0), program, servers.Target(), 100);
  Result p1 = RunProgram(Preload(1), program, servers.Target(), 100);
  for (const Result *r : {&p0, &p1}) {
    EXPECT_EQ(0, r->exit_code) << r->output;
    EXPECT_EQ(100, r->ok) << r->output;
    EXPECT_EQ(0, r->failed) << r->output;
    EXPECT_EQ(2u, r->peers.size()) << r->output;
  }
  std::set<std::string> all = p0.peers;
  all.insert(p1.peers.begin(), p1.peers.end());
  EXPECT_EQ(4u, all.size()) << "peer 0 and peer 1 overlap";
  for (const auto &p : all) EXPECT_EQ('s', p[0]) << p;
  return p0.peers;
}

TEST(DropInTest, CppProgramOnGrpcppReachesOnlyItsAperture) {
  ServerSet servers(4, {}, "dropin_cpp");
  ExpectDisjointHalves(servers, CppProgram());
}

TEST(DropInTest, RubyProgramOnRubyGrpcReachesOnlyItsApertureAndAgreesWithCpp) {
  ServerSet servers(4, {}, "dropin_ruby");
  std::set<std::string> ruby = ExpectDisjointHalves(servers, RubyProgram());
  Result cpp = RunProgram(Preload(0), CppProgram(), servers.Target(), 50);
  EXPECT_EQ(0, cpp.failed) << cpp.output;
  EXPECT_EQ(ruby, cpp.peers);  // same ring, same coordinate, same members
}

// Controls: without the preload neither program knows the policy.
TEST(DropInTest, WithoutThePreloadBothProgramsFailTheirCalls) {
  ServerSet servers(2, {}, "dropin_control");
  for (const std::string &program : {CppProgram(), RubyProgram()}) {
    Result r = RunProgram("ASAN_OPTIONS=detect_leaks=0", program, servers.Target(), 2);
    EXPECT_EQ(1, r.exit_code) << r.output;
    EXPECT_EQ(0, r.ok) << r.output;
    EXPECT_EQ(2, r.failed) << r.output;
  }
}

}  // namespace
