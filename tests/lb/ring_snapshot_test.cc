// The ring snapshot as a pure function of members, settings and coordinate:
// no channel, no subchannel. Expected pick weights are computed here from
// the arcs and the window, not read back from the core.
#include <math.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/core/ring/ap_order.h"
#include "policy/core/stable/ap_stable.h"
#include "policy/lb/config/config_fields.h"
#include "policy/lb/ring/ring_snapshot.h"
#include "src/core/lib/json/json.h"

namespace aperture_lb {
namespace {

EffectiveMember Member(const std::string& address, double weight = 1.0,
                       bool draining = false) {
  grpc_resolved_address raw;
  memset(&raw, 0, sizeof(raw));
  return EffectiveMember{address,
                         grpc_core::ServerAddress(raw, grpc_core::ChannelArgs()),
                         weight, draining};
}

Coordinate At(uint32_t index, uint32_t count) {
  Coordinate c;
  c.known = true;
  c.peer_index = index;
  c.peer_count = count;
  c.source = AP_COORDINATE_CONFIG;
  return c;
}

ApertureSettings Settings(ap_mode mode, uint32_t min_aperture) {
  ApertureSettings s;
  s.mode = mode;
  s.min_aperture = min_aperture;
  return s;
}

std::unique_ptr<const RingSnapshot> Build(std::vector<EffectiveMember> members,
                                          const ApertureSettings& settings,
                                          const Coordinate& coordinate,
                                          uint64_t seed = 7) {
  auto built = BuildRingSnapshot(std::move(members), settings, coordinate, seed);
  EXPECT_TRUE(built.ok()) << built.status();
  return built.ok() ? std::move(*built) : nullptr;
}

std::vector<std::string> Addresses(const RingSnapshot& s) {
  std::vector<std::string> out;
  for (const EffectiveMember& m : s.members()) out.push_back(m.address);
  return out;
}

const std::vector<std::string> kSix = {"10.0.0.5:80", "10.0.0.1:80",
                                       "10.0.0.3:80", "10.0.0.6:80",
                                       "10.0.0.2:80", "10.0.0.4:80"};

TEST(RingSnapshot, OrderDependsOnTheAddressesOnly) {
  std::vector<EffectiveMember> forward, backward;
  for (size_t i = 0; i < kSix.size(); ++i) {
    forward.push_back(Member(kSix[i], 1.0 + i));
    backward.insert(backward.begin(), Member(kSix[i], 1.0 + i));
  }
  auto a = Build(forward, Settings(AP_MODE_CONTINUOUS, 2), At(0, 3));
  auto b = Build(backward, Settings(AP_MODE_CONTINUOUS, 2), At(0, 3));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(Addresses(*a), Addresses(*b));
  EXPECT_EQ(a->fingerprint(), b->fingerprint());
  EXPECT_EQ(a->key(), b->key());

  // The agreed order of the core, and every member exactly once with its
  // own weight.
  std::vector<const char*> pointers;
  for (const std::string& s : kSix) pointers.push_back(s.c_str());
  std::vector<size_t> order(kSix.size());
  ASSERT_EQ(ap_order_endpoints(pointers.data(), kSix.size(), order.data(),
                               nullptr),
            AP_OK);
  ASSERT_EQ(a->size(), kSix.size());
  for (size_t k = 0; k < kSix.size(); ++k) {
    EXPECT_EQ(a->address(k), kSix[order[k]]);
    EXPECT_EQ(a->members()[k].weight, 1.0 + order[k]);
    EXPECT_EQ(ap_ring_weight(a->ring(), k), 1.0 + order[k]);
  }
}

// Continuous mode over weighted arcs: member i is in the aperture iff its
// arc overlaps the window [index/C, (index+m)/C) with m = ceil(A*C/N), and
// its pick weight is overlap / arc width x weight (the window wraps).
TEST(RingSnapshot, ContinuousMembersAndPickWeightsFollowTheWindow) {
  const std::map<std::string, double> weights = {
      {"10.1.0.1:80", 2.0}, {"10.1.0.2:80", 1.0}, {"10.1.0.3:80", 1.0},
      {"10.1.0.4:80", 3.0}, {"10.1.0.5:80", 1.0}};
  const uint32_t count = 3, min_aperture = 2;
  for (uint32_t index = 0; index < count; ++index) {
    std::vector<EffectiveMember> members;
    for (const auto& w : weights) members.push_back(Member(w.first, w.second));
    auto s = Build(members, Settings(AP_MODE_CONTINUOUS, min_aperture),
                   At(index, count));
    ASSERT_TRUE(s);
    const size_t n = s->size();
    double total = 0;
    for (const auto& w : weights) total += w.second;
    const uint64_t m = (uint64_t{min_aperture} * count + n - 1) / n;
    const double lo = static_cast<double>(index) / count;
    const double hi = static_cast<double>(index + m) / count;
    std::map<uint32_t, double> expected;  // ring index -> pick weight
    double start = 0;
    for (size_t i = 0; i < n; ++i) {
      const double w = weights.at(s->address(i));
      const double end = start + w / total;
      auto part = [&](double a, double b) {
        return std::max(0.0, std::min(end, b) - std::max(start, a));
      };
      // The window wraps around the ring (mod 1).
      const double overlap =
          part(lo, std::min(hi, 1.0)) + (hi > 1.0 ? part(0.0, hi - 1.0) : 0.0);
      if (overlap > 1e-9) expected[i] = overlap / (end - start) * w;
      start = end;
    }
    const ap_aperture* a = s->aperture();
    ASSERT_EQ(ap_aperture_count(a), expected.size()) << "index " << index;
    for (size_t k = 0; k < ap_aperture_count(a); ++k) {
      const ap_member* member = ap_aperture_member(a, k);
      ASSERT_EQ(expected.count(member->index), 1u) << member->index;
      EXPECT_NEAR(member->pick_weight, expected[member->index], 1e-9);
    }
    EXPECT_EQ(s->coordinate().peer_index, index);
    EXPECT_EQ(ap_aperture_mode(a), AP_MODE_CONTINUOUS);
  }
}

TEST(RingSnapshot, MeshHoldsEveryMemberWithItsWeight) {
  std::vector<EffectiveMember> members;
  for (size_t i = 0; i < kSix.size(); ++i) members.push_back(Member(kSix[i], 1.0 + i));
  auto s = Build(members, Settings(AP_MODE_MESH, 1), Coordinate());
  ASSERT_TRUE(s);
  ASSERT_EQ(ap_aperture_count(s->aperture()), kSix.size());
  for (size_t k = 0; k < kSix.size(); ++k) {
    const ap_member* m = ap_aperture_member(s->aperture(), k);
    EXPECT_EQ(m->pick_weight, s->members()[m->index].weight);
  }
}

TEST(RingSnapshot, MinReadyIsTheConfigCappedOrTheLogicalAperture) {
  std::vector<EffectiveMember> members;
  for (const std::string& a : kSix) members.push_back(Member(a));
  ApertureSettings settings = Settings(AP_MODE_CONTINUOUS, 4);
  auto by_default = Build(members, settings, At(0, 2));
  ASSERT_TRUE(by_default);
  EXPECT_EQ(by_default->min_ready(), 4u);
  settings.has_min_ready = true;
  settings.min_ready = 50;
  auto capped = Build(members, settings, At(0, 2));
  ASSERT_TRUE(capped);
  EXPECT_EQ(capped->min_ready(), kSix.size());
  settings.min_ready = 0;
  auto floor = Build(members, settings, At(0, 2));
  ASSERT_TRUE(floor);
  EXPECT_EQ(floor->min_ready(), 1u);
}

TEST(RingSnapshot, DrainingMembersKeepTheirSlot) {
  std::vector<EffectiveMember> members;
  for (const std::string& a : kSix) members.push_back(Member(a, 1.0, a == kSix[2]));
  auto s = Build(members, Settings(AP_MODE_MESH, 1), Coordinate());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->size(), kSix.size());
  EXPECT_EQ(s->draining_count(), 1u);
  EXPECT_TRUE(s->IsDraining(kSix[2]));
  EXPECT_FALSE(s->IsDraining(kSix[0]));
  EXPECT_FALSE(s->IsDraining("10.9.9.9:80"));
  for (size_t i = 0; i < s->size(); ++i) {
    EXPECT_EQ(s->draining(i), s->address(i) == kSix[2]);
  }
}

// The snapshot's key changes with every input that shapes the ring: the
// members, their weights, the mode, minAperture, the coordinate and the
// seed.
TEST(RingSnapshot, KeyFollowsWhatShapesTheRing) {
  auto members = [](double first_weight) {
    std::vector<EffectiveMember> out;
    for (const std::string& a : kSix) {
      out.push_back(Member(a, a == kSix[0] ? first_weight : 1.0));
    }
    return out;
  };
  ApertureSettings continuous = Settings(AP_MODE_CONTINUOUS, 2);
  auto base = Build(members(1.0), continuous, At(0, 3));
  auto same = Build(members(1.0), continuous, At(0, 3));
  auto weight = Build(members(2.0), continuous, At(0, 3));
  auto coordinate = Build(members(1.0), continuous, At(1, 3));
  ASSERT_TRUE(base && same && weight && coordinate);
  EXPECT_EQ(base->key(), same->key());
  EXPECT_NE(base->key(), weight->key());
  EXPECT_NE(base->key(), coordinate->key());

  auto mode = Build(members(1.0), Settings(AP_MODE_DISCRETE, 2), At(0, 3));
  auto aperture = Build(members(1.0), Settings(AP_MODE_CONTINUOUS, 3), At(0, 3));
  std::vector<EffectiveMember> joined = members(1.0);
  joined.push_back(Member("10.0.0.7:80"));
  std::vector<EffectiveMember> left = members(1.0);
  left.pop_back();
  std::vector<EffectiveMember> replaced = members(1.0);
  replaced.back().address = "10.0.0.9:80";
  auto join = Build(joined, continuous, At(0, 3));
  auto leave = Build(left, continuous, At(0, 3));
  auto replace = Build(replaced, continuous, At(0, 3));
  ASSERT_TRUE(mode && aperture && join && leave && replace);
  const std::set<uint64_t> keys = {base->key(),     weight->key(), coordinate->key(),
                                   mode->key(),     aperture->key(), join->key(),
                                   leave->key(),    replace->key()};
  EXPECT_EQ(keys.size(), 8u) << "a change of one input left the key unchanged";

  // Random mode: the config's seed wins over the fallback.
  ApertureSettings random = Settings(AP_MODE_RANDOM, 2);
  auto fallback1 = Build(members(1.0), random, Coordinate(), 1);
  auto fallback2 = Build(members(1.0), random, Coordinate(), 2);
  random.has_random_seed = true;
  random.random_seed = 99;
  auto seeded1 = Build(members(1.0), random, Coordinate(), 1);
  auto seeded2 = Build(members(1.0), random, Coordinate(), 2);
  ASSERT_TRUE(fallback1 && fallback2 && seeded1 && seeded2);
  EXPECT_NE(fallback1->key(), fallback2->key());
  EXPECT_EQ(seeded1->key(), seeded2->key());
  EXPECT_NE(seeded1->key(), fallback1->key());
}

// Stable mode: the snapshot's aperture is the plan row of the core over
// ap_stable_key() of the addresses, with the peers keyed by their entries
// when the coordinate came with a peer list and by their ordinals
// otherwise. The expected plan is built here in the test's own address
// order: membership follows the keys, not the ring order.
std::set<std::string> StableRow(const std::vector<std::string>& addresses,
                                const std::vector<uint64_t>& peer_keys,
                                uint32_t peer_index, uint32_t min_aperture) {
  std::vector<uint64_t> keys;
  for (const std::string& a : addresses) keys.push_back(ap_stable_key(a.c_str()));
  ap_stable_plan* plan = nullptr;
  ap_error err;
  std::set<std::string> row;
  EXPECT_EQ(ap_stable_plan_create(keys.data(), nullptr, keys.size(),
                                  peer_keys.data(), peer_keys.size(),
                                  min_aperture, &plan, &err),
            AP_OK)
      << err.message;
  for (size_t k = 0; k < ap_stable_plan_row_size(plan, peer_index); ++k) {
    row.insert(addresses[ap_stable_plan_row_endpoints(plan, peer_index)[k]]);
  }
  ap_stable_plan_destroy(plan);
  return row;
}

std::set<std::string> MemberAddresses(const RingSnapshot& s) {
  std::set<std::string> out;
  const ap_aperture* a = s.aperture();
  for (size_t k = 0; k < ap_aperture_count(a); ++k) {
    out.insert(s.address(ap_aperture_member(a, k)->index));
  }
  return out;
}

const std::vector<std::string> kTwenty = [] {
  std::vector<std::string> out;
  for (int i = 1; i <= 20; ++i) out.push_back("10.2.0." + std::to_string(i) + ":443");
  return out;
}();

TEST(RingSnapshot, StableRowFromOrdinalPeerKeys) {
  const uint32_t count = 6, min_aperture = 3;
  std::vector<uint64_t> ordinals;
  for (uint32_t i = 0; i < count; ++i) ordinals.push_back(ap_stable_ordinal_key(i));
  for (uint32_t index = 0; index < count; ++index) {
    std::vector<EffectiveMember> members;
    for (const std::string& a : kTwenty) members.push_back(Member(a));
    auto s = Build(members, Settings(AP_MODE_STABLE, min_aperture), At(index, count));
    ASSERT_TRUE(s);
    EXPECT_EQ(ap_aperture_mode(s->aperture()), AP_MODE_STABLE);
    EXPECT_FALSE(s->stable_peers_by_address());
    EXPECT_EQ(MemberAddresses(*s), StableRow(kTwenty, ordinals, index, min_aperture))
        << "index " << index;
  }
}

TEST(RingSnapshot, StableRowFromThePeerList) {
  const uint32_t count = 5, min_aperture = 3;
  auto peers = std::make_shared<std::vector<std::string>>();
  for (int i = 0; i < 5; ++i) peers->push_back("10.9.0." + std::to_string(i) + ":9000");
  std::vector<uint64_t> keys;
  for (const std::string& p : *peers) keys.push_back(ap_stable_key(p.c_str()));
  std::vector<EffectiveMember> members;
  for (const std::string& a : kTwenty) members.push_back(Member(a));
  bool differs = false;
  for (uint32_t index = 0; index < count; ++index) {
    Coordinate c = At(index, count);
    c.source = AP_COORDINATE_PEER_TARGET;
    c.peers = peers;
    auto s = Build(members, Settings(AP_MODE_STABLE, min_aperture), c);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->stable_peers_by_address());
    EXPECT_EQ(MemberAddresses(*s), StableRow(kTwenty, keys, index, min_aperture))
        << "index " << index;
    auto ordinal = Build(members, Settings(AP_MODE_STABLE, min_aperture),
                         At(index, count));
    ASSERT_TRUE(ordinal);
    EXPECT_NE(s->key(), ordinal->key());
    differs = differs || MemberAddresses(*s) != MemberAddresses(*ordinal);
  }
  // Other keys place the peers elsewhere: some row must differ.
  EXPECT_TRUE(differs);

  // A list of another size than the count is not the coordinate's: the
  // ordinals are used.
  Coordinate c = At(0, 4);
  c.peers = peers;
  auto mismatched = Build(members, Settings(AP_MODE_STABLE, min_aperture), c);
  ASSERT_TRUE(mismatched);
  EXPECT_FALSE(mismatched->stable_peers_by_address());
}

// The same peer index and count with another peer list is another plan:
// the snapshot key changes, so the policy counts a rebuild.
TEST(RingSnapshot, StableKeyFollowsThePeerList) {
  std::vector<EffectiveMember> members;
  for (const std::string& a : kSix) members.push_back(Member(a));
  auto peers = [](const std::string& last) {
    return std::make_shared<std::vector<std::string>>(
        std::vector<std::string>{"10.9.0.1:1", "10.9.0.2:1", last});
  };
  Coordinate a = At(0, 3), b = At(0, 3), same = At(0, 3);
  a.peers = peers("10.9.0.3:1");
  same.peers = peers("10.9.0.3:1");
  b.peers = peers("10.9.0.4:1");
  auto sa = Build(members, Settings(AP_MODE_STABLE, 2), a);
  auto ss = Build(members, Settings(AP_MODE_STABLE, 2), same);
  auto sb = Build(members, Settings(AP_MODE_STABLE, 2), b);
  ASSERT_TRUE(sa && ss && sb);
  EXPECT_EQ(sa->key(), ss->key());
  EXPECT_NE(sa->key(), sb->key());
}

// Without a coordinate stable falls back to random (the core's rule) and
// needs no keys.
TEST(RingSnapshot, StableWithoutCoordinateIsRandom) {
  std::vector<EffectiveMember> members;
  for (const std::string& a : kSix) members.push_back(Member(a));
  auto s = Build(members, Settings(AP_MODE_STABLE, 2), Coordinate());
  ASSERT_TRUE(s);
  EXPECT_EQ(ap_aperture_mode(s->aperture()), AP_MODE_RANDOM);
  EXPECT_EQ(ap_aperture_count(s->aperture()), 2u);
  EXPECT_FALSE(s->stable_peers_by_address());
}

// The input key, computed before a build, changes with every input the
// snapshot reads and with nothing else: not with the members' order.
TEST(RingSnapshot, InputKeyFollowsEveryInputButNotTheOrder) {
  std::vector<EffectiveMember> members = {Member("10.0.0.1:80"), Member("10.0.0.2:80"),
                                          Member("10.0.0.3:80")};
  const ApertureSettings settings = Settings(AP_MODE_STABLE, 2);
  const Coordinate at = At(1, 4);
  const uint64_t key = RingInputKey(members, settings, at, 7);
  auto snapshot = Build(members, settings, at);
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->input_key(), key);
  EXPECT_STREQ(snapshot->stable_peer_keys(), "ordinal");

  std::vector<EffectiveMember> reordered = {members[2], members[0], members[1]};
  EXPECT_EQ(RingInputKey(reordered, settings, at, 7), key);

  std::set<uint64_t> keys = {key};
  auto changed = members;
  changed[1].weight = 2.0;
  keys.insert(RingInputKey(changed, settings, at, 7));
  changed = members;
  changed[1].draining = true;
  keys.insert(RingInputKey(changed, settings, at, 7));
  changed = members;
  changed[1].address = "10.0.0.9:80";
  keys.insert(RingInputKey(changed, settings, at, 7));
  keys.insert(RingInputKey(std::vector<EffectiveMember>(members.begin(), members.end() - 1),
                           settings, at, 7));
  keys.insert(RingInputKey(members, Settings(AP_MODE_STABLE, 3), at, 7));
  keys.insert(RingInputKey(members, Settings(AP_MODE_SMOOTH, 2), at, 7));
  ApertureSettings ready = settings;
  ready.has_min_ready = true;
  ready.min_ready = 1;
  keys.insert(RingInputKey(members, ready, at, 7));
  ApertureSettings seeded = settings;
  seeded.has_random_seed = true;
  seeded.random_seed = 5;
  keys.insert(RingInputKey(members, seeded, at, 7));
  keys.insert(RingInputKey(members, settings, At(2, 4), 7));
  keys.insert(RingInputKey(members, settings, At(1, 5), 7));
  keys.insert(RingInputKey(members, settings, at, 8));
  Coordinate listed = at;
  listed.peers = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"a:1", "b:1", "c:1", "d:1"});
  keys.insert(RingInputKey(members, settings, listed, 7));
  Coordinate other_list = at;
  other_list.peers = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"a:1", "b:1", "c:1", "e:1"});
  keys.insert(RingInputKey(members, settings, other_list, 7));
  EXPECT_EQ(keys.size(), 14u) << "an input change left the key unchanged";
  // A choiceCount change is not an input of the snapshot.
  ApertureSettings choices = settings;
  choices.choice_count = 3;
  EXPECT_EQ(RingInputKey(members, choices, at, 7), key);
}

// A config that changes one field from its default, for every field of
// the table (the companions a field needs to be valid come along).
const std::map<std::string, std::string> kOneFieldChanged = {
    {"mode", R"({"mode":"mesh"})"},
    {"pickMetric", R"({"pickMetric":"orca"})"},
    {"clientSkewBalance", R"({"clientSkewBalance":false})"},
    {"minAperture", R"({"minAperture":3})"},
    {"peerIndex", R"({"peerIndex":1,"peerCount":4})"},
    {"peerCount", R"({"peerIndex":0,"peerCount":5})"},
    {"choiceCount", R"({"choiceCount":3})"},
    {"minReady", R"({"minReady":2})"},
    {"randomSeed", R"({"randomSeed":5})"},
    {"removalGraceMs", R"({"removalGraceMs":1000})"},
    {"updateCoalesceMs", R"({"updateCoalesceMs":100})"},
    {"reresolutionIntervalMs", R"({"reresolutionIntervalMs":30000})"},
    {"ejectAfterFailures", R"({"ejectAfterFailures":3})"},
    {"ejectionMs", R"({"ejectionMs":1000})"},
    {"stuckCallMs", R"({"stuckCallMs":500})"},
    {"maxEjectionMs", R"({"maxEjectionMs":9000})"},
    {"stuckCallMinMs", R"({"stuckCallMinMs":10})"},
    {"stuckLatencyFactor", R"({"stuckLatencyFactor":4})"},
    {"maxEjectionPercent", R"({"maxEjectionPercent":25})"},
    {"keepaliveMs", R"({"keepaliveMs":0})"},
    {"keepaliveTimeoutMs", R"({"keepaliveTimeoutMs":5000})"},
    {"reconnectBackoffMaxMs", R"({"reconnectBackoffMaxMs":0})"},
    {"peerTarget", R"({"peerTarget":"dns:///clients.svc:80"})"},
    {"peerSelf", R"({"peerSelf":"10.1.2.3:7001"})"},
    {"peerRefreshMs", R"({"peerRefreshMs":5000})"},
    {"eagerConnect", R"({"eagerConnect":true})"},
    {"weights", R"({"weights":{"10.0.0.1:80":2}})"},
    {"affinity", R"({"affinity":"sticky","affinityHeader":"x-key"})"},
    {"affinityHeader", R"({"affinityHeader":"x-key"})"},
    {"maxSessions", R"({"maxSessions":50})"},
    {"sessionIdleMs", R"({"sessionIdleMs":1000})"},
    {"hashVnodes", R"({"hashVnodes":7})"},
};

ApertureSettings Parsed(const std::string& json) {
  auto parsed = grpc_core::Json::Parse(json);
  EXPECT_TRUE(parsed.ok()) << json;
  if (!parsed.ok()) return ApertureSettings();
  auto settings = ParseApertureSettings(*parsed);
  EXPECT_TRUE(settings.ok()) << json << " -> " << settings.status();
  return settings.ok() ? *settings : ApertureSettings();
}

// The same members in the same places with the same pick weights, and the
// same readiness floor.
void ExpectSameSnapshot(const RingSnapshot& a, const RingSnapshot& b,
                        const std::string& what) {
  EXPECT_EQ(a.key(), b.key()) << what;
  EXPECT_EQ(a.min_ready(), b.min_ready()) << what;
  ASSERT_EQ(ap_aperture_count(a.aperture()), ap_aperture_count(b.aperture())) << what;
  for (size_t k = 0; k < ap_aperture_count(a.aperture()); ++k) {
    EXPECT_EQ(ap_aperture_member(a.aperture(), k)->index,
              ap_aperture_member(b.aperture(), k)->index) << what;
    EXPECT_EQ(ap_aperture_member(a.aperture(), k)->pick_weight,
              ap_aperture_member(b.aperture(), k)->pick_weight) << what;
  }
}

// RingInputKey() reads from the settings exactly the fields the table
// marks as shaping the ring: a change of one of them changes the key, a
// change of any other field leaves both the key and the snapshot as they
// were (weights and the coordinate fields reach the ring as the members'
// weights and the coordinate, covered above).
TEST(RingSnapshot, InputKeyReadsTheFieldsThatShapeTheRing) {
  std::vector<EffectiveMember> members;
  for (const std::string& a : kSix) members.push_back(Member(a));
  const Coordinate at = At(1, 4);
  const ApertureSettings defaults = Parsed("{}");
  const uint64_t key = RingInputKey(members, defaults, at, 7);
  auto base = Build(members, defaults, at);
  ASSERT_TRUE(base);
  size_t shaping = 0;
  for (const ConfigField& field : ConfigFields()) {
    auto changed = kOneFieldChanged.find(field.name);
    ASSERT_NE(changed, kOneFieldChanged.end())
        << field.name << ": add a config that changes it to kOneFieldChanged";
    const ApertureSettings settings = Parsed(changed->second);
    if (field.ring == RingRole::kSetting) {
      ++shaping;
      EXPECT_NE(RingInputKey(members, settings, at, 7), key) << changed->second;
    } else {
      EXPECT_EQ(RingInputKey(members, settings, at, 7), key) << changed->second;
      auto built = Build(members, settings, at);
      ASSERT_TRUE(built) << changed->second;
      ExpectSameSnapshot(*base, *built, changed->second);
    }
  }
  EXPECT_EQ(shaping, 4u);  // mode, minAperture, minReady, randomSeed
  EXPECT_EQ(kOneFieldChanged.size(), ConfigFields().size()) << "a name that is no field";
}

TEST(RingSnapshot, BadInputIsAnErrorNamingTheStep) {
  auto empty = BuildRingSnapshot({}, Settings(AP_MODE_MESH, 1), Coordinate(), 1);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(empty.status().message().find("no endpoint left"),
            absl::string_view::npos);

  auto weight = BuildRingSnapshot({Member(kSix[0], 1.0), Member(kSix[1], -1.0)},
                                  Settings(AP_MODE_MESH, 1), Coordinate(), 1);
  ASSERT_FALSE(weight.ok());
  EXPECT_NE(weight.status().message().find("aperture: cannot build the ring"),
            absl::string_view::npos)
      << weight.status();

  auto coordinate =
      BuildRingSnapshot({Member(kSix[0]), Member(kSix[1])},
                        Settings(AP_MODE_CONTINUOUS, 1), At(5, 3), 1);
  ASSERT_FALSE(coordinate.ok());
  EXPECT_NE(coordinate.status().message().find(
                "aperture: cannot compute the aperture"),
            absl::string_view::npos)
      << coordinate.status();

  auto duplicate = BuildRingSnapshot({Member(kSix[0]), Member(kSix[0])},
                                     Settings(AP_MODE_MESH, 1), Coordinate(), 1);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.status().message().find("aperture: cannot order"),
            absl::string_view::npos)
      << duplicate.status();
}

}  // namespace
}  // namespace aperture_lb
