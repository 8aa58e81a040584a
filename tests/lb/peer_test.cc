// Peer discovery: channels that find their coordinate from a peer target
// (peerTarget / peerSelf), follow changes of the peer list live, keep
// serving through resolution faults, and share one watcher per target.
#include <stdlib.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aperture.h"
#include "interop/fleet/dns_stub.h"
#include "policy/core/ring/ap_order.h"
#include "policy/core/stable/ap_stable.h"
#include "policy/lb/coordinate/peer_self.h"
#include "policy/lb/coordinate/peer_watcher.h"
#include "policy/lb/test_hooks.h"
#include "tests/core/test_util.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

using aptest::Params;

const char* const kPeerPort = "7001";

// Position the core's ring order gives `self` among `peers`.
uint32_t OrderedIndex(const std::vector<std::string>& peers,
                      const std::string& self) {
  std::vector<const char*> p;
  for (const auto& s : peers) p.push_back(s.c_str());
  std::vector<size_t> order(peers.size());
  EXPECT_EQ(AP_OK, ap_order_endpoints(p.data(), p.size(), order.data(),
                                      nullptr));
  for (size_t k = 0; k < order.size(); ++k) {
    if (peers[order[k]] == self) return static_cast<uint32_t>(k);
  }
  ADD_FAILURE() << self << " not among the peers";
  return 0;
}

std::vector<std::string> PeerEntries(const std::vector<std::string>& ips) {
  std::vector<std::string> out;
  for (const auto& ip : ips) out.push_back(ip + ":" + kPeerPort);
  return out;
}

std::string Ipv4Target(const std::vector<std::string>& ips) {
  std::string t = "ipv4:";
  for (size_t i = 0; i < ips.size(); ++i) {
    t += (i ? "," : "") + ips[i] + ":" + kPeerPort;
  }
  return t;
}

std::set<std::string> Keys(const std::map<std::string, double>& m) {
  std::set<std::string> out;
  for (const auto& kv : m) out.insert(kv.first);
  return out;
}

std::set<std::string> MemberSet(const StateView& s) {
  auto m = s.Members();
  return std::set<std::string>(m.begin(), m.end());
}

class PeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The process-wide sources must not interfere.
    unsetenv("APERTURE_PEER_INDEX");
    unsetenv("APERTURE_PEER_COUNT");
    unsetenv("APERTURE_PEER_TARGET");
    unsetenv("APERTURE_PEER_SELF");
    aperture_clear_coordinate();
  }
};

// Three channels with only a static peer list and each its own peerSelf
// take disjoint slices that cover the servers, exactly the members the
// same coordinates given explicitly produce.
TEST_F(PeerTest, ThreeClientsTakeDisjointSlicesFromThePeerList) {
  auto backends = StartBackends(9);
  auto addresses = Addresses(backends);
  const std::vector<std::string> ips = {"127.0.0.1", "127.0.0.2", "127.0.0.3"};
  const std::vector<std::string> peers = PeerEntries(ips);
  std::vector<std::unique_ptr<TestChannel>> channels;
  for (size_t i = 0; i < ips.size(); ++i) {
    channels.push_back(std::make_unique<TestChannel>(
        "peers-three-" + std::to_string(i),
        Config("{\"mode\":\"continuous\",\"minAperture\":3,"
               "\"eagerConnect\":true,\"peerTarget\":\"" +
               Ipv4Target(ips) + "\",\"peerSelf\":\"" + ips[i] + "\"}")));
    channels.back()->SetAddresses(addresses);
  }
  std::set<std::string> covered;
  std::string fingerprint;
  for (size_t i = 0; i < ips.size(); ++i) {
    const uint32_t index = OrderedIndex(peers, peers[i]);
    auto expected = ExpectedMembers(addresses, oracle::Mode::kContinuous, index, 3, 3);
    ASSERT_EQ(expected.size(), 3u);
    ASSERT_TRUE(WaitAllMembersReady(channels[i]->target(), 3));
    StateView s;
    ASSERT_TRUE(Snapshot(channels[i]->target(), &s));
    EXPECT_EQ(s.coordinate_source, "peer_target") << s.last_status;
    EXPECT_EQ(s.peer_index, index);
    EXPECT_EQ(s.peer_count, 3u);
    EXPECT_EQ(s.peer_target, Ipv4Target(ips));
    EXPECT_EQ(MemberSet(s), Keys(expected));
    for (const auto& m : MemberSet(s)) {
      EXPECT_TRUE(covered.insert(m).second) << m << " in two slices";
    }
    EXPECT_EQ(s.peer_fingerprint.size(), 16u);
    if (i == 0) fingerprint = s.peer_fingerprint;
    EXPECT_EQ(s.peer_fingerprint, fingerprint) << "clients disagree";

    // The explicit coordinate gives the same members.
    TestChannel explicit_channel(
        "peers-explicit-" + std::to_string(i),
        Config("{\"mode\":\"continuous\",\"minAperture\":3,"
               "\"eagerConnect\":true,\"peerIndex\":" +
               std::to_string(index) + ",\"peerCount\":3}"));
    explicit_channel.SetAddresses(addresses);
    ASSERT_TRUE(WaitAllMembersReady(explicit_channel.target(), 3));
    StateView e;
    ASSERT_TRUE(Snapshot(explicit_channel.target(), &e));
    EXPECT_EQ(MemberSet(e), MemberSet(s));

    // Calls reach only the slice.
    for (auto& b : backends) b->ResetCalls();
    EXPECT_EQ(channels[i]->RunLoad(60, 4), 0);
    for (auto& b : backends) {
      if (expected.count(b->address()) == 0) {
        EXPECT_EQ(b->calls(), 0u);
      }
    }
  }
  EXPECT_EQ(covered.size(), addresses.size());
}

// A DNS-served peer list that grows re-coordinates the live channel with no
// backend update; the new members are the ones the core predicts.
class DnsPeerTest : public PeerTest {
 protected:
  void SetUp() override {
    PeerTest::SetUp();
    stub_ = io_dns_stub_start("peers.test", &port_);
    ASSERT_NE(stub_, nullptr);
  }
  void TearDown() override { io_dns_stub_stop(stub_); }
  void SetPeers(const std::vector<std::string>& ips) {
    std::vector<const char*> p;
    for (const auto& ip : ips) p.push_back(ip.c_str());
    ASSERT_EQ(0, io_dns_stub_set(stub_, p.data(), p.size()));
  }
  std::string PeerTarget(const std::string& name = "peers.test") const {
    return "dns://127.0.0.1:" + std::to_string(port_) + "/" + name + ":" +
           kPeerPort;
  }
  std::string PeerConfig(const std::string& self, int coalesce_ms = 0,
                         const std::string& name = "peers.test") const {
    return Config("{\"mode\":\"continuous\",\"minAperture\":3,\"eagerConnect\":true,"
                  "\"peerTarget\":\"" + PeerTarget(name) +
                  "\",\"peerSelf\":\"" + self +
                  "\",\"peerRefreshMs\":100,\"updateCoalesceMs\":" +
                  std::to_string(coalesce_ms) + "}");
  }

  dns_stub* stub_ = nullptr;
  int port_ = 0;
};

TEST_F(DnsPeerTest, PeerListChangeRecoordinatesWithoutBackendUpdate) {
  auto backends = StartBackends(12);
  auto addresses = Addresses(backends);
  std::vector<std::string> ips = {"127.0.0.1", "127.0.0.2", "127.0.0.3"};
  SetPeers(ips);
  TestChannel channel("peers-live", PeerConfig("127.0.0.2"));
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.coordinate_source == "peer_target" && s.peer_count == 3;
  }));
  StateView before;
  ASSERT_TRUE(Snapshot(channel.target(), &before));
  EXPECT_EQ(before.peer_index, OrderedIndex(PeerEntries(ips), "127.0.0.2:7001"));

  ips.push_back("127.0.0.4");  // a client joins
  SetPeers(ips);
  const uint32_t index = OrderedIndex(PeerEntries(ips), "127.0.0.2:7001");
  auto expected =
      ExpectedMembers(addresses, oracle::Mode::kContinuous, index, 4, 3);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& s) {
    return s.peer_count == 4 && MemberSet(s) == Keys(expected);
  })) << "never re-coordinated";
  StateView after;
  ASSERT_TRUE(Snapshot(channel.target(), &after));
  EXPECT_EQ(after.resolver_updates, before.resolver_updates)
      << "re-coordinated through a backend update";
  EXPECT_EQ(after.peer_index, index);
  EXPECT_EQ(after.coordinate_changes, before.coordinate_changes + 1);
  EXPECT_NE(after.peer_fingerprint, before.peer_fingerprint);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), expected.size()));
  for (auto& b : backends) b->ResetCalls();
  EXPECT_EQ(channel.RunLoad(60, 4), 0);
  for (auto& b : backends) {
    if (expected.count(b->address()) == 0) {
      EXPECT_EQ(b->calls(), 0u);
    }
  }
}

// Stable mode's row for client `self` of `peers`, the peers keyed by their
// entries in the given order (membership follows the keys, not the order),
// endpoints by their addresses.
std::set<std::string> StableRow(const std::vector<std::string>& addresses,
                                const std::vector<std::string>& peers,
                                const std::string& self, uint32_t min_aperture) {
  std::vector<uint64_t> endpoint_keys, peer_keys;
  for (const auto& a : addresses) endpoint_keys.push_back(ap_stable_key(a.c_str()));
  size_t row = peers.size();
  for (size_t i = 0; i < peers.size(); ++i) {
    peer_keys.push_back(ap_stable_key(peers[i].c_str()));
    if (peers[i] == self) row = i;
  }
  std::set<std::string> out;
  EXPECT_LT(row, peers.size()) << self;
  ap_stable_plan* plan = nullptr;
  ap_error err;
  EXPECT_EQ(AP_OK, ap_stable_plan_create(endpoint_keys.data(), nullptr,
                                         endpoint_keys.size(), peer_keys.data(),
                                         peer_keys.size(), min_aperture, &plan,
                                         &err))
      << err.message;
  for (size_t k = 0; k < ap_stable_plan_row_size(plan, row); ++k) {
    out.insert(addresses[ap_stable_plan_row_endpoints(plan, row)[k]]);
  }
  ap_stable_plan_destroy(plan);
  return out;
}

// Stable mode keys the peers by their entries in the peer list: a peer
// leaving moves this client's members exactly as the plan over the
// remaining entries says, with no backend update.
TEST_F(DnsPeerTest, StableKeysThePeersByTheirEntries) {
  auto backends = StartBackends(12);
  auto addresses = Addresses(backends);
  std::vector<std::string> ips = {"127.0.0.1", "127.0.0.2", "127.0.0.3",
                                  "127.0.0.4"};
  SetPeers(ips);
  const std::string self = "127.0.0.2:7001";
  std::string config = PeerConfig("127.0.0.2");
  const std::string from = "\"mode\":\"continuous\"";
  config.replace(config.find(from), from.size(), "\"mode\":\"stable\"");
  TestChannel channel("peers-stable", config);
  channel.SetAddresses(addresses);
  auto expected = StableRow(addresses, PeerEntries(ips), self, 3);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& s) {
    return s.coordinate_source == "peer_target" && s.peer_count == 4 &&
           MemberSet(s) == expected;
  })) << "members are not the plan row over the peer entries";
  StateView before;
  ASSERT_TRUE(Snapshot(channel.target(), &before));
  EXPECT_EQ(before.mode, "stable");
  EXPECT_EQ(before.peer_keys, "address");
  EXPECT_EQ(before.peer_index, OrderedIndex(PeerEntries(ips), self));

  // Another client leaves: the plan over three entries.
  ips.erase(ips.begin() + 3);
  SetPeers(ips);
  expected = StableRow(addresses, PeerEntries(ips), self, 3);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& s) {
    return s.peer_count == 3 && MemberSet(s) == expected;
  })) << "never re-planned";
  StateView after;
  ASSERT_TRUE(Snapshot(channel.target(), &after));
  EXPECT_EQ(after.resolver_updates, before.resolver_updates);
  // The peers changed, the addresses did not: one more build, for the peers.
  EXPECT_GT(after.snapshot_builds, before.snapshot_builds);
  EXPECT_EQ(after.peer_keys, "address");
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), expected.size()));
  for (auto& b : backends) b->ResetCalls();
  EXPECT_EQ(channel.RunLoad(60, 4), 0);
  for (auto& b : backends) {
    if (expected.count(b->address()) == 0) {
      EXPECT_EQ(b->calls(), 0u);
    }
  }
}

// Faults of the peer target never fail a call: an empty answer keeps the
// last good coordinate (and says so); a target with no answer at all, or a
// list without this process, leaves the documented fallback with a reason.
TEST_F(DnsPeerTest, ResolutionFailuresFailNoCall) {
  auto backends = StartBackends(9);
  auto addresses = Addresses(backends);
  SetPeers({"127.0.0.1", "127.0.0.2", "127.0.0.3"});
  TestChannel channel("peers-faults", PeerConfig("127.0.0.3"));
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.coordinate_source == "peer_target" && s.peer_count == 3;
  }));
  StateView good;
  ASSERT_TRUE(Snapshot(channel.target(), &good));
  EXPECT_EQ(channel.RunLoad(100, 4), 0);

  SetPeers({});  // the name now has no address
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.last_status.find("keeping the last good coordinate") !=
           std::string::npos;
  })) << "the fault never showed in the status";
  std::string first_error;
  EXPECT_EQ(channel.RunLoad(200, 4, nullptr, &first_error), 0) << first_error;
  StateView kept;
  ASSERT_TRUE(Snapshot(channel.target(), &kept));
  EXPECT_EQ(kept.coordinate_source, "peer_target");
  EXPECT_EQ(kept.peer_index, good.peer_index);
  EXPECT_EQ(kept.peer_count, 3u);
  EXPECT_EQ(MemberSet(kept), MemberSet(good));
  EXPECT_EQ(kept.coordinate_changes, good.coordinate_changes);

  // Never a good answer: the random fallback, with the reason.
  TestChannel unknown("peers-never", PeerConfig("127.0.0.1", 0, "void.test"));
  unknown.SetAddresses(addresses);
  ASSERT_TRUE(WaitForState(unknown.target(), [](const StateView& s) {
    return s.last_status.find("resolution failed") != std::string::npos;
  }));
  StateView none;
  ASSERT_TRUE(Snapshot(unknown.target(), &none));
  EXPECT_EQ(none.coordinate_source, "none");
  EXPECT_NE(none.last_status.find("peerTarget"), std::string::npos);
  EXPECT_EQ(unknown.RunLoad(100, 4), 0);

  // This process is not in the list.
  SetPeers({"127.0.0.1", "127.0.0.2"});
  TestChannel stranger("peers-stranger", PeerConfig("127.0.0.9"));
  stranger.SetAddresses(addresses);
  ASSERT_TRUE(WaitForState(stranger.target(), [](const StateView& s) {
    return s.last_status.find("is not in the peer list of 2 entries") !=
           std::string::npos;
  }));
  EXPECT_EQ(stranger.RunLoad(100, 4), 0);
}

// A flapping peer list rebuilds no faster than updateCoalesceMs: after the
// first coordinate, changes inside the window are held.
TEST_F(DnsPeerTest, FlappingPeerListIsDebounced) {
  auto backends = StartBackends(6);
  SetPeers({"127.0.0.1", "127.0.0.2", "127.0.0.3"});
  TestChannel channel("peers-flap", PeerConfig("127.0.0.1", 600000));
  channel.SetAddresses(Addresses(backends));
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.coordinate_source == "peer_target" && s.peer_count == 3;
  }));
  StateView first;
  ASSERT_TRUE(Snapshot(channel.target(), &first));
  for (int flip = 0; flip < 4; ++flip) {
    if (flip % 2 == 0) {
      SetPeers({"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"});
    } else {
      SetPeers({"127.0.0.1", "127.0.0.2"});
    }
    // Wait until the watcher has asked the responder twice more.
    long asked = io_dns_stub_queries(stub_);
    ASSERT_TRUE(WaitFor([&] { return io_dns_stub_queries(stub_) >= asked + 2; }));
  }
  StateView held;
  ASSERT_TRUE(Snapshot(channel.target(), &held));
  EXPECT_EQ(held.peer_count, 3u);
  EXPECT_EQ(held.coordinate_changes, first.coordinate_changes);
  EXPECT_EQ(held.rebuilds, first.rebuilds);
  EXPECT_EQ(channel.RunLoad(50, 4), 0);
}

// aperture_set_coordinate() re-coordinates live channels at once.
TEST_F(PeerTest, ApiCoordinateAppliesLive) {
  auto backends = StartBackends(9);
  auto addresses = Addresses(backends);
  TestChannel channel("peers-api",
                      Config("{\"mode\":\"continuous\",\"minAperture\":3}"));
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.coordinate_source == "none" && !s.endpoints.empty();
  }));
  StateView before;
  ASSERT_TRUE(Snapshot(channel.target(), &before));
  ASSERT_EQ(AP_OK, aperture_set_coordinate(2, 3, nullptr));
  auto expected =
      ExpectedMembers(addresses, oracle::Mode::kContinuous, 2, 3, 3);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& s) {
    return s.coordinate_source == "api" && s.peer_index == 2 &&
           MemberSet(s) == Keys(expected);
  }));
  aperture_clear_coordinate();
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    return s.coordinate_source == "none";
  }));
  StateView after;
  ASSERT_TRUE(Snapshot(channel.target(), &after));
  EXPECT_EQ(after.resolver_updates, before.resolver_updates);
  EXPECT_EQ(after.coordinate_changes, before.coordinate_changes + 2);
}

// Channels naming the same peer target share one watcher; it goes with the
// last of them. APERTURE_PEER_TARGET serves channels whose config has none.
TEST_F(PeerTest, OneWatcherPerTargetSharedByChannels) {
  auto backends = StartBackends(3);
  const std::vector<std::string> ips = {"127.0.0.1", "127.0.0.2"};
  ASSERT_EQ(aperture_lb::LivePeerWatchers(), 0u);
  {
    setenv("APERTURE_PEER_TARGET", Ipv4Target(ips).c_str(), 1);
    setenv("APERTURE_PEER_SELF", "127.0.0.2", 1);
    TestChannel a("peers-shared-a", Config("{}"));
    TestChannel b("peers-shared-b", Config("{}"));
    a.SetAddresses(Addresses(backends));
    b.SetAddresses(Addresses(backends));
    for (const TestChannel* c : {&a, &b}) {
      ASSERT_TRUE(WaitForState(c->target(), [](const StateView& s) {
        return s.coordinate_source == "peer_target" && s.peer_count == 2;
      }));
    }
    EXPECT_EQ(aperture_lb::LivePeerWatchers(), 1u);
    // A static config coordinate still wins over the environment's target.
    TestChannel fixed("peers-shared-fixed",
                      Config("{\"peerIndex\":0,\"peerCount\":5}"));
    fixed.SetAddresses(Addresses(backends));
    ASSERT_TRUE(WaitForState(fixed.target(), [](const StateView& s) {
      return s.coordinate_source == "config" && s.peer_count == 5 &&
             s.peer_target.empty();
    }));
    unsetenv("APERTURE_PEER_TARGET");
    unsetenv("APERTURE_PEER_SELF");
  }
  EXPECT_TRUE(WaitFor([] { return aperture_lb::LivePeerWatchers() == 0; }));
}

TEST(PeerConfig, BadPeerFieldsAreNamed) {
  auto expect = [](const std::string& json, const std::string& field) {
    absl::Status s = ParseThroughRegistry(json);
    EXPECT_FALSE(s.ok()) << json;
    EXPECT_NE(std::string(s.message()).find("field:" + field + " "),
              std::string::npos)
        << json << " -> " << s.message();
  };
  expect("{\"peerTarget\":\"\"}", "peerTarget");
  expect("{\"peerTarget\":42}", "peerTarget");
  expect("{\"peerTarget\":\"ipv4:not-an-address\"}", "peerTarget");
  expect("{\"peerSelf\":\"host.example:80\"}", "peerSelf");
  expect("{\"peerSelf\":\"10.0.0.1:99999\"}", "peerSelf");
  expect("{\"peerSelf\":\"10.0.0.1:\"}", "peerSelf");
  expect("{\"peerSelf\":7}", "peerSelf");
  expect("{\"peerRefreshMs\":50}", "peerRefreshMs");
  expect("{\"peerRefreshMs\":1.5}", "peerRefreshMs");
  expect("{\"peerRefreshMs\":\"100\"}", "peerRefreshMs");
  EXPECT_TRUE(ParseThroughRegistry(
                  "{\"peerTarget\":\"dns:///clients.svc:8080\","
                  "\"peerSelf\":\"10.0.0.7\",\"peerRefreshMs\":5000}")
                  .ok());
  EXPECT_TRUE(ParseThroughRegistry("{\"peerTarget\":\"ipv4:10.0.0.1:80\","
                                   "\"peerSelf\":\"[::1]:80\"}")
                  .ok());
}

TEST(PeerSelf, FindsExactlyOneEntry) {
  using aperture_lb::FindSelf;
  using aperture_lb::PeerSelf;
  const std::vector<std::string> list = {"10.0.0.1:80", "10.0.0.2:80",
                                         "10.0.0.2:81", "[::1]:80"};
  PeerSelf self;
  std::string why;
  uint32_t index = 99;
  ASSERT_TRUE(aperture_lb::ParsePeerSelf("10.0.0.1", &self, &why));
  EXPECT_TRUE(FindSelf(list, self, {}, &index, &why)) << why;
  EXPECT_EQ(index, 0u);
  ASSERT_TRUE(aperture_lb::ParsePeerSelf("10.0.0.2:81", &self, &why));
  EXPECT_TRUE(FindSelf(list, self, {}, &index, &why)) << why;
  EXPECT_EQ(index, 2u);
  ASSERT_TRUE(aperture_lb::ParsePeerSelf("0:0:0:0:0:0:0:1", &self, &why));
  EXPECT_TRUE(FindSelf(list, self, {}, &index, &why)) << why;
  EXPECT_EQ(index, 3u);
  // A bare IP on two ports is ambiguous.
  ASSERT_TRUE(aperture_lb::ParsePeerSelf("10.0.0.2", &self, &why));
  EXPECT_FALSE(FindSelf(list, self, {}, &index, &why));
  EXPECT_NE(why.find("exactly one"), std::string::npos) << why;
  // Interface addresses: a unique match only.
  PeerSelf any;
  EXPECT_TRUE(FindSelf(list, any, {"10.0.0.1", "192.168.1.1"}, &index, &why));
  EXPECT_EQ(index, 0u);
  EXPECT_FALSE(FindSelf(list, any, {"10.0.0.2"}, &index, &why));
  EXPECT_FALSE(FindSelf(list, any, {"10.9.9.9"}, &index, &why));
  EXPECT_NE(why.find("set peerSelf"), std::string::npos) << why;
}

}  // namespace
}  // namespace aperture_test
