// Endpoint weights from the resolver (the address weight attribute that
// gRPC 1.51's xDS sets from EDS) through real channels to real servers on
// 127.0.0.1: they scale the endpoints' arcs as the config's `weights` map
// does, the map overrides them address by address, and clients given the
// same weighted list in any order build the same ring. The expected
// members and pick weights come from the oracle (tests/oracle).
#include <math.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "policy/core/ap_number.h"
#include "policy/lb/ring/endpoint_weights.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

using oracle::Mode;
using Weighted = std::vector<std::pair<std::string, uint32_t>>;

TEST(EndpointWeight, ConfigOverridesTheResolverWhichOverridesOne) {
  const std::map<std::string, double> configured = {{"10.0.0.1:80", 0.5}};
  using aperture_lb::EndpointWeight;
  EXPECT_EQ(EndpointWeight("10.0.0.1:80", 7u, configured), 0.5);
  EXPECT_EQ(EndpointWeight("10.0.0.1:80", absl::nullopt, configured), 0.5);
  EXPECT_EQ(EndpointWeight("10.0.0.2:80", 7u, configured), 7.0);
  EXPECT_EQ(EndpointWeight("10.0.0.2:80", absl::nullopt, configured), 1.0);
  // 0 is no weight; above what the ring takes, the ring's maximum.
  EXPECT_EQ(EndpointWeight("10.0.0.2:80", 0u, configured), 1.0);
  EXPECT_EQ(EndpointWeight("10.0.0.2:80", 4294967295u, configured),
            AP_MAX_WEIGHT);
  EXPECT_EQ(EndpointWeight("10.0.0.2:80", 1000000u, configured), 1e6);
}

// `calls` sequential calls (no load: P2C keeps the first weighted draw)
// land on each backend in proportion to `pick` (address -> pick weight),
// within 6 binomial standard deviations plus 10.
void ExpectCallsFollow(TestChannel& channel,
                       const std::vector<std::unique_ptr<Backend>>& backends,
                       const std::map<std::string, double>& pick, int calls) {
  for (const auto& b : backends) b->ResetCalls();
  for (int i = 0; i < calls; ++i) ASSERT_TRUE(channel.Call().ok());
  double total = 0;
  for (const auto& kv : pick) total += kv.second;
  for (const auto& b : backends) {
    auto it = pick.find(b->address());
    const double p = it == pick.end() ? 0 : it->second / total;
    const double tolerance = 6 * sqrt(calls * p * (1 - p)) + 10;
    EXPECT_NEAR(static_cast<double>(b->calls()), calls * p, tolerance)
        << b->address() << " pick weight "
        << (it == pick.end() ? 0 : it->second);
  }
}

// Every endpoint's weight in the status is `want[address]`.
void ExpectStatusWeights(const std::string& target,
                         const std::map<std::string, double>& want) {
  StateView state;
  ASSERT_TRUE(Snapshot(target, &state));
  ASSERT_EQ(state.endpoints.size(), want.size());
  for (const EndpointView& e : state.endpoints) {
    auto it = want.find(e.address);
    ASSERT_NE(it, want.end()) << e.address;
    EXPECT_EQ(e.endpoint_weight, it->second) << e.address;
  }
}

TEST(ResolverWeights, ScaleTheArcsAndTheCallsFollowThem) {
  auto backends = StartBackends(4);
  auto addresses = Addresses(backends);
  const std::vector<double> weights = {1, 2, 3, 6};
  Weighted list;
  for (size_t i = 0; i < addresses.size(); ++i) {
    list.emplace_back(addresses[i], static_cast<uint32_t>(weights[i]));
  }
  TestChannel channel("resolver-weights", Config("{\"mode\":\"mesh\"}"));
  channel.SetWeightedAddresses(list);
  auto expected = ExpectedMembers(addresses, Mode::kMesh, 0, 1, 12, &weights);
  ASSERT_EQ(expected.size(), 4u);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 4));
  std::map<std::string, double> by_address;
  for (size_t i = 0; i < addresses.size(); ++i) by_address[addresses[i]] = weights[i];
  ExpectStatusWeights(channel.target(), by_address);
  StateView state;
  ASSERT_TRUE(Snapshot(channel.target(), &state));
  for (const auto& kv : expected) {
    const EndpointView* e = state.Find(kv.first);
    ASSERT_NE(e, nullptr) << kv.first;
    EXPECT_NEAR(e->pick_weight, kv.second, 1e-9) << kv.first;
  }
  ExpectCallsFollow(channel, backends, expected, 2400);
  // The heaviest gets about half of the calls, the lightest a twelfth.
  EXPECT_GT(backends[3]->calls(), 3 * backends[0]->calls());

  // The same addresses with other weights: a new ring, and the calls move.
  const std::vector<double> flipped = {6, 3, 2, 1};
  Weighted again;
  for (size_t i = 0; i < addresses.size(); ++i) {
    again.emplace_back(addresses[i], static_cast<uint32_t>(flipped[i]));
  }
  const uint64_t rebuilds = state.rebuilds;
  channel.SetWeightedAddresses(again);
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& s) {
    const EndpointView* e = s.Find(addresses[0]);
    return e != nullptr && e->endpoint_weight == 6 && s.rebuilds > rebuilds;
  }));
  ExpectCallsFollow(channel, backends,
                    ExpectedMembers(addresses, Mode::kMesh, 0, 1, 12, &flipped),
                    2400);
}

// The config's map overrides the resolver for the addresses it lists; the
// others keep the resolver's weight.
TEST(ResolverWeights, TheConfigsWeightsOverrideThemAddressByAddress) {
  auto backends = StartBackends(4);
  auto addresses = Addresses(backends);
  Weighted list = {{addresses[0], 5}, {addresses[1], 1}, {addresses[2], 1},
                   {addresses[3], 0}};  // the last one without a weight
  TestChannel channel(
      "config-over-resolver",
      Config("{\"mode\":\"mesh\",\"weights\":{\"" + addresses[0] + "\":1,\"" +
             addresses[1] + "\":3}}"));
  channel.SetWeightedAddresses(list);
  const std::vector<double> effective = {1, 3, 1, 1};
  auto expected = ExpectedMembers(addresses, Mode::kMesh, 0, 1, 12, &effective);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 4));
  ExpectStatusWeights(channel.target(), {{addresses[0], 1},
                                         {addresses[1], 3},
                                         {addresses[2], 1},
                                         {addresses[3], 1}});
  ExpectCallsFollow(channel, backends, expected, 1800);
  EXPECT_GT(backends[1]->calls(), 2 * backends[0]->calls());
}

// Two clients of one fleet (peers 0 and 1 of 2) given the same weighted
// list, one in reverse order, build the same ring: the same fingerprint
// and weights in ring order, and each the members and pick weights the
// oracle computes from those weights; together they cover every endpoint.
TEST(ResolverWeights, ClientsGivenTheSameWeightsInAnyOrderBuildTheSameRing) {
  auto backends = StartBackends(6);
  auto addresses = Addresses(backends);
  const std::vector<double> weights = {1, 4, 1, 2, 1, 3};
  Weighted list;
  for (size_t i = 0; i < addresses.size(); ++i) {
    list.emplace_back(addresses[i], static_cast<uint32_t>(weights[i]));
  }
  Weighted reversed(list.rbegin(), list.rend());
  const std::string config = "{\"mode\":\"continuous\",\"minAperture\":2,\"peerCount\":2,";
  TestChannel peer0("same-ring-0", Config(config + "\"peerIndex\":0}"));
  TestChannel peer1("same-ring-1", Config(config + "\"peerIndex\":1}"));
  peer0.SetWeightedAddresses(list);
  peer1.SetWeightedAddresses(reversed);
  std::set<std::string> covered;
  std::vector<StateView> states(2);
  for (uint32_t k = 0; k < 2; ++k) {
    const std::string target = k == 0 ? peer0.target() : peer1.target();
    auto expected =
        ExpectedMembers(addresses, Mode::kContinuous, k, 2, 2, &weights);
    ASSERT_TRUE(WaitAllMembersReady(target, expected.size())) << "peer " << k;
    ASSERT_TRUE(Snapshot(target, &states[k]));
    EXPECT_EQ(states[k].physical_aperture, expected.size()) << "peer " << k;
    for (const auto& kv : expected) {
      const EndpointView* e = states[k].Find(kv.first);
      ASSERT_NE(e, nullptr) << kv.first;
      EXPECT_TRUE(e->in_aperture) << "peer " << k << " " << kv.first;
      EXPECT_NEAR(e->pick_weight, kv.second, 1e-9) << "peer " << k << " " << kv.first;
      covered.insert(kv.first);
    }
  }
  EXPECT_EQ(states[0].fingerprint, states[1].fingerprint);
  ASSERT_EQ(states[0].endpoints.size(), states[1].endpoints.size());
  for (size_t i = 0; i < states[0].endpoints.size(); ++i) {
    EXPECT_EQ(states[0].endpoints[i].address, states[1].endpoints[i].address);
    EXPECT_EQ(states[0].endpoints[i].endpoint_weight,
              states[1].endpoints[i].endpoint_weight);
  }
  EXPECT_EQ(covered.size(), addresses.size());
}

}  // namespace
}  // namespace aperture_test
