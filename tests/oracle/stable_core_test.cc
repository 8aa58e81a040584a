// ap_stable_plan_create (and the hashes under it) against the independent
// oracle of tests/oracle/stable_oracle.h on many random fleets: membership
// exactly, shares within 1e-9.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/ap_error.h"
#include "policy/core/ap_hash.h"
#include "policy/core/stable/ap_stable.h"
#include "policy/core/stable/ap_stable_testing.h"
#include "tests/oracle/stable_oracle.h"

namespace {

TEST(StableCore, Mix64IsSplitMix64) {
  // The generator's published first outputs for seed 1234567.
  const uint64_t want[] = {6457827717110365317ull, 3203168211198807973ull,
                           9817491932198370423ull};
  for (uint64_t k = 0; k < 3; ++k)
    EXPECT_EQ(ap_mix64(1234567 + (k + 1) * 0x9E3779B97F4A7C15ull), want[k]);
  std::mt19937_64 rng(11);
  for (int t = 0; t < 10000; ++t) {
    const uint64_t x = rng();
    ASSERT_EQ(ap_mix64(x), stable_oracle::Mix64(x)) << x;
  }
}

TEST(StableCore, HashMatchesItsWrittenAlgorithm) {
  std::mt19937_64 rng(12);
  for (int t = 0; t < 5000; ++t) {
    std::string s(rng() % 41, '\0');
    for (char &ch : s) ch = (char)(1 + rng() % 255);  // NUL-free for _str
    const uint64_t seed = t % 3 == 0 ? 0 : rng();
    ASSERT_EQ(ap_hash64(s.data(), s.size(), seed), stable_oracle::Hash64(s, seed)) << t;
    ASSERT_EQ(ap_hash_str(s.c_str(), seed), stable_oracle::Hash64(s, seed)) << t;
  }
  // Bytes with NUL inside go through ap_hash64 only.
  const std::string nul("a\0b\0\0c\x80\xff\x01", 9);
  EXPECT_EQ(ap_hash64(nul.data(), nul.size(), 5), stable_oracle::Hash64(nul, 5));
  EXPECT_EQ(ap_hash64(nullptr, 0, 5), stable_oracle::Hash64("", 5));
  for (int port = 5000; port < 5100; ++port) {
    const std::string addr = "127.0.0.1:" + std::to_string(port);
    EXPECT_EQ(ap_stable_key(addr.c_str()), stable_oracle::Key(addr)) << addr;
  }
  EXPECT_EQ(ap_stable_key(nullptr), stable_oracle::Key(""));
}

TEST(StableCore, PlacementMatchesTheDefinition) {
  std::mt19937_64 rng(13);
  for (int t = 0; t < 20000; ++t) {
    const uint64_t key = rng();
    const uint32_t v = (uint32_t)(rng() % AP_STABLE_POINTS);
    ASSERT_EQ(ap_stable_ordinal_key(key), stable_oracle::OrdinalKey(key));
    ASSERT_EQ(ap_stable_client_point(key, v), stable_oracle::ClientPoint(key, v));
    ASSERT_EQ(ap_stable_endpoint_point(key), stable_oracle::EndpointPoint(key));
    ASSERT_EQ(ap_stable_cover_count(key), stable_oracle::CoverCount(key));
  }
}

struct Fleet {
  std::vector<uint64_t> ek, ck;
  std::vector<double> w;
  uint32_t a;
};

Fleet RandomFleet(std::mt19937_64 &rng, size_t n, size_t c) {
  Fleet f;
  const bool ordinal = rng() % 2 == 0;
  const uint64_t base = rng() % 100000;
  for (size_t s = 0; s < n; ++s)
    f.ek.push_back(ordinal ? ap_stable_ordinal_key(base + s) : rng());
  for (size_t i = 0; i < c; ++i)
    f.ck.push_back(ordinal ? ap_stable_ordinal_key(base + 500000 + i) : rng());
  if (rng() % 3 == 0)
    for (size_t s = 0; s < n; ++s) f.w.push_back(0.25 + (double)(rng() % 1000) / 100.0);
  const uint32_t apertures[] = {1, 2, 3, 5, 12, 12, 20, 40};
  f.a = apertures[rng() % 8];
  return f;
}

void ExpectSamePlan(const Fleet &f, const std::string &what) {
  ap_stable_plan *p = nullptr;
  ap_error err;
  ap_error_clear(&err);
  ASSERT_EQ(ap_stable_plan_create(f.ek.data(), f.w.empty() ? nullptr : f.w.data(),
                                  f.ek.size(), f.ck.data(), f.ck.size(), f.a, &p,
                                  &err),
            AP_OK)
      << err.message;
  stable_oracle::Plan want;
  ASSERT_TRUE(stable_oracle::ComputePlan(f.ek, f.w, f.ck, f.a, &want)) << what;
  for (size_t i = 0; i < f.ck.size(); ++i) {
    const size_t size = ap_stable_plan_row_size(p, i);
    const uint32_t *ep = ap_stable_plan_row_endpoints(p, i);
    const double *sh = ap_stable_plan_row_shares(p, i);
    ASSERT_EQ(std::vector<uint32_t>(ep, ep + size), want.members[i])
        << what << " client " << i;
    for (size_t k = 0; k < size; ++k)
      ASSERT_NEAR(sh[k], want.shares[i][k], 1e-9) << what << " client " << i;
  }
  EXPECT_EQ(ap_stable_plan_rounds(p), want.rounds) << what;
  EXPECT_NEAR(ap_stable_plan_load_max(p), want.load_max, 1e-9) << what;
  ap_stable_plan_destroy(p);
}

TEST(StableCore, PlansMatchTheOracleOnRandomFleets) {
  std::mt19937_64 rng(20261202);
  // Edges first, then random sizes up to 300 x 300.
  const size_t edges[][2] = {{1, 1}, {1, 300}, {300, 1}, {2, 2}, {12, 12},
                             {300, 25}, {300, 300}, {13, 200}};
  int fleets = 0;
  for (const auto &e : edges) {
    ExpectSamePlan(RandomFleet(rng, e[0], e[1]),
                   std::to_string(e[0]) + "x" + std::to_string(e[1]));
    ++fleets;
  }
  for (int t = 0; t < 60; ++t) {
    const size_t n = 1 + rng() % 300, c = 1 + rng() % 300;
    ExpectSamePlan(RandomFleet(rng, n, c),
                   "fleet " + std::to_string(t) + " " + std::to_string(n) + "x" +
                       std::to_string(c));
    ++fleets;
  }
  EXPECT_EQ(fleets, 68);
}

}  // namespace
