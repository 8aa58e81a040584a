// The oracle against cases worked out by hand from the README's definitions
// (windows, arcs, coverage c(x)), and against the equal-load property the
// definitions promise. The policy tests trust the oracle; this is what
// makes that trust earned.
#include "tests/oracle/aperture_oracle.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace oracle {
namespace {

// ring index -> (intersection, pick weight)
using Expected = std::map<size_t, std::pair<double, double>>;

void ExpectMembers(const std::vector<Member>& got, const Expected& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const Member& m : got) {
    auto it = want.find(m.ring_index);
    ASSERT_NE(it, want.end()) << "unexpected member " << m.ring_index;
    EXPECT_NEAR(m.intersection, it->second.first, 1e-12) << m.ring_index;
    EXPECT_NEAR(m.pick_weight, it->second.second, 1e-12) << m.ring_index;
  }
}

TEST(ApertureOracle, ContinuousWholeArcs) {
  // N=4, C=2, A=1: m = ceil(2/4) = 1, window [0, 1/2): arcs 0 and 1 whole;
  // arc 2 starts exactly at 1/2 and is not a member.
  ExpectMembers(Aperture(Mode::kContinuous, 4, 0, 2, 1), {{0, {1, 1}}, {1, {1, 1}}});
  ExpectMembers(Aperture(Mode::kContinuous, 4, 1, 2, 2), {{2, {1, 1}}, {3, {1, 1}}});
}

TEST(ApertureOracle, ContinuousPartialEdge) {
  // N=3, C=2, i=1, A=1: window [1/2, 1); arc 1 = [1/3, 2/3) is half inside.
  ExpectMembers(Aperture(Mode::kContinuous, 3, 1, 2, 1),
                {{1, {0.5, 0.5}}, {2, {1, 1}}});
}

TEST(ApertureOracle, ContinuousWrapsAroundZero) {
  // N=4, C=3, i=2, A=2: m = ceil(6/4) = 2, window [2/3, 4/3): arcs 3 and 0
  // whole, 1/12 of arcs 1 and 2 (a third of each).
  ExpectMembers(Aperture(Mode::kContinuous, 4, 2, 3, 2),
                {{0, {1, 1}}, {1, {1.0 / 3, 1.0 / 3}}, {2, {1.0 / 3, 1.0 / 3}}, {3, {1, 1}}});
}

TEST(ApertureOracle, ContinuousWeightedArcs) {
  // Weights 3, 1: arcs [0, 3/4) and [3/4, 1). C=2, i=1, A=1: window
  // [1/2, 1): a third of arc 0 (pick weight 1/3 * 3 = 1), all of arc 1.
  ExpectMembers(Aperture(Mode::kContinuous, 2, 1, 2, 1, {3, 1}),
                {{0, {1.0 / 3, 1}}, {1, {1, 1}}});
}

TEST(ApertureOracle, ApertureClampedToTheEndpoints) {
  // A = 12 > N = 3, one client: the window is the whole ring.
  ExpectMembers(Aperture(Mode::kContinuous, 3, 0, 1, 12),
                {{0, {1, 1}}, {1, {1, 1}}, {2, {1, 1}}});
}

TEST(ApertureOracle, SmoothWithEvenCoverageIsContinuous) {
  // N=3, C=2, A=1: width max(1/3, 1/2) = 1/2, c(x) = 1 everywhere.
  ExpectMembers(Aperture(Mode::kSmooth, 3, 0, 2, 1), {{0, {1, 1}}, {1, {0.5, 0.5}}});
}

TEST(ApertureOracle, SmoothDividesByCoverage) {
  // N=4, C=3, A=2: width 1/2; windows [0,1/2), [1/3,5/6), [2/3,7/6).
  // c(x) = 2 on [0,1/6), [1/3,1/2), [2/3,5/6) and 1 elsewhere.
  // Client 0, arc 0 = [0,1/4): (1/6)/2 + (1/12)/1 = 1/6, over 1/4 -> 2/3.
  ExpectMembers(Aperture(Mode::kSmooth, 4, 0, 3, 2),
                {{0, {1, 2.0 / 3}}, {1, {1, 2.0 / 3}}});
  // Client 1: arc 1 overlap [1/3,1/2) at c=2 -> (1/12)/(1/4) = 1/3;
  // arc 2: (1/6)/1 + (1/12)/2 = 5/24 -> 5/6; arc 3: [3/4,5/6) at c=2 -> 1/6.
  ExpectMembers(Aperture(Mode::kSmooth, 4, 1, 3, 2),
                {{1, {2.0 / 3, 1.0 / 3}}, {2, {1, 5.0 / 6}}, {3, {1.0 / 3, 1.0 / 6}}});
  // Client 2 wraps: arc 0 [0,1/6) at c=2 -> 1/3; arc 2 [2/3,3/4) at c=2 ->
  // 1/6; arc 3: (1/12)/2 + (1/6)/1 = 5/24 -> 5/6.
  ExpectMembers(Aperture(Mode::kSmooth, 4, 2, 3, 2),
                {{0, {2.0 / 3, 1.0 / 3}}, {2, {1.0 / 3, 1.0 / 6}}, {3, {1, 5.0 / 6}}});
}

TEST(ApertureOracle, MeshIsEveryEndpointAtItsWeight) {
  ExpectMembers(Aperture(Mode::kMesh, 3, 0, 1, 1, {2, 1, 1}),
                {{0, {1, 2}}, {1, {1, 1}}, {2, {1, 1}}});
}

TEST(ApertureOracle, RejectsWhatTheDefinitionsDoNotCover) {
  EXPECT_TRUE(Aperture(Mode::kContinuous, 0, 0, 1, 1).empty());
  EXPECT_TRUE(Aperture(Mode::kContinuous, 4, 2, 2, 1).empty());
  EXPECT_TRUE(Aperture(Mode::kContinuous, 4, 0, 2, 0).empty());
  EXPECT_TRUE(Aperture(Mode::kContinuous, 2, 0, 2, 1, {1, 0}).empty());
}

// What the definitions promise: summed over the C clients, every server
// gets the same expected load (continuous: pick weights cover each arc m
// times; smooth: exactly W * arc / T). A wrong window, overlap or coverage
// in the oracle breaks this.
TEST(ApertureOracle, EveryServerGetsTheSameLoadOverAllClients) {
  for (Mode mode : {Mode::kContinuous, Mode::kSmooth}) {
    for (size_t n : {3u, 7u, 10u, 20u}) {
      for (uint32_t c : {1u, 2u, 3u, 5u, 12u}) {
        for (uint32_t a : {1u, 2u, 5u}) {
          std::vector<double> load(n, 0);
          for (uint32_t i = 0; i < c; ++i) {
            auto members = Aperture(mode, n, i, c, a);
            ASSERT_FALSE(members.empty());
            double total = 0;
            for (const Member& m : members) total += m.pick_weight;
            // Each client's calls split by its own pick weights.
            for (const Member& m : members) load[m.ring_index] += m.pick_weight / total;
          }
          for (size_t j = 0; j < n; ++j) {
            EXPECT_NEAR(load[j], static_cast<double>(c) / n, 1e-9)
                << (mode == Mode::kSmooth ? "smooth" : "continuous") << " N=" << n
                << " C=" << c << " A=" << a << " server " << j;
          }
        }
      }
    }
  }
}

TEST(ApertureOracle, OneHostOrdersByPortNumber) {
  EXPECT_EQ(RingOrderOneHost({"127.0.0.1:900", "127.0.0.1:80", "127.0.0.1:1000"}),
            (std::vector<std::string>{"127.0.0.1:80", "127.0.0.1:900", "127.0.0.1:1000"}));
  EXPECT_TRUE(RingOrderOneHost({"127.0.0.1:80", "127.0.0.2:81"}).empty());
  EXPECT_TRUE(RingOrderOneHost({"127.0.0.1:x"}).empty());
  auto by_address = ExpectedByAddress(Mode::kContinuous,
                                      {"127.0.0.1:30", "127.0.0.1:10", "127.0.0.1:20"}, 1, 2, 1);
  EXPECT_EQ(by_address, (std::map<std::string, double>{{"127.0.0.1:20", 0.5},
                                                       {"127.0.0.1:30", 1.0}}));
}

TEST(ApertureOracle, ExplicitWindowWrapsAndWeighsLikeContinuous) {
  // [0.95, 1.15) on 10 equal arcs: half of arc 9, all of arc 0, half of
  // arc 1 (the simulator's subset example).
  ExpectMembers(WindowMembers(10, 0.95, 0.2), {{9, {0.5, 0.5}}, {0, {1, 1}}, {1, {0.5, 0.5}}});
  // Weights 3, 1: arcs [0, 3/4), [3/4, 1); [1/2, 1) holds a third of arc 0
  // (pick weight 1/3 * 3 = 1) and all of arc 1.
  ExpectMembers(WindowMembers(2, 0.5, 0.5, {3, 1}), {{0, {1.0 / 3, 1}}, {1, {1, 1}}});
  EXPECT_TRUE(WindowMembers(0, 0, 0.5).empty());
  EXPECT_TRUE(WindowMembers(4, 1.0, 0.5).empty());
  EXPECT_TRUE(WindowMembers(4, 0, 0).empty());
  EXPECT_TRUE(WindowMembers(2, 0, 0.5, {1, -1}).empty());
}

uint64_t TableHash(const std::string& host) { return host == "b" ? 1 : host == "a" ? 2 : 3; }

TEST(ApertureOracle, RingOrderSortsByHostHashThenPortThenString) {
  EXPECT_EQ(RingOrder({"a:10", "c:1", "b:9", "a:9"}, TableHash),
            (std::vector<std::string>{"b:9", "a:9", "a:10", "c:1"}));
  EXPECT_TRUE(RingOrder({"a:10", "b"}, TableHash).empty());
}

TEST(ApertureOracle, EndpointChangeCountsSessionsByAddress) {
  // Continuous, C = 2, A = 1. Four equal arcs: width ceil(2/4)/2 = 1/2,
  // client 0 holds x0, x1 and client 1 x2, x3. Without x1 (three arcs,
  // width ceil(2/3)/2 = 1/2): client 0's [0, 1/2) holds x0 and a sixth of
  // x2's arc [1/3, 2/3), client 1 still x2, x3. Client 0 closes x1 and
  // opens x2: 2 changed, 1 had to (x1's one session).
  const std::vector<std::string> four = {"x0", "x1", "x2", "x3"}, three = {"x0", "x2", "x3"};
  SessionChange rem = EndpointChange(Mode::kContinuous, four, three, 2, 1);
  EXPECT_EQ(rem.sessions_before, 4);
  EXPECT_EQ(rem.sessions_after, 4);
  EXPECT_EQ(rem.changed, 2);
  EXPECT_EQ(rem.optimum, 1);
  SessionChange add = EndpointChange(Mode::kContinuous, three, four, 2, 1);
  EXPECT_EQ(add.changed, 2);
  EXPECT_EQ(add.optimum, 1);
  // Mesh: only the leaver's two sessions close.
  SessionChange mesh = EndpointChange(Mode::kMesh, four, three, 2, 1);
  EXPECT_EQ(mesh.sessions_before, 8);
  EXPECT_EQ(mesh.sessions_after, 6);
  EXPECT_EQ(mesh.changed, 2);
  EXPECT_EQ(mesh.optimum, 2);
}

}  // namespace
}  // namespace oracle
