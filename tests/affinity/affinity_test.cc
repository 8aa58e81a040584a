// Tests of the affinity settings and the hash-mode choice
// (policy/affinity/ap_affinity.h) on the core's real hash ring. Statistical
// checks use fixed member names and a fixed key set, so every run computes
// the same numbers; tolerances are 4 standard deviations of the quantity
// under the model "ring points are independent uniform points", worked out
// next to each check.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "policy/affinity/ap_affinity.h"
#include "policy/affinity/ap_session_table.h"
#include "tests/affinity/owned_ring.h"
}

namespace {

TEST(AffinityConfig, Defaults) {
  ap_affinity_config c;
  std::memset(&c, 0xab, sizeof c);
  ap_affinity_config_init(&c);
  EXPECT_EQ(c.mode, AP_AFFINITY_NONE);
  EXPECT_STREQ(c.header, "");
  EXPECT_EQ(c.max_sessions, AP_AFFINITY_DEFAULT_MAX_SESSIONS);
  EXPECT_EQ(c.session_idle_ms, AP_AFFINITY_DEFAULT_SESSION_IDLE_MS);
  EXPECT_EQ(c.hash_vnodes, AP_AFFINITY_DEFAULT_HASH_VNODES);
  ap_error err;
  EXPECT_EQ(ap_affinity_config_validate(&c, &err), AP_OK) << err.message;
  ap_affinity_config_init(nullptr);  // ignored
}

TEST(AffinityConfig, ModeNames) {
  ap_affinity_mode m;
  ap_error err;
  ASSERT_EQ(ap_affinity_mode_parse("sticky", &m, &err), AP_OK);
  EXPECT_EQ(m, AP_AFFINITY_STICKY);
  ASSERT_EQ(ap_affinity_mode_parse("hash", &m, &err), AP_OK);
  EXPECT_EQ(m, AP_AFFINITY_HASH);
  ASSERT_EQ(ap_affinity_mode_parse("none", &m, &err), AP_OK);
  EXPECT_EQ(m, AP_AFFINITY_NONE);
  EXPECT_EQ(ap_affinity_mode_parse("Sticky", &m, &err), AP_EINVAL);
  EXPECT_NE(std::strstr(err.message, "affinity"), nullptr) << err.message;
  EXPECT_NE(std::strstr(err.message, "Sticky"), nullptr) << err.message;
  EXPECT_EQ(ap_affinity_mode_parse(nullptr, &m, &err), AP_EINVAL);
  EXPECT_EQ(ap_affinity_mode_parse("hash", nullptr, &err), AP_EINVAL);
  EXPECT_STREQ(ap_affinity_mode_name(AP_AFFINITY_STICKY), "sticky");
  EXPECT_STREQ(ap_affinity_mode_name(AP_AFFINITY_HASH), "hash");
  EXPECT_STREQ(ap_affinity_mode_name(AP_AFFINITY_NONE), "none");
  EXPECT_STREQ(ap_affinity_mode_name(42), "unknown");
}

// Validates a config and returns the message ("" when valid).
std::string Validate(const ap_affinity_config& c) {
  ap_error err;
  int rc = ap_affinity_config_validate(&c, &err);
  return rc == AP_OK ? std::string() : std::string(err.message);
}

TEST(AffinityConfig, ValidationNamesTheField) {
  ap_affinity_config c;
  ap_affinity_config_init(&c);
  c.mode = AP_AFFINITY_STICKY;
  EXPECT_EQ(Validate(c),
            "affinityHeader: required when affinity is \"sticky\"");
  c.mode = AP_AFFINITY_HASH;
  EXPECT_EQ(Validate(c), "affinityHeader: required when affinity is \"hash\"");
  ASSERT_EQ(AP_OK, ap_affinity_config_set_header(&c, "x-session-key", 13, nullptr));
  EXPECT_EQ(Validate(c), "");
  for (const char* bad : {"X-Session-Key", "x session", "grpc-timeout",
                          "x-key-bin", ":path"}) {
    ASSERT_EQ(AP_OK, ap_affinity_config_set_header(&c, bad, strlen(bad), nullptr));
    std::string msg = Validate(c);
    EXPECT_EQ(msg.rfind("affinityHeader: ", 0), 0u) << bad << " -> " << msg;
  }
  // Empty and over-long headers are refused when set, naming the field.
  ap_error err;
  EXPECT_EQ(AP_EINVAL, ap_affinity_config_set_header(&c, "", 0, &err));
  EXPECT_EQ(std::string(err.message).rfind("affinityHeader: ", 0), 0u);
  std::string long_header(AP_AFFINITY_MAX_HEADER_LEN + 1, 'h');
  EXPECT_EQ(AP_ERANGE, ap_affinity_config_set_header(&c, long_header.data(),
                                                     long_header.size(), &err));
  EXPECT_EQ(std::string(err.message).rfind("affinityHeader: ", 0), 0u);
  std::string longest(AP_AFFINITY_MAX_HEADER_LEN, 'h');
  EXPECT_EQ(AP_OK, ap_affinity_config_set_header(&c, longest.data(),
                                                 longest.size(), nullptr));
  EXPECT_EQ(Validate(c), "");
  ASSERT_EQ(AP_OK, ap_affinity_config_set_header(&c, "x-session-key", 13, nullptr));
  c.max_sessions = 0;
  EXPECT_EQ(Validate(c).rfind("maxSessions: ", 0), 0u) << Validate(c);
  c.max_sessions = AP_SESSION_MAX_SESSIONS + 1;
  EXPECT_EQ(Validate(c).rfind("maxSessions: ", 0), 0u);
  c.max_sessions = 5;
  c.hash_vnodes = 0;
  EXPECT_EQ(Validate(c).rfind("hashVnodes: ", 0), 0u) << Validate(c);
  c.hash_vnodes = AP_HASH_RING_MAX_VNODES + 1;
  EXPECT_EQ(Validate(c).rfind("hashVnodes: ", 0), 0u);
  c.hash_vnodes = 1;
  c.mode = static_cast<ap_affinity_mode>(7);
  EXPECT_EQ(Validate(c).rfind("affinity: ", 0), 0u);
  EXPECT_EQ(ap_affinity_config_validate(nullptr, nullptr), AP_EINVAL);
}

// The test ring, with the owner of a key through the affinity chooser.
struct Ring : hash_ring_test::OwnedRing {
  using OwnedRing::OwnedRing;
  // Owner of `key` among the usable members (all usable when empty).
  std::string Owner(const std::string& key, std::vector<uint8_t> usable = {}) {
    if (usable.empty()) usable.assign(names.size(), 1);
    size_t m = 0;
    ap_error err;
    int rc = ap_affinity_hash_choose(ring, key.data(), key.size(),
                                     usable.data(), &m, &err);
    EXPECT_EQ(rc, AP_OK) << err.message;
    return rc == AP_OK ? names[m] : std::string();
  }
};

std::vector<std::string> Keys(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.push_back("session-" + std::to_string(i));
  return out;
}

// Standard deviation of the share of a member owning `mine` of `total`
// independent uniform points: Beta(mine, total - mine).
double ShareSd(double mine, double total) {
  double p = mine / total;
  return std::sqrt(p * (1 - p) / (total + 1));
}

TEST(AffinityHash, WeightsOneTwoOneGiveQuarterHalfQuarter) {
  const uint32_t vnodes = 400;
  Ring r({"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"}, {1, 2, 1}, vnodes);
  const auto keys = Keys(40000);
  std::vector<int> count(3, 0);
  for (const auto& k : keys) {
    std::string o = r.Owner(k);
    for (int m = 0; m < 3; m++)
      if (o == r.names[m]) count[m]++;
  }
  // Ring share of a weight-1 member: 400 of 1600 points, sd
  // sqrt(.25*.75/1601) = 0.0108; of the weight-2 member: 800 of 1600, sd
  // 0.0125. Sampling 40000 keys adds sd sqrt(.25/40000) = 0.0025. Four
  // combined standard deviations: ~0.045 (weight 1), ~0.051 (weight 2).
  const double total = 4 * vnodes;
  const double want[3] = {0.25, 0.5, 0.25};
  for (int m = 0; m < 3; m++) {
    double share = count[m] / static_cast<double>(keys.size());
    double sd = std::hypot(ShareSd(want[m] * total, total),
                           std::sqrt(want[m] * (1 - want[m]) / keys.size()));
    EXPECT_NEAR(share, want[m], 4 * sd) << r.names[m];
    // The key set also follows the ring's exact geometry closely (only the
    // sampling noise of the keys remains).
    EXPECT_NEAR(share, ap_hash_ring_share(r.ring, m),
                4 * std::sqrt(want[m] * (1 - want[m]) / keys.size()));
  }
}

TEST(AffinityHash, AddingAMemberMovesAboutOneNth) {
  const uint32_t vnodes = 100;
  std::vector<std::string> four = {"b:1", "b:2", "b:3", "b:4"};
  std::vector<std::string> five = four;
  five.push_back("b:5");
  Ring before(four, {}, vnodes), after(five, {}, vnodes);
  const auto keys = Keys(20000);
  int moved = 0, moved_elsewhere = 0;
  for (const auto& k : keys) {
    std::string a = before.Owner(k), b = after.Owner(k);
    if (a != b) {
      moved++;
      if (b != "b:5") moved_elsewhere++;
    }
  }
  // Only keys now owned by the newcomer move: its share of 100 of 500
  // points, expected 1/5, sd sqrt(.2*.8/501) = 0.0179 plus key sampling
  // sqrt(.16/20000) = 0.0028; 4 sd ~ 0.073.
  double fraction = moved / static_cast<double>(keys.size());
  EXPECT_NEAR(fraction, 0.2, 0.073);
  EXPECT_EQ(moved_elsewhere, 0);
}

TEST(AffinityHash, UnhealthyMemberIsSkippedToTheNextPoint) {
  Ring r({"a:1", "b:1", "c:1"}, {}, 100);
  const auto keys = Keys(5000);
  std::vector<std::string> healthy;
  for (const auto& k : keys) healthy.push_back(r.Owner(k));
  std::vector<uint8_t> usable = {1, 0, 1};  // b is down
  int b_keys = 0;
  for (size_t i = 0; i < keys.size(); i++) {
    std::string o = r.Owner(keys[i], usable);
    EXPECT_NE(o, "b:1");
    // Keys of healthy members do not move; b's keys spread over a and c.
    if (healthy[i] != "b:1") EXPECT_EQ(o, healthy[i]) << keys[i];
    else b_keys++;
  }
  EXPECT_GT(b_keys, 0);
  // Nothing usable: an error, not an abort.
  std::vector<uint8_t> none = {0, 0, 0};
  size_t m = 99;
  ap_error err;
  EXPECT_EQ(ap_affinity_hash_choose(r.ring, "k", 1, none.data(), &m, &err),
            AP_EUNAVAIL);
}

TEST(AffinityHash, ChooseValidatesInput) {
  Ring r({"a:1"}, {}, 1);
  uint8_t usable = 1;
  size_t m = 0;
  ap_error err;
  EXPECT_EQ(ap_affinity_hash_choose(nullptr, "k", 1, &usable, &m, &err),
            AP_EINVAL);
  EXPECT_EQ(ap_affinity_hash_choose(r.ring, nullptr, 1, &usable, &m, &err),
            AP_EINVAL);
  EXPECT_EQ(ap_affinity_hash_choose(r.ring, "k", 1, nullptr, &m, &err),
            AP_EINVAL);
  EXPECT_EQ(ap_affinity_hash_choose(r.ring, "k", 1, &usable, nullptr, &err),
            AP_EINVAL);
  ASSERT_EQ(ap_affinity_hash_choose(r.ring, "k", 1, &usable, &m, &err), AP_OK);
  EXPECT_EQ(m, 0u);
  // The key hash is a pure function of the bytes.
  EXPECT_EQ(ap_affinity_key_hash("abc", 3), ap_affinity_key_hash("abcd", 3));
  EXPECT_NE(ap_affinity_key_hash("abc", 3), ap_affinity_key_hash("abd", 3));
}

}  // namespace
