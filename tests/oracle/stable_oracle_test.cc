// The stable oracle on its own: the splitmix64 finalizer against the
// generator's published outputs, and plans whose result follows from the
// definition by hand.
#include "tests/oracle/stable_oracle.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace {

using stable_oracle::ComputePlan;
using stable_oracle::Plan;

// splitmix64 (Steele, Lea, Flood; Vigna's splitmix64.c): the first five
// outputs for seed 0 and for seed 1234567, as published (the latter on
// Rosetta Code, "Pseudo-random numbers/Splitmix64").
TEST(StableOracle, SplitMix64MatchesPublishedOutputs) {
  const uint64_t seed0[] = {0xE220A8397B1DCDAFull, 0x6E789E6AA1B965F4ull,
                            0x06C45D188009454Full, 0xF88BB8A8724C81ECull,
                            0x1B39896A51A8749Bull};
  const uint64_t seed1234567[] = {6457827717110365317ull, 3203168211198807973ull,
                                  9817491932198370423ull, 4593380528125082431ull,
                                  16408922859458223821ull};
  for (uint64_t k = 0; k < 5; ++k) {
    EXPECT_EQ(stable_oracle::SplitMix64Output(0, k + 1), seed0[k]) << k;
    EXPECT_EQ(stable_oracle::SplitMix64Output(1234567, k + 1), seed1234567[k]) << k;
  }
}

// One client covers every endpoint, so it holds all of them and its
// shares are the weights' proportions.
TEST(StableOracle, OneClientHoldsEveryEndpointInProportionToWeight) {
  std::vector<uint64_t> ek;
  std::vector<double> w;
  for (uint64_t k = 0; k < 9; ++k) {
    ek.push_back(stable_oracle::OrdinalKey(100 + k));
    w.push_back(1.0 + (double)k);
  }
  Plan plan;
  ASSERT_TRUE(ComputePlan(ek, w, {stable_oracle::OrdinalKey(7)}, 3, &plan));
  ASSERT_EQ(plan.members.size(), 1u);
  ASSERT_EQ(plan.members[0].size(), 9u);
  for (uint32_t s = 0; s < 9; ++s) {
    EXPECT_EQ(plan.members[0][s], s);
    EXPECT_NEAR(plan.shares[0][s], w[s] / 45.0, 1e-12);
  }
  EXPECT_NEAR(plan.load_max, 1.0, 1e-12);
}

// With A >= N every client walks every endpoint: full membership, equal
// shares, balanced at round 0.
TEST(StableOracle, ApertureAtLeastNMeansEveryoneHoldsEverything) {
  std::vector<uint64_t> ek, ck;
  for (uint64_t k = 0; k < 6; ++k) ek.push_back(stable_oracle::OrdinalKey(k));
  for (uint64_t k = 0; k < 4; ++k) ck.push_back(stable_oracle::OrdinalKey(50 + k));
  Plan plan;
  ASSERT_TRUE(ComputePlan(ek, {}, ck, 12, &plan));
  EXPECT_EQ(plan.rounds, 0u);
  for (const auto& row : plan.shares) {
    ASSERT_EQ(row.size(), 6u);
    for (double x : row) EXPECT_NEAR(x, 1.0 / 6.0, 1e-15);
  }
}

// A client covers the endpoints whose point falls just before one of its
// points: with two clients, each endpoint is covered by the owner of the
// first client point at or after it (and the other one when its coin says
// two). Checked by scanning the 64 points for each endpoint here.
TEST(StableOracle, CoverageIsTheNextClientPointClockwise) {
  const std::vector<uint64_t> ck = {stable_oracle::OrdinalKey(1),
                                    stable_oracle::OrdinalKey(2)};
  std::vector<uint64_t> ek;
  for (uint64_t k = 0; k < 40; ++k) ek.push_back(stable_oracle::OrdinalKey(1000 + k));
  Plan plan;
  ASSERT_TRUE(ComputePlan(ek, {}, ck, 1, &plan));
  for (size_t s = 0; s < ek.size(); ++s) {
    const uint64_t at = stable_oracle::EndpointPoint(ek[s]);
    uint64_t best = UINT64_MAX;
    size_t owner = 0;
    for (size_t i = 0; i < 2; ++i)
      for (uint32_t v = 0; v < 32; ++v) {
        const uint64_t d = stable_oracle::ClientPoint(ck[i], v) - at;
        if (d < best) best = d, owner = i;
      }
    bool held = false;
    for (uint32_t m : plan.members[owner]) held |= m == s;
    EXPECT_TRUE(held) << "endpoint " << s;
    if (stable_oracle::CoverCount(ek[s]) == 2) {
      bool other = false;
      for (uint32_t m : plan.members[1 - owner]) other |= m == s;
      EXPECT_TRUE(other) << "endpoint " << s;
    }
  }
}

TEST(StableOracle, RejectsWhatTheDefinitionDoesNotCover) {
  Plan plan;
  EXPECT_FALSE(ComputePlan({}, {}, {1}, 3, &plan));
  EXPECT_FALSE(ComputePlan({1}, {}, {}, 3, &plan));
  EXPECT_FALSE(ComputePlan({1, 1}, {}, {2}, 3, &plan));
  EXPECT_FALSE(ComputePlan({1}, {}, {2, 2}, 3, &plan));
  EXPECT_FALSE(ComputePlan({1}, {}, {2}, 0, &plan));
  EXPECT_FALSE(ComputePlan({1, 2}, {1.0, 0.0}, {2}, 3, &plan));
}

}  // namespace
