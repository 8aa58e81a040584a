// The gray scenario's network faults (interop/fleet/fleet_gray_netns.h) in a
// network namespace of the test's own, with a veth pair and no traffic:
// a process's namespace found by its pid, the device holding an address,
// the link taken down and up, blackhole routes added and deleted. Needs
// root (as --network netns does); skipped otherwise.
#include "interop/fleet/fleet_gray_netns.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "interop/common/proc.h"

namespace {

// Runs a shell command; its output.
std::string Sh(const std::string &cmd, int *status = nullptr) {
  std::string out;
  FILE *f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return out;
  char buf[512];
  while (fgets(buf, sizeof(buf), f) != nullptr) out += buf;
  int rc = pclose(f);
  if (status) *status = rc;
  return out;
}

class GrayNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make a network namespace";
    ns_ = "apgray-test-" + std::to_string(getpid());
    int rc = 0;
    std::string out = Sh("ip netns add " + ns_, &rc);
    if (rc != 0) GTEST_SKIP() << "cannot make a network namespace here: " << out;
    made_ = true;
    ASSERT_EQ("", Sh("ip -n " + ns_ + " link add veth0 type veth peer name veth1"));
    ASSERT_EQ("", Sh("ip -n " + ns_ + " addr add 198.18.200.5/24 dev veth0"));
    ASSERT_EQ("", Sh("ip -n " + ns_ + " link set veth0 up"));
    const char *argv[] = {"/usr/sbin/ip", "netns", "exec", ns_.c_str(), "/bin/sleep", "30",
                          nullptr};
    sleeper_ = io_proc_start(const_cast<char *const *>(argv), nullptr);
    ASSERT_NE(nullptr, sleeper_);
  }
  void TearDown() override {
    if (sleeper_ != nullptr) io_proc_stop(sleeper_, 1000);
    if (made_) Sh("ip netns del " + ns_);
  }
  bool LinkUp() {
    std::string line = Sh("ip -n " + ns_ + " -o link show dev veth0");
    size_t open = line.find('<'), close = line.find('>');
    std::string flags = open != std::string::npos && close != std::string::npos
                            ? "," + line.substr(open + 1, close - open - 1) + ","
                            : "";
    return flags.find(",UP,") != std::string::npos;
  }
  std::string ns_;
  bool made_ = false;
  proc *sleeper_ = nullptr;
};

TEST_F(GrayNetnsTest, FindsTheNamespaceOfAProcessAndTheDeviceOfAnAddress) {
  char ns[GRAY_NETNS_NAME_LEN], err[200];
  // `ip netns exec` has to have entered the namespace first
  int rc = -1;
  for (int i = 0; i < 100 && rc != 0; i++) {
    rc = io_fleet_gray_netns_of(io_proc_pid(sleeper_), ns, sizeof(ns), err, sizeof(err));
    if (rc != 0) usleep(20000);
  }
  ASSERT_EQ(0, rc) << err;
  EXPECT_EQ(ns_, ns);
  EXPECT_EQ(-1, io_fleet_gray_netns_of(getpid(), ns, sizeof(ns), err, sizeof(err)));
  EXPECT_NE(std::string::npos, std::string(err).find("no named network namespace")) << err;
  char dev[32];
  ASSERT_EQ(0, io_fleet_gray_dev_of(ns_.c_str(), "198.18.200.5", dev, sizeof(dev), err,
                                    sizeof(err)))
      << err;
  EXPECT_STREQ("veth0", dev);
  EXPECT_EQ(-1, io_fleet_gray_dev_of(ns_.c_str(), "198.18.200.6", dev, sizeof(dev), err,
                                     sizeof(err)));
}

TEST_F(GrayNetnsTest, TakesTheLinkDownAndUp) {
  char err[200];
  ASSERT_TRUE(LinkUp());
  ASSERT_EQ(0, io_fleet_gray_link(ns_.c_str(), "veth0", 0, err, sizeof(err))) << err;
  EXPECT_FALSE(LinkUp());
  ASSERT_EQ(0, io_fleet_gray_link(ns_.c_str(), "veth0", 1, err, sizeof(err))) << err;
  EXPECT_TRUE(LinkUp());
  EXPECT_EQ(-1, io_fleet_gray_link(ns_.c_str(), "nosuch0", 0, err, sizeof(err)));
  EXPECT_NE(std::string::npos, std::string(err).find("nosuch0")) << err;
}

TEST_F(GrayNetnsTest, AddsAndDeletesBlackholeRoutes) {
  char err[200];
  const std::string show = "ip -n " + ns_ + " route show";
  ASSERT_EQ(0, io_fleet_gray_blackhole(ns_.c_str(), "198.18.200.9", 1, err, sizeof(err))) << err;
  EXPECT_NE(std::string::npos, Sh(show).find("blackhole 198.18.200.9")) << Sh(show);
  // the same route twice is an error, as is deleting one that is not there
  EXPECT_EQ(-1, io_fleet_gray_blackhole(ns_.c_str(), "198.18.200.9", 1, err, sizeof(err)));
  ASSERT_EQ(0, io_fleet_gray_blackhole(ns_.c_str(), "198.18.200.9", 0, err, sizeof(err))) << err;
  EXPECT_EQ(std::string::npos, Sh(show).find("blackhole")) << Sh(show);
  EXPECT_EQ(-1, io_fleet_gray_blackhole(ns_.c_str(), "198.18.200.9", 0, err, sizeof(err)));
}

}  // namespace
