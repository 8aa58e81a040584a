// Request affinity through real channels: the aperture policy with
// "affinity": "sticky" or "hash", backends on 127.0.0.1 that answer with
// their own address, and gRPC's fake resolver for membership changes.
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/lb/lb_test_util.h"

extern "C" {
#include "policy/affinity/ap_affinity.h"
#include "policy/affinity/ap_hash_ring.h"
}

namespace aperture_test {
namespace {

constexpr char kHeader[] = "x-session-key";

// One client of one (peerIndex 0 of peerCount 1): every endpoint is a
// member of the aperture, so the tests see all backends.
std::string StickyConfig(const std::string& extra = "") {
  return Config(
      "{\"peerIndex\":0,\"peerCount\":1,\"eagerConnect\":true,"
      "\"affinity\":\"sticky\",\"affinityHeader\":\"x-session-key\"" +
      extra + "}");
}

bool WaitReady(const TestChannel& channel, const std::vector<std::string>& want) {
  return WaitForState(channel.target(), [&](const StateView& v) {
    for (const auto& a : want)
      if (!v.MemberReady(a)) return false;
    return true;
  });
}

// Calls with `key` until one succeeds (a call may race a picker update
// right after a backend died), at most 100 tries.
std::string CallUntilServed(TestChannel& channel, const std::string& key) {
  for (int i = 0; i < 100; ++i) {
    std::string served = channel.CallServedBy(kHeader, key);
    if (!served.empty()) return served;
  }
  return "";
}

// Seed 002 through a real channel: u1, u1, u2; a new backend joins and u1
// stays; u1's backend dies and u1 moves once, then sticks.
TEST(StickyAffinity, KeysStickAcrossJoinsAndMoveOnlyWhenTheirBackendDies) {
  auto backends = StartBackends(4);
  auto all = Addresses(backends);
  std::vector<std::string> first3(all.begin(), all.begin() + 3);
  TestChannel channel("sticky-seed002", StickyConfig());
  channel.SetAddresses(first3);
  ASSERT_TRUE(WaitReady(channel, first3));

  grpc::Status status;
  std::string home = channel.CallServedBy(kHeader, "u1", &status);
  ASSERT_FALSE(home.empty()) << status.error_message();
  EXPECT_EQ(channel.CallServedBy(kHeader, "u1"), home);
  std::string u2 = channel.CallServedBy(kHeader, "u2");
  ASSERT_FALSE(u2.empty());
  // Many more calls: both keys keep their backend (the P2C pick alone would
  // spread 20 calls over the 3 backends).
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(channel.CallServedBy(kHeader, "u1"), home);
    EXPECT_EQ(channel.CallServedBy(kHeader, "u2"), u2);
  }

  // A fourth backend joins: no key moves.
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(channel.CallServedBy(kHeader, "u1"), home);
  }
  EXPECT_EQ(channel.CallServedBy(kHeader, "u2"), u2);
  StateView view;
  ASSERT_TRUE(Snapshot(channel.target(), &view));
  EXPECT_EQ(view.affinity_sessions, 2u);

  // u1's backend dies: u1 is re-placed on a live backend and stays there.
  Backend* dead = FindBackend(backends, home);
  ASSERT_NE(dead, nullptr);
  dead->Stop();
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return !v.MemberReady(home);
  }));
  std::string new_home = CallUntilServed(channel, "u1");
  ASSERT_FALSE(new_home.empty());
  EXPECT_NE(new_home, home);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(channel.CallServedBy(kHeader, "u1"), new_home);
  }
  // u2 was elsewhere (or moves the same way if it shared the dead backend).
  if (u2 != home) {
    EXPECT_EQ(channel.CallServedBy(kHeader, "u2"), u2);
  }
  ASSERT_TRUE(Snapshot(channel.target(), &view));
  EXPECT_EQ(view.affinity_sessions, 2u);
}

// A resolver update that drops a key's backend moves the key (the backend
// itself still runs); the other keys stay where they are.
TEST(StickyAffinity, KeyMovesWhenItsBackendLeavesTheAddressList) {
  auto backends = StartBackends(3);
  auto all = Addresses(backends);
  TestChannel channel("sticky-leave", StickyConfig());
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  std::map<std::string, std::string> home;
  for (int k = 0; k < 30; ++k) {
    std::string key = "user-" + std::to_string(k);
    home[key] = channel.CallServedBy(kHeader, key);
    ASSERT_FALSE(home[key].empty());
  }
  const std::string leaving = home["user-0"];
  std::vector<std::string> rest;
  for (const auto& a : all)
    if (a != leaving) rest.push_back(a);
  channel.SetAddresses(rest);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return !v.IsMember(leaving);
  }));
  for (const auto& kv : home) {
    std::string now = CallUntilServed(channel, kv.first);
    if (kv.second == leaving) {
      EXPECT_NE(now, leaving) << kv.first;
      EXPECT_FALSE(now.empty()) << kv.first;
    } else {
      EXPECT_EQ(now, kv.second) << kv.first;
    }
  }
}

TEST(StickyAffinity, CallsWithoutTheHeaderAreBalancedAsUsual) {
  auto backends = StartBackends(3);
  auto all = Addresses(backends);
  TestChannel channel("sticky-noheader", StickyConfig());
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  std::map<std::string, int> served;
  for (int i = 0; i < 300; ++i) served[channel.CallServedBy(kHeader, "")]++;
  EXPECT_EQ(served.count(""), 0u) << "failed calls: " << served[""];
  // Sequential calls, so P2C sees equal loads and picks uniformly: each
  // backend expects 100 of 300 (sd 8.2); 40 is more than 7 sd below.
  for (const auto& a : all) EXPECT_GE(served[a], 40) << a;
  // A different header does not count as the key either.
  for (int i = 0; i < 10; ++i) channel.CallServedBy("x-other", "u1");
  StateView view;
  ASSERT_TRUE(Snapshot(channel.target(), &view));
  EXPECT_EQ(view.affinity_sessions, 0u);
}

TEST(StickyAffinity, FloodOfUniqueKeysKeepsTheTableAtItsCap) {
  auto backends = StartBackends(3);
  auto all = Addresses(backends);
  TestChannel channel("sticky-flood", StickyConfig(",\"maxSessions\":50"));
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  int failures = 0;
  for (int i = 0; i < 600; ++i) {
    const std::string key = "flood-" + std::to_string(i);
    if (channel.CallServedBy(kHeader, key).empty()) failures++;
    if (i % 100 == 99) {
      StateView v;
      ASSERT_TRUE(Snapshot(channel.target(), &v));
      EXPECT_LE(v.affinity_sessions, 50u) << "after " << i + 1 << " keys";
    }
  }
  EXPECT_EQ(failures, 0);
  // 600 keys over 16 shards of 3-4 slots: every shard overflowed, so the
  // table is exactly at its cap (a shard expects 37.5 of the keys under any
  // hash key; fewer than 4 is beyond 5 standard deviations).
  StateView view;
  ASSERT_TRUE(Snapshot(channel.target(), &view));
  EXPECT_EQ(view.affinity_sessions, 50u);
  // The most recent key is still remembered.
  std::string last = channel.CallServedBy(kHeader, "flood-599");
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(channel.CallServedBy(kHeader, "flood-599"), last);
  }
}

// A status query reads the table's size, a counter: it takes no shard lock
// and changes nothing (sessions used to be expired by the query itself,
// from the status service's idle-class thread). Idle sessions are the
// calls' to reclaim: they count until a call reaches their shard.
TEST(StickyAffinity, StatusQueriesLeaveTheSessionTableAlone) {
  auto backends = StartBackends(3);
  auto all = Addresses(backends);
  TestChannel channel("sticky-status", StickyConfig(",\"sessionIdleMs\":100"));
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  for (int i = 0; i < 20; ++i) {
    ASSERT_FALSE(channel.CallServedBy(kHeader, "idle-" + std::to_string(i)).empty());
  }
  // Past their idle time: expired, not yet reclaimed.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  for (int query = 0; query < 3; ++query) {
    StateView view;
    ASSERT_TRUE(Snapshot(channel.target(), &view));
    EXPECT_EQ(view.affinity_sessions, 20u) << "query " << query;
  }
  // The same keys again: each is placed anew, and each insert reclaims the
  // expired entries of its shard, so the table holds just these 20.
  for (int i = 0; i < 20; ++i) {
    ASSERT_FALSE(channel.CallServedBy(kHeader, "idle-" + std::to_string(i)).empty());
  }
  StateView view;
  ASSERT_TRUE(Snapshot(channel.target(), &view));
  EXPECT_EQ(view.affinity_sessions, 20u);
}

// ---- hash mode -------------------------------------------------------------

std::string HashConfig(const std::vector<std::string>& addresses,
                       const std::vector<double>& weights, int vnodes) {
  std::string w;
  for (size_t i = 0; i < addresses.size() && i < weights.size(); ++i) {
    if (!w.empty()) w += ",";
    w += "\"" + addresses[i] + "\":" + std::to_string(weights[i]);
  }
  return Config(
      "{\"peerIndex\":0,\"peerCount\":1,\"eagerConnect\":true,"
      "\"affinity\":\"hash\",\"affinityHeader\":\"x-session-key\","
      "\"hashVnodes\":" + std::to_string(vnodes) +
      (w.empty() ? "" : ",\"weights\":{" + w + "}") + "}");
}

std::vector<std::string> Keys(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("key-" + std::to_string(i));
  return out;
}

// The owner of each key computed by the core alone (the oracle).
std::vector<std::string> ExpectedOwners(const std::vector<std::string>& names,
                                        const std::vector<double>& weights,
                                        uint32_t vnodes,
                                        const std::vector<std::string>& keys) {
  std::vector<const char*> pointers;
  for (const auto& n : names) pointers.push_back(n.c_str());
  ap_hash_ring* ring = nullptr;
  std::vector<std::string> out;
  if (ap_hash_ring_create(pointers.data(),
                          weights.empty() ? nullptr : weights.data(),
                          pointers.size(), vnodes, &ring, nullptr) != AP_OK) {
    return out;
  }
  std::vector<uint8_t> usable(names.size(), 1);
  for (const auto& k : keys) {
    size_t m = 0;
    ap_affinity_hash_choose(ring, k.data(), k.size(), usable.data(), &m,
                            nullptr);
    out.push_back(names[m]);
  }
  ap_hash_ring_destroy(ring);
  return out;
}

std::vector<std::string> ServedOwners(TestChannel& channel,
                                      const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(channel.CallServedBy(kHeader, k));
  return out;
}

TEST(HashAffinity, WeightsOneTwoOneGiveQuarterHalfQuarter) {
  auto backends = StartBackends(3);
  auto all = Addresses(backends);
  const std::vector<double> weights = {1, 2, 1};
  const int vnodes = 1000;
  TestChannel channel("hash-weights", HashConfig(all, weights, vnodes));
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  const auto keys = Keys(3000);
  auto served = ServedOwners(channel, keys);
  // The channel routes exactly as the core's ring says.
  auto expected = ExpectedOwners(all, weights, vnodes, keys);
  ASSERT_EQ(expected.size(), keys.size());
  int mismatches = 0;
  for (size_t i = 0; i < keys.size(); ++i) mismatches += served[i] != expected[i];
  EXPECT_EQ(mismatches, 0);
  // Shares: the ports (hence the ring points) change every run, so the
  // tolerance covers the ring's own spread plus key sampling. A weight-w
  // member owns 1000w of 4000 independent uniform points: share sd
  // sqrt(p(1-p)/4001) = 0.0068 (p=1/4), 0.0079 (p=1/2); 3000 keys add
  // sqrt(p(1-p)/3000) = 0.0079, 0.0091. Four combined sd: 0.042, 0.048.
  const double want[3] = {0.25, 0.5, 0.25};
  for (int m = 0; m < 3; ++m) {
    int n = 0;
    for (const auto& s : served) n += s == all[m];
    double share = n / static_cast<double>(keys.size());
    double p = want[m];
    double sd = std::sqrt(p * (1 - p) / 4001 + p * (1 - p) / keys.size());
    EXPECT_NEAR(share, p, 4 * sd) << all[m] << " weight " << weights[m];
  }
}

// Members the config gives no weight count 1 each at run time, so the
// parse-time check cannot see every ring: here weight 244 x 65536 fits, but
// with the two unweighted members the ring would need 16,121,856 points,
// over the cap of 16,000,000. The ring is built with fewer points per unit
// weight (as the core's fit says) and keys keep their owners, instead of
// hash affinity switching off.
TEST(HashAffinity, UnweightedMembersOverThePointCapKeepHashAffinity) {
  auto backends = StartBackends(3);
  auto all = Addresses(backends);
  const uint32_t vnodes = AP_HASH_RING_MAX_VNODES;
  TestChannel channel("hash-over-cap", HashConfig({all[0]}, {244}, vnodes));
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  const std::vector<double> weights = {244, 1, 1};
  uint32_t fitted = 0;
  ASSERT_EQ(ap_hash_ring_fit_vnodes(weights.data(), 3, vnodes, &fitted,
                                    nullptr),
            AP_OK);
  ASSERT_LT(fitted, vnodes);
  // Building 16 million points takes seconds: calls wait for that picker.
  ASSERT_FALSE(CallUntilServed(channel, "warm-up").empty());
  const auto keys = Keys(300);
  auto served = ServedOwners(channel, keys);
  auto expected = ExpectedOwners(all, weights, fitted, keys);
  ASSERT_EQ(expected.size(), keys.size());
  int mismatches = 0, failed = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    failed += served[i].empty();
    mismatches += served[i] != expected[i];
  }
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(mismatches, 0);
}

TEST(HashAffinity, AddingAMemberMovesAboutOneNthOfTheKeys) {
  auto backends = StartBackends(5);
  auto all = Addresses(backends);
  std::vector<std::string> four(all.begin(), all.begin() + 4);
  const int vnodes = 100;
  TestChannel channel("hash-add", HashConfig({}, {}, vnodes));
  channel.SetAddresses(four);
  ASSERT_TRUE(WaitReady(channel, four));
  const auto keys = Keys(2000);
  auto before = ServedOwners(channel, keys);
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  auto after = ServedOwners(channel, keys);
  int moved = 0, moved_elsewhere = 0, failed = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (before[i].empty() || after[i].empty()) {
      failed++;
      continue;
    }
    if (before[i] != after[i]) {
      moved++;
      if (after[i] != all[4]) moved_elsewhere++;
    }
  }
  EXPECT_EQ(failed, 0);
  // Only keys now owned by the newcomer move. Its share: 100 of 500 ring
  // points, expected 1/5, sd sqrt(.16/501) = 0.018, plus key sampling
  // sqrt(.16/2000) = 0.009; four combined sd ~ 0.08.
  double fraction = moved / static_cast<double>(keys.size());
  EXPECT_NEAR(fraction, 0.2, 0.08);
  EXPECT_EQ(moved_elsewhere, 0);
  // And exactly the keys the core's ring assigns to it.
  auto expected = ExpectedOwners(all, {}, vnodes, keys);
  int mismatches = 0;
  for (size_t i = 0; i < keys.size(); ++i) mismatches += after[i] != expected[i];
  EXPECT_EQ(mismatches, 0);
}

TEST(HashAffinity, KeysOfADeadMemberGoToTheNextPointOthersStay) {
  auto backends = StartBackends(3);
  auto all = Addresses(backends);
  TestChannel channel("hash-dead", HashConfig({}, {}, 100));
  channel.SetAddresses(all);
  ASSERT_TRUE(WaitReady(channel, all));
  const auto keys = Keys(600);
  auto before = ServedOwners(channel, keys);
  backends[1]->Stop();
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return !v.MemberReady(all[1]);
  }));
  // One call may race the picker update; let the next one through.
  CallUntilServed(channel, "warm-up");
  std::vector<std::string> after;
  for (const auto& k : keys) after.push_back(CallUntilServed(channel, k));
  // Ring oracle with the dead member marked unusable.
  std::vector<const char*> pointers;
  for (const auto& n : all) pointers.push_back(n.c_str());
  ap_hash_ring* ring = nullptr;
  ASSERT_EQ(ap_hash_ring_create(pointers.data(), nullptr, 3, 100, &ring,
                                nullptr),
            AP_OK);
  std::vector<uint8_t> usable = {1, 0, 1};
  int on_dead = 0, mismatches = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_NE(after[i], all[1]);
    if (before[i] == all[1]) {
      on_dead++;
    } else {
      EXPECT_EQ(after[i], before[i]) << keys[i];
    }
    size_t m = 0;
    ap_affinity_hash_choose(ring, keys[i].data(), keys[i].size(),
                            usable.data(), &m, nullptr);
    mismatches += after[i] != all[m];
  }
  ap_hash_ring_destroy(ring);
  EXPECT_GT(on_dead, 0);
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace aperture_test

namespace aperture_test {
namespace {

// A bad affinity config reaches the application as a call error that names
// the field; nothing aborts.
TEST(AffinityConfig, BadConfigsFailCallsWithTheFieldName) {
  auto backends = StartBackends(1);
  auto all = Addresses(backends);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"affinity\":\"sticky\"}", "affinityHeader"},
      {"{\"affinity\":\"hash\",\"affinityHeader\":\"X-Key\"}",
       "affinityHeader"},
      {"{\"affinity\":\"sometimes\",\"affinityHeader\":\"x-key\"}",
       "affinity"},
      {"{\"affinity\":\"sticky\",\"affinityHeader\":\"x-key\","
       "\"maxSessions\":0}",
       "maxSessions"},
      {"{\"affinity\":\"hash\",\"affinityHeader\":\"x-key\","
       "\"hashVnodes\":100000}",
       "hashVnodes"},
      {"{\"affinity\":\"sticky\",\"affinityHeader\":\"x-key\","
       "\"sessionIdleMs\":-1}",
       "sessionIdleMs"},
  };
  int n = 0;
  for (const auto& c : cases) {
    TestChannel channel("bad-config-" + std::to_string(n++), "");
    channel.SetAddresses(all, Config(c.first));
    grpc::Status status;
    EXPECT_EQ(channel.CallServedBy(kHeader, "u1", &status, 2000), "")
        << c.first;
    EXPECT_NE(status.error_message().find("field:" + c.second + " "),
              std::string::npos)
        << c.first << " -> " << status.error_message();
  }
}

}  // namespace
}  // namespace aperture_test
