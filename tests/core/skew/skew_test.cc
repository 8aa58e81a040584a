// ap_skew: the geometry a client's window gives (from the core's own
// apertures, against values worked out here from the definitions), the
// width it decides from the rates its members report (estimates, the band,
// warm-up, hysteresis, probing where the windows tile the ring) and the
// weight factors it moves toward equal utilization, all with explicit
// times.
#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/skew/ap_skew.h"
#include "tests/core/test_util.h"

namespace {

using aptest::Aperture;
using aptest::MakeRing;

constexpr int64_t kTick = AP_SKEW_TICK_NS;
constexpr int64_t kS = 1000000000LL;
constexpr int64_t kT0 = 100 * kS;

Aperture Compute(const ap_ring* ring, ap_mode mode, uint32_t index,
                 uint32_t count, uint32_t min_aperture) {
  ap_subset_params p;
  ap_error err;
  EXPECT_EQ(ap_subset_params_for_client(mode, index, count, min_aperture, 7,
                                        &p, &err),
            AP_OK)
      << err.message;
  ap_aperture* a = nullptr;
  EXPECT_EQ(ap_aperture_compute(ring, &p, &a, &err), AP_OK) << err.message;
  return Aperture(a);
}

struct Geometry {
  ap_skew_geometry g;
  std::vector<double> others;
};

Geometry Measure(const ap_ring* ring, const ap_aperture* base, uint32_t peers,
                 const ap_aperture* current) {
  Geometry out;
  out.others.assign(ap_aperture_count(current), -1);
  ap_error err;
  EXPECT_EQ(ap_skew_geometry_compute(ring, base, peers, current,
                                     out.others.data(), &out.g, &err),
            AP_OK)
      << err.message;
  return out;
}

TEST(SkewGeometry, WindowsThatTileTheRingShowNoOthers) {
  // 8 servers, 4 clients, minAperture 2: smooth width max(2/8, 1/4) = 1/4,
  // client 0 holds servers 0 and 1 alone.
  auto ring = MakeRing(8);
  auto base = Compute(ring.get(), AP_MODE_SMOOTH, 0, 4, 2);
  Geometry m = Measure(ring.get(), base.get(), 4, base.get());
  EXPECT_EQ(m.g.endpoints, 8u);
  EXPECT_EQ(m.g.min_aperture, 2u);
  EXPECT_DOUBLE_EQ(m.g.base_endpoints, 2);
  EXPECT_EQ(m.g.widens, 1);
  EXPECT_NEAR(m.g.base_others, 0, 1e-12);
  ASSERT_EQ(m.others.size(), 2u);
  // peer count x arc = 4 x 1/8 = 0.5, minus its own share 0.5
  for (double o : m.others) EXPECT_NEAR(o, 0, 1e-12);
  EXPECT_EQ(ap_skew_logical(&m.g, 1), 2u);
  EXPECT_EQ(ap_skew_logical(&m.g, 2), 4u);
  EXPECT_EQ(ap_skew_logical(&m.g, 4), 8u);
  EXPECT_EQ(ap_skew_logical(&m.g, 9), 8u) << "at most the whole ring";
  EXPECT_EQ(ap_skew_probe_logical(&m.g), 3u) << "one endpoint past the base";
  // Widened to the whole ring: the other clients' servers stand for half a
  // client-rate each (0.5 = 4 x 1/8, none of it this client's at base).
  auto wide = Compute(ring.get(), AP_MODE_SMOOTH, 0, 4, 8);
  Geometry w = Measure(ring.get(), base.get(), 4, wide.get());
  ASSERT_EQ(w.others.size(), 8u);
  for (size_t k = 0; k < 8; ++k) {
    const uint32_t index = ap_aperture_member(wide.get(), k)->index;
    EXPECT_NEAR(w.others[k], index < 2 ? 0 : 0.5, 1e-12) << index;
  }
}

TEST(SkewGeometry, OverlappingWindowsCountTheOtherClients) {
  // 100 x 100, minAperture 12: every server in 12 windows of equal weight;
  // a member stands for 100 x 1/100 - 1/12 = 11/12 of the others.
  auto ring = MakeRing(100);
  auto base = Compute(ring.get(), AP_MODE_SMOOTH, 5, 100, 12);
  Geometry m = Measure(ring.get(), base.get(), 100, base.get());
  ASSERT_EQ(m.others.size(), 12u);
  for (double o : m.others) EXPECT_NEAR(o, 11.0 / 12, 1e-9);
  EXPECT_NEAR(m.g.base_others, 11, 1e-9);
  EXPECT_DOUBLE_EQ(m.g.base_endpoints, 12);
  EXPECT_EQ(ap_skew_logical(&m.g, 1), 12u);
  EXPECT_EQ(ap_skew_logical(&m.g, 3), 36u);
}

TEST(SkewGeometry, PartlyCoveredEdgesAreShared) {
  // 10 servers, 4 clients, minAperture 2: width 1/4 = 2.5 servers; client
  // 0 has servers 0, 1 and half of 2 (shares 0.4, 0.4, 0.2); server 2 is
  // half client 1's: 4 x 1/10 - 0.2 = 0.2.
  auto ring = MakeRing(10);
  auto base = Compute(ring.get(), AP_MODE_SMOOTH, 0, 4, 2);
  Geometry m = Measure(ring.get(), base.get(), 4, base.get());
  ASSERT_EQ(m.others.size(), 3u);
  EXPECT_NEAR(m.others[0], 0, 1e-12);
  EXPECT_NEAR(m.others[1], 0, 1e-12);
  EXPECT_NEAR(m.others[2], 0.2, 1e-12);
  EXPECT_NEAR(m.g.base_others, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(m.g.base_endpoints, 2.5);
  EXPECT_EQ(ap_skew_logical(&m.g, 1), 2u) << "the configured one, not 3";
  EXPECT_EQ(ap_skew_logical(&m.g, 2), 5u);
}

TEST(SkewGeometry, OnlyWindowModesWiden) {
  auto ring = MakeRing(20);
  for (ap_mode mode : {AP_MODE_DISCRETE, AP_MODE_RANDOM, AP_MODE_VDC,
                       AP_MODE_MESH}) {
    auto base = Compute(ring.get(), mode, 1, 4, 3);
    Geometry m = Measure(ring.get(), base.get(), 4, base.get());
    EXPECT_EQ(m.g.widens, 0) << ap_mode_name(mode);
  }
  auto continuous = Compute(ring.get(), AP_MODE_CONTINUOUS, 1, 4, 3);
  EXPECT_EQ(Measure(ring.get(), continuous.get(), 4, continuous.get()).g.widens, 1);
  auto no_coordinate = Compute(ring.get(), AP_MODE_SMOOTH, 0, 0, 3);
  EXPECT_EQ(Measure(ring.get(), no_coordinate.get(), 0, no_coordinate.get()).g.widens, 0);
}

TEST(SkewGeometry, BadArguments) {
  auto ring = MakeRing(8);
  auto small = MakeRing(4);
  auto base = Compute(ring.get(), AP_MODE_SMOOTH, 0, 4, 2);
  auto other = Compute(ring.get(), AP_MODE_SMOOTH, 3, 4, 2);
  double others[8];
  ap_skew_geometry g;
  ap_error err;
  EXPECT_EQ(ap_skew_geometry_compute(nullptr, base.get(), 4, base.get(), others, &g, &err), AP_EINVAL);
  EXPECT_EQ(ap_skew_geometry_compute(ring.get(), nullptr, 4, base.get(), others, &g, &err), AP_EINVAL);
  EXPECT_EQ(ap_skew_geometry_compute(ring.get(), base.get(), 4, nullptr, others, &g, &err), AP_EINVAL);
  EXPECT_EQ(ap_skew_geometry_compute(ring.get(), base.get(), 4, base.get(), nullptr, &g, &err), AP_EINVAL);
  EXPECT_EQ(ap_skew_geometry_compute(ring.get(), base.get(), 4, base.get(), others, nullptr, &err), AP_EINVAL);
  // client 3's window holds servers 6 and 7: not on a ring of 4
  EXPECT_EQ(ap_skew_geometry_compute(small.get(), other.get(), 4, other.get(), others, &g, &err), AP_EINVAL);
  EXPECT_NE(std::strstr(err.message, "larger ring"), nullptr) << err.message;
  EXPECT_EQ(ap_skew_logical(nullptr, 2), 0u);
  EXPECT_EQ(ap_skew_probe_logical(nullptr), 0u);
}

// A client's members as the tests drive them: per member its `others`
// and pick weight, and what each tick reports.
class Client {
 public:
  Client(const ap_skew_geometry& g, std::vector<double> others,
         std::vector<double> weights = {})
      : g_(g), others_(std::move(others)), weights_(std::move(weights)) {
    if (weights_.empty()) weights_.assign(others_.size(), 1.0);
    states_.resize(others_.size());
    calls_.assign(others_.size(), 0);
    for (auto& s : states_) ap_skew_member_state_init(&s);
    ap_skew_init(&skew_);
  }

  // One tick at `now`: this client sent own[k] calls/s to member k since
  // the last tick; each member reports rps[k] and utilization util[k]
  // (empty vectors: none).
  ap_skew_decision Tick(int64_t now, const std::vector<double>& own,
                        const std::vector<double>& rps,
                        const std::vector<double>& util) {
    std::vector<ap_skew_member> in(others_.size());
    for (size_t k = 0; k < in.size(); ++k) {
      calls_[k] += own[k] * (double)kTick / kS;
      in[k].state = &states_[k];
      in[k].calls = calls_[k];
      in[k].rps = rps.empty() ? -1 : rps[k];
      in[k].utilization = util.empty() ? -1 : util[k];
      in[k].others = others_[k];
      in[k].pick_weight = weights_[k];
    }
    ap_skew_decision d;
    ap_error err;
    EXPECT_EQ(ap_skew_tick(&skew_, &g_, in.data(), in.size(), now, &d, &err),
              AP_OK)
        << err.message;
    return d;
  }

  // A member's factor and the total pick weight with the factors.
  double factor(size_t k) const { return ap_skew_member_factor(&states_[k]); }
  double weighted_total() const {
    double t = 0;
    for (size_t k = 0; k < weights_.size(); ++k) t += weights_[k] * factor(k);
    return t;
  }
  // Shares of this client's calls with the factors applied.
  std::vector<double> shares() const {
    std::vector<double> s(weights_.size());
    for (size_t k = 0; k < s.size(); ++k) s[k] = weights_[k] * factor(k) / weighted_total();
    return s;
  }
  // Replaces the members (a new window); states of members kept.
  void SetMembers(std::vector<double> others) {
    others_ = std::move(others);
    weights_.assign(others_.size(), 1.0);
    const size_t had = states_.size();
    states_.resize(others_.size());
    calls_.resize(others_.size(), 0);
    for (size_t k = had; k < states_.size(); ++k) ap_skew_member_state_init(&states_[k]);
  }
  void SetGeometry(const ap_skew_geometry& g) { g_ = g; }

 private:
  ap_skew_geometry g_;
  std::vector<double> others_, weights_, calls_;
  std::vector<ap_skew_member_state> states_;
  ap_skew skew_;
};

// 100 x 100, minAperture 12, as the geometry above gives it.
ap_skew_geometry Overlapping() {
  ap_skew_geometry g;
  std::memset(&g, 0, sizeof g);
  g.endpoints = 100;
  g.min_aperture = 12;
  g.base_endpoints = 12;
  g.base_others = 11;
  g.widens = 1;
  return g;
}

// One member's report when this client sends `own_total` spread evenly
// over 12 members and every other client `others_rate`: its own part plus
// 11/12 of a client-rate from the others.
std::vector<double> Reports(double own_total, double others_rate) {
  return std::vector<double>(12, own_total / 12 + others_rate * 11.0 / 12);
}

TEST(SkewWidth, EqualClientsNeverMove) {
  Client c(Overlapping(), std::vector<double>(12, 11.0 / 12));
  // Reports that wander +-20% around the truth, utilizations within 4%.
  uint64_t x = 12345;
  for (int t = 0; t < 2400; ++t) {  // 10 minutes
    std::vector<double> own(12, 10), rps = Reports(120, 120), util(12);
    for (int k = 0; k < 12; ++k) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const double wobble = ((x >> 33) % 1000) / 1000.0;  // [0, 1)
      rps[k] *= 0.8 + 0.4 * wobble;
      util[k] = 0.5 * (0.98 + 0.04 * wobble);
    }
    const ap_skew_decision d = c.Tick(kT0 + t * kTick, own, rps, util);
    ASSERT_EQ(d.logical, 12u) << "tick " << t;
    ASSERT_FALSE(d.width_changed) << "tick " << t;
    ASSERT_FALSE(d.weights_changed) << "tick " << t;
    if (t > 8) {
      ASSERT_EQ(d.reason, AP_SKEW_EVEN) << ap_skew_reason_name(d.reason);
    }
  }
  for (int k = 0; k < 12; ++k) EXPECT_EQ(c.factor(k), 1.0) << "exactly 1";
}

TEST(SkewWidth, AHeavyClientWidensOnceItsReportsAreWarm) {
  Client c(Overlapping(), std::vector<double>(12, 11.0 / 12));
  const std::vector<double> own(12, 800.0 / 12);  // 8x the others' 100
  int64_t widened_at = -1;
  ap_skew_decision d;
  for (int t = 0; t < 40; ++t) {
    d = c.Tick(kT0 + t * kTick, own, Reports(800, 100), {});
    if (d.width_changed && widened_at < 0) widened_at = t * kTick;
  }
  // Rates need two ticks; reports count after 1 s; then two ticks above.
  EXPECT_GE(widened_at, AP_SKEW_WARM_NS + kTick);
  EXPECT_LE(widened_at, AP_SKEW_WARM_NS + 3 * kTick);
  EXPECT_EQ(d.reason, AP_SKEW_HEAVY);
  EXPECT_NEAR(d.ratio, 8, 1e-6);
  EXPECT_NEAR(d.others_rate, 100, 1e-6);
  EXPECT_NEAR(d.own_rate, 800, 1e-6);
  EXPECT_EQ(d.multiplier, 8);
  EXPECT_EQ(d.logical, 96u) << "8 x 12";
}

TEST(SkewWidth, NarrowsOnlyAfterTheHold) {
  Client c(Overlapping(), std::vector<double>(12, 11.0 / 12));
  int t = 0;
  ap_skew_decision d;
  for (; t < 40; ++t) {
    d = c.Tick(kT0 + t * kTick, std::vector<double>(12, 300.0 / 12),
               Reports(300, 100), {});
  }
  ASSERT_EQ(d.logical, 36u);
  // Now alike: the window stays for AP_SKEW_NARROW_HOLD_NS, then narrows.
  const int64_t alike_at = kT0 + t * kTick;
  int64_t narrowed = -1;
  for (; t < 200 && narrowed < 0; ++t) {
    d = c.Tick(kT0 + t * kTick, std::vector<double>(12, 100.0 / 12),
               Reports(100, 100), {});
    if (d.logical == 12u) narrowed = kT0 + t * kTick - alike_at;
  }
  // The documented hold is 5 s; the own-rate average takes about a second
  // to fall below the band first.
  EXPECT_EQ(AP_SKEW_NARROW_HOLD_NS, 5 * kS);
  EXPECT_GE(narrowed, 5 * kS);
  EXPECT_LE(narrowed, 8 * kS);
  EXPECT_EQ(d.reason, AP_SKEW_EVEN);
}

TEST(SkewWidth, WithinTheBandNothingMoves) {
  Client c(Overlapping(), std::vector<double>(12, 11.0 / 12));
  ap_skew_decision d;
  for (int t = 0; t < 200; ++t) {
    d = c.Tick(kT0 + t * kTick, std::vector<double>(12, 170.0 / 12),
               Reports(170, 100), {});  // ratio 1.7 < 1 + 0.75
    ASSERT_EQ(d.logical, 12u);
  }
  EXPECT_NEAR(d.ratio, 1.7, 1e-6);
}

// 8 servers, 4 clients, minAperture 2 (client 0), as the geometry above.
ap_skew_geometry Tiled() {
  ap_skew_geometry g;
  std::memset(&g, 0, sizeof g);
  g.endpoints = 8;
  g.min_aperture = 2;
  g.base_endpoints = 2;
  g.base_others = 0;
  g.widens = 1;
  return g;
}

TEST(SkewWidth, WhereWindowsTileTheClientProbesThenDecides) {
  // Client 0 at 8x (800 calls/s), the three others at 100 on their two
  // servers each.
  Client c(Tiled(), {0, 0});
  ap_skew_decision d = c.Tick(kT0, {400, 400}, {400, 400}, {});
  EXPECT_EQ(d.reason, AP_SKEW_PROBING) << "its members show nothing of the others";
  EXPECT_EQ(d.logical, 3u);
  EXPECT_TRUE(d.width_changed);
  // One endpoint more, server 2 (half of client 1's 100, 0.5 client-rate).
  c.SetMembers({0, 0, 0.5});
  int t = 1;
  for (; t < 40 && d.reason == AP_SKEW_PROBING; ++t) {
    d = c.Tick(kT0 + t * kTick, {200, 400, 200}, {200, 400, 250}, {});
  }
  EXPECT_EQ(d.reason, AP_SKEW_HEAVY);
  EXPECT_NEAR(d.others_rate, 100, 1e-6);
  EXPECT_NEAR(d.ratio, 8, 1e-6);
  EXPECT_EQ(d.logical, 8u) << "the whole ring";
  EXPECT_LE(t * kTick, AP_SKEW_WARM_NS + 2 * kTick) << "decided once warm";
}

TEST(SkewWidth, AnEqualClientProbesOnceAndRemembers) {
  Client c(Tiled(), {0, 0});
  ap_skew_decision d = c.Tick(kT0, {50, 50}, {50, 50}, {});
  ASSERT_EQ(d.reason, AP_SKEW_PROBING);
  c.SetMembers({0, 0, 0.5});
  int t = 1;
  for (; t < 40 && d.reason == AP_SKEW_PROBING; ++t) {
    d = c.Tick(kT0 + t * kTick, {25, 50, 25}, {25, 50, 75}, {});
  }
  EXPECT_EQ(d.logical, 2u) << "alike: back to the base at once";
  EXPECT_NEAR(d.ratio, 1, 1e-6);
  c.SetMembers({0, 0});
  const int64_t back = kT0 + t * kTick;
  for (; kT0 + t * kTick < back + 10 * kS; ++t) {
    d = c.Tick(kT0 + t * kTick, {50, 50}, {50, 50}, {});
    ASSERT_EQ(d.logical, 2u);
    ASSERT_EQ(d.reason, AP_SKEW_REMEMBERED);
  }
  // A rate of its own that rises is judged against what it remembers.
  for (int k = 0; k < 12; ++k, ++t) {
    d = c.Tick(kT0 + t * kTick, {200, 200}, {200, 200}, {});
  }
  EXPECT_EQ(d.logical, 8u) << "4x the others it remembers";
}

TEST(SkewWidth, TheEstimateExpiresAndTheClientProbesAgain) {
  Client c(Tiled(), {0, 0});
  ap_skew_decision d = c.Tick(kT0, {50, 50}, {50, 50}, {});
  c.SetMembers({0, 0, 0.5});
  int t = 1;
  for (; d.reason == AP_SKEW_PROBING; ++t) {
    d = c.Tick(kT0 + t * kTick, {25, 50, 25}, {25, 50, 75}, {});
  }
  c.SetMembers({0, 0});
  const int64_t estimated = kT0 + (t - 1) * kTick;
  for (; d.reason != AP_SKEW_PROBING; ++t) {
    d = c.Tick(kT0 + t * kTick, {50, 50}, {50, 50}, {});
  }
  EXPECT_GT(kT0 + (t - 1) * kTick - estimated, AP_SKEW_MEMORY_NS);
  EXPECT_LE(kT0 + (t - 1) * kTick - estimated, AP_SKEW_MEMORY_NS + kTick);
}

TEST(SkewWidth, AProbeThatSeesNoRateGivesUpForAWhile) {
  Client c(Tiled(), {0, 0});
  ap_skew_decision d = c.Tick(kT0, {50, 50}, {50, 50}, {});
  ASSERT_EQ(d.reason, AP_SKEW_PROBING);
  c.SetMembers({0, 0, 0.5});
  int t = 1;
  for (; d.reason == AP_SKEW_PROBING; ++t) {
    d = c.Tick(kT0 + t * kTick, {25, 50, 25}, {25, 50, -1}, {});  // no rate
  }
  EXPECT_EQ(d.reason, AP_SKEW_NO_ESTIMATE);
  EXPECT_EQ(d.logical, 2u);
  EXPECT_GE((t - 1) * kTick, AP_SKEW_PROBE_TIMEOUT_NS);
  EXPECT_LE((t - 1) * kTick, AP_SKEW_PROBE_TIMEOUT_NS + kTick);
  c.SetMembers({0, 0});
  const int64_t gave_up = kT0 + (t - 1) * kTick;
  for (; kT0 + t * kTick < gave_up + AP_SKEW_MEMORY_NS; ++t) {
    d = c.Tick(kT0 + t * kTick, {50, 50}, {50, 50}, {});
    ASSERT_EQ(d.reason, AP_SKEW_NO_ESTIMATE);
    ASSERT_EQ(d.logical, 2u);
  }
  d = c.Tick(kT0 + t * kTick, {50, 50}, {50, 50}, {});
  EXPECT_EQ(d.reason, AP_SKEW_PROBING);
}

TEST(SkewWidth, WithoutReportsTheWidthStays) {
  Client tiled(Tiled(), {0, 0});
  Client overlapping(Overlapping(), std::vector<double>(12, 11.0 / 12));
  for (int t = 0; t < 100; ++t) {
    ap_skew_decision d = tiled.Tick(kT0 + t * kTick, {400, 400}, {}, {});
    ASSERT_EQ(d.logical, 2u) << "no probe without reports";
    ASSERT_EQ(d.reason, AP_SKEW_NO_REPORTS);
    d = overlapping.Tick(kT0 + t * kTick, std::vector<double>(12, 80), {}, {});
    ASSERT_EQ(d.logical, 12u);
    ASSERT_EQ(d.reason, AP_SKEW_NO_REPORTS);
  }
}

TEST(SkewWidth, ReportsCountAfterTheWarmUp) {
  Client c(Overlapping(), std::vector<double>(12, 11.0 / 12));
  ap_skew_decision d;
  for (int t = 0; t * kTick < AP_SKEW_WARM_NS; ++t) {
    d = c.Tick(kT0 + t * kTick, std::vector<double>(12, 100), Reports(1200, 100), {});
    EXPECT_EQ(d.reason, AP_SKEW_WARMING) << t;
    EXPECT_EQ(d.ratio, -1);
  }
}

TEST(SkewWidth, AClientThatSendsNothingStaysAtOrReturnsToItsBase) {
  Client c(Overlapping(), std::vector<double>(12, 11.0 / 12));
  ap_skew_decision d;
  for (int t = 0; t < 20; ++t) {
    d = c.Tick(kT0 + t * kTick, std::vector<double>(12, 0), Reports(0, 100), {});
  }
  EXPECT_EQ(d.reason, AP_SKEW_NO_TRAFFIC);
  EXPECT_EQ(d.logical, 12u);
  // Heavy, then silent: narrowed after the hold, not kept wide.
  Client h(Overlapping(), std::vector<double>(12, 11.0 / 12));
  int t = 0;
  for (; t < 20; ++t) {
    d = h.Tick(kT0 + t * kTick, std::vector<double>(12, 800.0 / 12), Reports(800, 100), {});
  }
  ASSERT_EQ(d.logical, 96u);
  for (; t < 60; ++t) {
    d = h.Tick(kT0 + t * kTick, std::vector<double>(12, 0), Reports(0, 100), {});
  }
  EXPECT_EQ(d.logical, 12u);
  EXPECT_NE(d.reason, AP_SKEW_HEAVY) << "its rate's average is near 0 now";
}

TEST(SkewWidth, ModesWithoutAWindowKeepTheirWidth) {
  ap_skew_geometry g = Overlapping();
  g.widens = 0;
  Client c(g, std::vector<double>(12, 11.0 / 12));
  ap_skew_decision d;
  for (int t = 0; t < 20; ++t) {
    d = c.Tick(kT0 + t * kTick, std::vector<double>(12, 800.0 / 12),
               Reports(800, 100), {});
  }
  EXPECT_EQ(d.reason, AP_SKEW_FIXED_WIDTH);
  EXPECT_EQ(d.logical, 12u);
}

// A toy closed loop: this client is the servers' only caller; member k
// serves at capacity cap[k], so its utilization is its share / cap[k].
std::vector<double> Utilization(const Client& c, const std::vector<double>& cap) {
  std::vector<double> u = c.shares();
  for (size_t k = 0; k < u.size(); ++k) u[k] /= cap[k];
  return u;
}

TEST(SkewWeights, FactorsEvenTheUtilizationAndKeepTheTotal) {
  ap_skew_geometry g = Overlapping();
  g.widens = 0;
  const std::vector<double> cap = {1, 1, 0.5, 0.25};
  Client c(g, {0.9, 0.9, 0.9, 0.9}, {1, 2, 1, 1});
  const double total = c.weighted_total();
  for (int t = 0; t < 400; ++t) {
    c.Tick(kT0 + t * kTick, {10, 10, 10, 10}, {}, Utilization(c, cap));
    ASSERT_NEAR(c.weighted_total(), total, 1e-9) << t;
  }
  const std::vector<double> u = Utilization(c, cap);
  double lo = u[0], hi = u[0];
  for (double x : u) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  // Settled: every member within 1% of the mean (plus the eps), so the
  // spread is a few percent at most.
  EXPECT_LT(hi / lo, 1.03) << hi << " / " << lo;
  // Shares follow the capacities 1 : 1 : 0.5 : 0.25.
  const std::vector<double> s = c.shares();
  EXPECT_NEAR(s[0] / s[2], 2, 0.1);
  EXPECT_NEAR(s[0] / s[3], 4, 0.2);
}

TEST(SkewWeights, MembersWithinTheDeadbandAreLeftAlone) {
  Client c(Overlapping(), {0.9, 0.9, 0.9});
  for (int t = 0; t < 100; ++t) {
    const ap_skew_decision d =
        c.Tick(kT0 + t * kTick, {10, 10, 10}, {}, {0.50, 0.52, 0.49});
    ASSERT_FALSE(d.weights_changed);
  }
  for (int k = 0; k < 3; ++k) EXPECT_EQ(c.factor(k), 1.0);
}

TEST(SkewWeights, OneReportingMemberOrNoneMovesNothing) {
  Client c(Overlapping(), {0.9, 0.9, 0.9});
  for (int t = 0; t < 50; ++t) {
    c.Tick(kT0 + t * kTick, {10, 10, 10}, {}, {0.9, -1, -1});
  }
  for (int k = 0; k < 3; ++k) EXPECT_EQ(c.factor(k), 1.0);
}

TEST(SkewWeights, FactorsStayWithinTheirBounds) {
  ap_skew_geometry g = Overlapping();
  g.widens = 0;
  Client c(g, {0.9, 0.9});
  for (int t = 0; t < 2000; ++t) {
    // A member that reports full load whatever it gets.
    c.Tick(kT0 + t * kTick, {10, 10}, {}, {1.0, 0.0});
  }
  EXPECT_GE(c.factor(0), AP_SKEW_FACTOR_MIN);
  EXPECT_LE(c.factor(1), AP_SKEW_FACTOR_MAX);
  EXPECT_GT(c.shares()[1], 0.9);
}

TEST(Skew, BadArgumentsChangeNothing) {
  ap_skew s;
  ap_skew_init(&s);
  const ap_skew_geometry g = Overlapping();
  ap_skew_member_state st;
  ap_skew_member_state_init(&st);
  ap_skew_member m = {&st, 0, -1, -1, 0.5, 1};
  ap_skew_decision d;
  ap_error err;
  EXPECT_EQ(ap_skew_tick(nullptr, &g, &m, 1, kT0, &d, &err), AP_EINVAL);
  EXPECT_EQ(ap_skew_tick(&s, nullptr, &m, 1, kT0, &d, &err), AP_EINVAL);
  EXPECT_EQ(ap_skew_tick(&s, &g, &m, 1, kT0, nullptr, &err), AP_EINVAL);
  EXPECT_EQ(ap_skew_tick(&s, &g, nullptr, 1, kT0, &d, &err), AP_EINVAL);
  m.state = nullptr;
  EXPECT_EQ(ap_skew_tick(&s, &g, &m, 1, kT0, &d, &err), AP_EINVAL);
  EXPECT_NE(std::strstr(err.message, "members[0].state"), nullptr);
  m.state = &st;
  for (double bad : {0.0, -1.0, double{NAN}, double{INFINITY}}) {
    m.pick_weight = bad;
    EXPECT_EQ(ap_skew_tick(&s, &g, &m, 1, kT0, &d, &err), AP_EINVAL) << bad;
    EXPECT_NE(std::strstr(err.message, "pick_weight"), nullptr);
  }
  m.pick_weight = 1;
  EXPECT_EQ(s.last_ns, -1) << "nothing changed";
  ASSERT_EQ(ap_skew_tick(&s, &g, &m, 1, kT0, &d, &err), AP_OK);
  EXPECT_EQ(ap_skew_tick(&s, &g, &m, 1, kT0 - 1, &d, &err), AP_EINVAL);
  EXPECT_NE(std::strstr(err.message, "before the last tick"), nullptr);
  ASSERT_EQ(ap_skew_tick(&s, &g, nullptr, 0, kT0 + kTick, &d, &err), AP_OK)
      << "no members: the width decision alone";
  ap_skew_init(nullptr);
  ap_skew_member_state_init(nullptr);
  EXPECT_EQ(ap_skew_member_factor(nullptr), 1);
  EXPECT_EQ(ap_skew_member_rate(nullptr), -1);
}

TEST(Skew, ReasonNames) {
  const char* names[] = {"off",        "no_reports", "no_traffic",
                         "even",       "heavy",      "probing",
                         "remembered", "no_estimate", "fixed_width",
                         "warming"};
  ASSERT_EQ(sizeof names / sizeof names[0], (size_t)AP_SKEW_REASON_COUNT);
  for (int r = 0; r < AP_SKEW_REASON_COUNT; ++r) {
    EXPECT_STREQ(ap_skew_reason_name(static_cast<ap_skew_reason>(r)), names[r]);
  }
  EXPECT_STREQ(ap_skew_reason_name(AP_SKEW_REASON_COUNT), "unknown");
}

}  // namespace
