// Separate client processes: a plain C client linked with the aperture
// library, and a C client that knows nothing of aperture run under
// LD_PRELOAD=libaperture.so. Backends run in this test process.
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/core/ring/ap_order.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

std::string g_argv0;

// Absolute path of a data dependency in the runfiles tree.
std::string Runfile(const std::string& path) {
  std::string root;
  if (const char* srcdir = getenv("TEST_SRCDIR")) {
    root = std::string(srcdir) + "/aperture/";
  } else {
    root = g_argv0 + ".runfiles/aperture/";
  }
  char resolved[PATH_MAX];
  if (realpath((root + path).c_str(), resolved) == nullptr) return root + path;
  return resolved;
}

struct ChildResult {
  int exit_code = -1;
  std::string output;
};

// Runs `argv` with extra environment entries; captures stdout+stderr.
ChildResult RunChild(const std::vector<std::string>& argv,
                     const std::vector<std::string>& env) {
  int pipefd[2];
  if (pipe(pipefd) != 0) abort();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    close(pipefd[0]);
    close(pipefd[1]);
    for (const auto& kv : env) putenv(strdup(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    perror("execv");
    _exit(127);
  }
  close(pipefd[1]);
  ChildResult r;
  char buf[4096];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) r.output.append(buf, n);
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

class ClientProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 9; ++i) backends_.push_back(std::make_unique<Backend>());
    target_ = "ipv4:";
    for (size_t i = 0; i < backends_.size(); ++i) {
      if (i > 0) target_ += ",";
      target_ += backends_[i]->address();
      addresses_.push_back(backends_[i]->address());
    }
  }
  // Expected members of client `index` of 3 with minAperture 2 in the
  // policy's default mode (smooth).
  std::map<std::string, double> Expected(uint32_t index) {
    return ExpectedMembers(addresses_, oracle::Mode::kSmooth, index, 3, 2);
  }
  void ExpectOnlyMembersCalled(const std::map<std::string, double>& members,
                               uint64_t calls) {
    uint64_t total = 0;
    for (const auto& b : backends_) {
      if (members.count(b->address()) == 0) {
        EXPECT_EQ(b->calls(), 0u) << "non-member " << b->address();
      }
      total += b->calls();
    }
    EXPECT_EQ(total, calls);
  }
  // Sanitizers: the preloaded library comes before the runtime.
  std::vector<std::string> SanitizerEnv() {
    return {"ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"};
  }

  std::vector<std::unique_ptr<Backend>> backends_;
  std::vector<std::string> addresses_;
  std::string target_;
};

TEST_F(ClientProcessTest, PlainCClientLinkedWithAperture) {
  auto members = Expected(0);
  ChildResult r = RunChild(
      {Runfile("tests/lb/c_client"), target_,
       "{\"loadBalancingConfig\":[{\"aperture\":{\"peerIndex\":0,"
       "\"peerCount\":3,\"minAperture\":2}}]}",
       "200"},
      SanitizerEnv());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ok=200 failed=0"), std::string::npos) << r.output;
  ExpectOnlyMembersCalled(members, 200);
}

TEST_F(ClientProcessTest, LdPreloadGivesThePolicyToAnUnawareProgram) {
  auto members = Expected(1);
  std::vector<std::string> env = SanitizerEnv();
  env.push_back("LD_PRELOAD=" + Runfile("policy/libaperture.so"));
  env.push_back("APERTURE_PEER_INDEX=1");
  env.push_back("APERTURE_PEER_COUNT=3");
  ChildResult r = RunChild(
      {Runfile("tests/lb/plain_c_client"), target_,
       "{\"loadBalancingConfig\":[{\"aperture\":{\"minAperture\":2}}]}",
       "200"},
      env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ok=200 failed=0"), std::string::npos) << r.output;
  ExpectOnlyMembersCalled(members, 200);
}

// Control: without the preload the same program has no aperture policy.
TEST_F(ClientProcessTest, WithoutPreloadThePolicyIsUnknown) {
  ChildResult r = RunChild(
      {Runfile("tests/lb/plain_c_client"), target_,
       "{\"loadBalancingConfig\":[{\"aperture\":{}}]}", "3"},
      SanitizerEnv());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ok=0 failed=3"), std::string::npos) << r.output;
  ExpectOnlyMembersCalled({}, 0);
}

// APERTURE_NO_AUTOREGISTER turns the load-time registration off.
TEST_F(ClientProcessTest, NoAutoregisterDisablesThePreload) {
  std::vector<std::string> env = SanitizerEnv();
  env.push_back("LD_PRELOAD=" + Runfile("policy/libaperture.so"));
  env.push_back("APERTURE_NO_AUTOREGISTER=1");
  ChildResult r = RunChild(
      {Runfile("tests/lb/plain_c_client"), target_,
       "{\"loadBalancingConfig\":[{\"aperture\":{}}]}", "3"},
      env);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ok=0 failed=3"), std::string::npos) << r.output;
}

// Three client processes with only a peer list (peerTarget, a static
// ipv4: list) and each its own APERTURE_PEER_SELF take disjoint slices that
// cover the servers: the members explicit coordinates give.
TEST_F(ClientProcessTest, PeerTargetGivesEachProcessItsOwnSlice) {
  const std::string peers = "127.0.0.1:7001,127.0.0.2:7001,127.0.0.3:7001";
  const std::string config =
      "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"continuous\","
      "\"minAperture\":3,\"peerTarget\":\"ipv4:" + peers + "\"}}]}";
  std::vector<const char*> entries = {"127.0.0.1:7001", "127.0.0.2:7001",
                                      "127.0.0.3:7001"};
  size_t order[3];
  ASSERT_EQ(AP_OK, ap_order_endpoints(entries.data(), 3, order, nullptr));
  std::set<std::string> covered;
  for (uint32_t k = 0; k < 3; ++k) {
    // The process at ring position k of the peer list.
    std::string self = std::string(entries[order[k]]).substr(0, 9);
    auto members =
        ExpectedMembers(addresses_, oracle::Mode::kContinuous, k, 3, 3);
    ASSERT_EQ(members.size(), 3u);
    for (auto& b : backends_) b->ResetCalls();
    std::vector<std::string> env = SanitizerEnv();
    env.push_back("APERTURE_PEER_SELF=" + self);
    ChildResult r = RunChild(
        {Runfile("tests/lb/c_client"), target_, config, "150"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("ok=150 failed=0"), std::string::npos)
        << r.output;
    ExpectOnlyMembersCalled(members, 150);
    for (const auto& m : members) {
      EXPECT_TRUE(covered.insert(m.first).second) << m.first << " twice";
    }
  }
  EXPECT_EQ(covered.size(), addresses_.size());
}

}  // namespace
}  // namespace aperture_test

int main(int argc, char** argv) {
  aperture_test::g_argv0 = argv[0];
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
