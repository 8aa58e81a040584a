// The stable plan (ap_stable.h) against a brute-force computation of its
// definition: membership by scanning every point (no sorting, no binary
// search), balance and the matrix-scaling form checked on the shares, and
// the churn bounds the header promises checked on real changes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ap_error.h"
#include "policy/core/stable/ap_stable.h"
#include "policy/core/stable/ap_stable_testing.h"
#include "tests/core/test_util.h"

namespace {

struct PlanDeleter {
  void operator()(ap_stable_plan *p) const { ap_stable_plan_destroy(p); }
};
using Plan = std::unique_ptr<ap_stable_plan, PlanDeleter>;

std::vector<uint64_t> Keys(uint64_t first, size_t count) {
  std::vector<uint64_t> keys;
  for (size_t k = 0; k < count; ++k) keys.push_back(ap_stable_ordinal_key(first + k));
  return keys;
}

Plan MakePlan(const std::vector<uint64_t> &endpoints,
              const std::vector<uint64_t> &clients, uint32_t min_aperture,
              const std::vector<double> &weights = {}) {
  ap_stable_plan *p = nullptr;
  ap_error err;
  ap_error_clear(&err);
  EXPECT_EQ(ap_stable_plan_create(endpoints.data(),
                                  weights.empty() ? nullptr : weights.data(),
                                  endpoints.size(), clients.data(), clients.size(),
                                  min_aperture, &p, &err),
            AP_OK)
      << err.message;
  return Plan(p);
}

// Clockwise distance from a to b on the 64-bit ring.
uint64_t Clockwise(uint64_t from, uint64_t to) { return to - from; }

// Membership from the definition, by exhaustive scans.
std::vector<std::set<uint32_t>> BruteMembership(const std::vector<uint64_t> &ek,
                                                const std::vector<uint64_t> &ck,
                                                uint32_t min_aperture) {
  const size_t n = ek.size(), c = ck.size();
  std::vector<std::set<uint32_t>> rows(c);
  // Coverage: the first distinct clients clockwise at or after the
  // endpoint's point (ties: lower client index first).
  for (size_t s = 0; s < n; ++s) {
    const uint64_t at = ap_stable_endpoint_point(ek[s]);
    std::vector<std::pair<uint64_t, uint32_t>> order;  // (distance, client)
    for (size_t i = 0; i < c; ++i)
      for (uint32_t v = 0; v < AP_STABLE_POINTS; ++v)
        order.push_back({Clockwise(at, ap_stable_client_point(ck[i], v)), (uint32_t)i});
    std::sort(order.begin(), order.end());
    const uint32_t want = std::min<uint32_t>(ap_stable_cover_count(ek[s]), (uint32_t)c);
    std::set<uint32_t> got;
    for (const auto &o : order) {
      if (got.size() == want) break;
      got.insert(o.second);
    }
    for (uint32_t i : got) rows[i].insert((uint32_t)s);
  }
  // Walk: the first A endpoints clockwise at or after the client's point 0.
  const size_t a = std::min<size_t>(min_aperture, n);
  for (size_t i = 0; i < c; ++i) {
    const uint64_t at = ap_stable_client_point(ck[i], 0);
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (size_t s = 0; s < n; ++s)
      order.push_back({Clockwise(at, ap_stable_endpoint_point(ek[s])), (uint32_t)s});
    std::sort(order.begin(), order.end());
    for (size_t k = 0; k < a; ++k) rows[i].insert(order[k].second);
  }
  return rows;
}

std::set<uint32_t> Row(const ap_stable_plan *p, size_t client) {
  const uint32_t *e = ap_stable_plan_row_endpoints(p, client);
  return std::set<uint32_t>(e, e + ap_stable_plan_row_size(p, client));
}

// Sessions as (client key, endpoint key) pairs.
std::set<std::pair<uint64_t, uint64_t>> Sessions(const ap_stable_plan *p,
                                                 const std::vector<uint64_t> &ek,
                                                 const std::vector<uint64_t> &ck) {
  std::set<std::pair<uint64_t, uint64_t>> out;
  for (size_t i = 0; i < ck.size(); ++i)
    for (uint32_t s : Row(p, i)) out.insert({ck[i], ek[s]});
  return out;
}

size_t Changed(const std::set<std::pair<uint64_t, uint64_t>> &a,
               const std::set<std::pair<uint64_t, uint64_t>> &b) {
  size_t d = 0;
  for (const auto &x : a) d += b.count(x) == 0;
  for (const auto &x : b) d += a.count(x) == 0;
  return d;
}

size_t SessionsOf(const std::set<std::pair<uint64_t, uint64_t>> &s, uint64_t key,
                  bool endpoint) {
  size_t k = 0;
  for (const auto &x : s) k += (endpoint ? x.second : x.first) == key;
  return k;
}

struct Cell {
  size_t n, c;
  uint32_t a;
};
const Cell kCells[] = {{1, 1, 12},  {5, 3, 12},   {12, 1, 3},  {40, 7, 12},
                       {50, 50, 12}, {64, 200, 12}, {97, 13, 5}, {150, 9, 12}};

TEST(StablePlan, MembershipEqualsBruteForce) {
  for (const Cell &cell : kCells) {
    const auto ek = Keys(1000, cell.n), ck = Keys(0, cell.c);
    Plan plan = MakePlan(ek, ck, cell.a);
    ASSERT_NE(plan, nullptr);
    const auto brute = BruteMembership(ek, ck, cell.a);
    for (size_t i = 0; i < cell.c; ++i) {
      EXPECT_EQ(Row(plan.get(), i), brute[i])
          << "n=" << cell.n << " c=" << cell.c << " client " << i;
    }
  }
}

TEST(StablePlan, RowsAreSortedUniqueAtLeastAAndSharesSumToOne) {
  for (const Cell &cell : kCells) {
    Plan plan = MakePlan(Keys(7, cell.n), Keys(3, cell.c), cell.a);
    for (size_t i = 0; i < cell.c; ++i) {
      const size_t size = ap_stable_plan_row_size(plan.get(), i);
      const uint32_t *e = ap_stable_plan_row_endpoints(plan.get(), i);
      const double *w = ap_stable_plan_row_shares(plan.get(), i);
      EXPECT_GE(size, std::min<size_t>(cell.a, cell.n));
      double sum = 0;
      for (size_t k = 0; k < size; ++k) {
        if (k > 0) {
          EXPECT_LT(e[k - 1], e[k]);
        }
        EXPECT_LT(e[k], cell.n);
        EXPECT_GT(w[k], 0.0);
        sum += w[k];
      }
      EXPECT_NEAR(sum, 1.0, 1e-12);
    }
  }
}

// No endpoint's expected load (clients sending 1 each, split by share) is
// above its target by more than the tolerance (the stop rule is one-sided),
// recomputed here from the shares.
void ExpectBalanced(const ap_stable_plan *plan, size_t n, size_t c,
                    const std::vector<double> &weights, double tolerance) {
  std::vector<double> load(n, 0.0);
  for (size_t i = 0; i < c; ++i) {
    const uint32_t *e = ap_stable_plan_row_endpoints(plan, i);
    const double *w = ap_stable_plan_row_shares(plan, i);
    for (size_t k = 0; k < ap_stable_plan_row_size(plan, i); ++k) load[e[k]] += w[k];
  }
  double weight_sum = 0;
  for (size_t s = 0; s < n; ++s) weight_sum += weights.empty() ? 1.0 : weights[s];
  double worst = 0;
  for (size_t s = 0; s < n; ++s) {
    const double target = (double)c * (weights.empty() ? 1.0 : weights[s]) / weight_sum;
    worst = std::max(worst, load[s] / target);
  }
  EXPECT_LE(worst, 1.0 + tolerance) << "n=" << n << " c=" << c;
  EXPECT_NEAR(worst, ap_stable_plan_load_max(plan), 1e-9);
}

TEST(StablePlan, ExpectedLoadIsBalancedOverAGrid) {
  for (size_t n : {50, 83, 120, 200, 300})
    for (size_t c : {7, 12, 25, 60, 150, 300}) {
      Plan plan = MakePlan(Keys(1u << 20, n), Keys(0, c), 12);
      ExpectBalanced(plan.get(), n, c, {}, AP_STABLE_TOLERANCE + 1e-9);
    }
}

// The scaling stops once no endpoint is above its target by more than the
// tolerance. This fleet has endpoints that fill only asymptotically: a stop
// rule that also waited for every endpoint below its target ran all
// AP_STABLE_MAX_ROUNDS (500) rounds here; the one-sided rule takes 35.
TEST(StablePlan, ScalingStopsOnceNoEndpointIsOverTarget) {
  Plan plan = MakePlan(Keys(1u << 24, 20000), Keys(0, 2000), 12);
  ASSERT_NE(plan, nullptr);
  EXPECT_LE(ap_stable_plan_load_max(plan.get()), 1 + AP_STABLE_TOLERANCE + 1e-9);
  EXPECT_LT(ap_stable_plan_rounds(plan.get()), 100u);
}

TEST(StablePlan, WeightedEndpointsGetLoadInProportion) {
  std::vector<double> weights;
  for (size_t s = 0; s < 60; ++s) weights.push_back(s % 3 == 0 ? 2.0 : 1.0);
  Plan plan = MakePlan(Keys(500, 60), Keys(0, 20), 12, weights);
  ExpectBalanced(plan.get(), 60, 20, weights, AP_STABLE_TOLERANCE + 1e-9);
}

// Matrix scaling gives share(i, s) = u_i v_s: for clients i, j sharing
// endpoints s and t, share(i,s)/share(i,t) == share(j,s)/share(j,t).
TEST(StablePlan, SharesHaveTheScalingForm) {
  Plan plan = MakePlan(Keys(99, 80), Keys(0, 30), 12);
  std::vector<std::map<uint32_t, double>> rows(30);
  for (size_t i = 0; i < 30; ++i) {
    const uint32_t *e = ap_stable_plan_row_endpoints(plan.get(), i);
    const double *w = ap_stable_plan_row_shares(plan.get(), i);
    for (size_t k = 0; k < ap_stable_plan_row_size(plan.get(), i); ++k) rows[i][e[k]] = w[k];
  }
  size_t checked = 0;
  for (size_t i = 0; i < 30; ++i)
    for (size_t j = i + 1; j < 30; ++j) {
      std::vector<uint32_t> both;
      for (const auto &x : rows[i])
        if (rows[j].count(x.first)) both.push_back(x.first);
      for (size_t k = 1; k < both.size(); ++k) {
        const uint32_t s = both[0], t = both[k];
        EXPECT_NEAR(rows[i][s] / rows[i][t], rows[j][s] / rows[j][t], 1e-9);
        ++checked;
      }
    }
  EXPECT_GT(checked, 50u);
}

// The membership of a client does not depend on the order of the inputs:
// every client computes the same plan from the same keys.
TEST(StablePlan, InputOrderDoesNotMatter) {
  auto ek = Keys(10, 70), ck = Keys(0, 15);
  Plan a = MakePlan(ek, ck, 12);
  auto ek2 = ek, ck2 = ck;
  std::reverse(ek2.begin(), ek2.end());
  std::rotate(ck2.begin(), ck2.begin() + 4, ck2.end());
  Plan b = MakePlan(ek2, ck2, 12);
  EXPECT_EQ(Sessions(a.get(), ek, ck), Sessions(b.get(), ek2, ck2));
}

// Shares are a function of the key sets alone, bit for bit: any
// permutation of the endpoints (with their weights) and of the clients
// gives the same double for every (client key, endpoint key) pair.
std::map<std::pair<uint64_t, uint64_t>, double> SharesByKey(
    const ap_stable_plan *p, const std::vector<uint64_t> &ek,
    const std::vector<uint64_t> &ck) {
  std::map<std::pair<uint64_t, uint64_t>, double> out;
  for (size_t i = 0; i < ck.size(); ++i) {
    const uint32_t *e = ap_stable_plan_row_endpoints(p, i);
    const double *sh = ap_stable_plan_row_shares(p, i);
    for (size_t k = 0; k < ap_stable_plan_row_size(p, i); ++k)
      out[{ck[i], ek[e[k]]}] = sh[k];
  }
  return out;
}

TEST(StablePlan, SharesAreBitIdenticalForAnyInputOrder) {
  std::mt19937_64 rng(20261202);
  for (const Cell &cell : {Cell{70, 15, 12}, Cell{300, 25, 12}, Cell{40, 200, 5},
                           Cell{1, 3, 12}, Cell{9, 1, 4}}) {
    const auto ek = Keys(10, cell.n), ck = Keys(0, cell.c);
    std::vector<double> w;
    for (size_t s = 0; s < cell.n; ++s) w.push_back(1.0 + (double)(rng() % 1000) / 250.0);
    Plan base = MakePlan(ek, ck, cell.a, w);
    ASSERT_NE(base, nullptr);
    const auto want = SharesByKey(base.get(), ek, ck);
    const double want_load = ap_stable_plan_load_max(base.get());
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<size_t> pe(cell.n), pc(cell.c);
      for (size_t k = 0; k < cell.n; ++k) pe[k] = k;
      for (size_t k = 0; k < cell.c; ++k) pc[k] = k;
      if (trial == 0) {
        std::reverse(pe.begin(), pe.end());
        std::reverse(pc.begin(), pc.end());
      } else {
        std::shuffle(pe.begin(), pe.end(), rng);
        std::shuffle(pc.begin(), pc.end(), rng);
      }
      std::vector<uint64_t> ek2, ck2;
      std::vector<double> w2;
      for (size_t k : pe) {
        ek2.push_back(ek[k]);
        w2.push_back(w[k]);
      }
      for (size_t k : pc) ck2.push_back(ck[k]);
      Plan other = MakePlan(ek2, ck2, cell.a, w2);
      ASSERT_NE(other, nullptr);
      const auto got = SharesByKey(other.get(), ek2, ck2);
      ASSERT_EQ(got.size(), want.size()) << "n=" << cell.n << " trial " << trial;
      for (const auto &kv : want) {
        auto it = got.find(kv.first);
        ASSERT_NE(it, got.end());
        EXPECT_EQ(std::memcmp(&it->second, &kv.second, sizeof(double)), 0)
            << "n=" << cell.n << " c=" << cell.c << " trial " << trial << ": "
            << it->second << " vs " << kv.second;
      }
      const double load = ap_stable_plan_load_max(other.get());
      EXPECT_EQ(std::memcmp(&load, &want_load, sizeof(double)), 0);
      EXPECT_EQ(ap_stable_plan_rounds(other.get()), ap_stable_plan_rounds(base.get()));
      for (size_t i = 0; i < cell.c; ++i)
        EXPECT_EQ(ap_stable_plan_client_start(other.get(), i),
                  ap_stable_client_point(ck2[i], 0));
    }
  }
}

// One endpoint leaving or joining changes at most twice the sessions it
// had (or gets): its own, plus one replacement per walk that held it.
TEST(StablePlan, OneEndpointChangeMovesAtMostTwiceItsSessions) {
  for (size_t c : {7, 30, 120}) {
    const auto ek = Keys(4000, 90), ck = Keys(0, c);
    Plan before = MakePlan(ek, ck, 12);
    const auto s0 = Sessions(before.get(), ek, ck);
    for (size_t r : {0, 31, 89}) {
      auto fewer = ek;
      fewer.erase(fewer.begin() + r);
      Plan after = MakePlan(fewer, ck, 12);
      const size_t own = SessionsOf(s0, ek[r], true);
      EXPECT_GT(own, 0u);
      EXPECT_LE(Changed(s0, Sessions(after.get(), fewer, ck)), 2 * own)
          << "c=" << c << " removed " << r;
    }
    auto more = ek;
    more.push_back(ap_stable_ordinal_key(999999));
    Plan after = MakePlan(more, ck, 12);
    const auto s1 = Sessions(after.get(), more, ck);
    EXPECT_LE(Changed(s0, s1), 2 * SessionsOf(s1, more.back(), true)) << "c=" << c;
  }
}

// One client joining or leaving: its own sessions plus the coverage it
// takes over or hands on (one close and one open per covered endpoint).
TEST(StablePlan, OneClientChangeMovesAtMostTwiceItsSessions) {
  for (size_t c : {7, 30, 120}) {
    const auto ek = Keys(4000, 90), ck = Keys(0, c);
    Plan before = MakePlan(ek, ck, 12);
    const auto s0 = Sessions(before.get(), ek, ck);
    auto more = ck;
    more.push_back(ap_stable_ordinal_key(777777));
    Plan joined = MakePlan(ek, more, 12);
    const auto s1 = Sessions(joined.get(), ek, more);
    EXPECT_LE(Changed(s0, s1), 2 * SessionsOf(s1, more.back(), false)) << "c=" << c;
    auto fewer = ck;
    fewer.erase(fewer.begin() + (long)(c / 2));
    Plan left = MakePlan(ek, fewer, 12);
    EXPECT_LE(Changed(s0, Sessions(left.get(), ek, fewer)),
              2 * SessionsOf(s0, ck[c / 2], false))
        << "c=" << c;
  }
}

TEST(StablePlan, ReportsBadInputByName) {
  const auto ek = Keys(0, 4), ck = Keys(0, 2);
  ap_stable_plan *p = nullptr;
  ap_error err;
  auto expect = [&](int rc, const char *needle, int got) {
    EXPECT_EQ(got, rc) << needle;
    EXPECT_NE(std::string(err.message).find(needle), std::string::npos) << err.message;
    EXPECT_EQ(p, nullptr);
  };
  expect(AP_EINVAL, "endpoint_keys",
         ap_stable_plan_create(nullptr, nullptr, 4, ck.data(), 2, 12, &p, &err));
  expect(AP_EINVAL, "client_keys",
         ap_stable_plan_create(ek.data(), nullptr, 4, nullptr, 2, 12, &p, &err));
  expect(AP_ERANGE, "endpoints",
         ap_stable_plan_create(ek.data(), nullptr, 0, ck.data(), 2, 12, &p, &err));
  expect(AP_ERANGE, "clients",
         ap_stable_plan_create(ek.data(), nullptr, 4, ck.data(), 0, 12, &p, &err));
  {
    // More clients than a plan is built for (AP_STABLE_MAX_CLIENTS: about
    // 1 KiB each at a build's peak) is refused before any allocation.
    const auto many = Keys(0, AP_STABLE_MAX_CLIENTS + 1);
    expect(AP_ERANGE, "clients is 200001, must be in [1, 200000]",
           ap_stable_plan_create(ek.data(), nullptr, 4, many.data(), many.size(), 12,
                                 &p, &err));
  }
  expect(AP_EINVAL, "min_aperture",
         ap_stable_plan_create(ek.data(), nullptr, 4, ck.data(), 2, 0, &p, &err));
  const double bad[] = {1, 1, NAN, 1};
  expect(AP_EINVAL, "weights[2]",
         ap_stable_plan_create(ek.data(), bad, 4, ck.data(), 2, 12, &p, &err));
  const uint64_t dup_e[] = {5, 6, 7, 6};
  expect(AP_EINVAL, "endpoint_keys[1] and endpoint_keys[3]",
         ap_stable_plan_create(dup_e, nullptr, 4, ck.data(), 2, 12, &p, &err));
  const uint64_t dup_c[] = {9, 9};
  expect(AP_EINVAL, "client_keys[0] and client_keys[1]",
         ap_stable_plan_create(ek.data(), nullptr, 4, dup_c, 2, 12, &p, &err));
  EXPECT_EQ(ap_stable_plan_create(ek.data(), nullptr, 4, ck.data(), 2, 12, nullptr, &err),
            AP_EINVAL);
  // Accessors accept NULL and out-of-range clients.
  EXPECT_EQ(ap_stable_plan_row_size(nullptr, 0), 0u);
  EXPECT_EQ(ap_stable_plan_row_endpoints(nullptr, 0), nullptr);
  EXPECT_EQ(ap_stable_plan_load_max(nullptr), 0.0);
  Plan plan = MakePlan(ek, ck, 12);
  EXPECT_EQ(ap_stable_plan_row_size(plan.get(), 2), 0u);
  EXPECT_EQ(ap_stable_plan_row_shares(plan.get(), 2), nullptr);
}

// The aperture of stable mode is the plan's row, with pick weights in
// proportion to the shares; the client's offset is its walk's start.
TEST(StableMode, ApertureIsThePlanRow) {
  auto ring = aptest::MakeRing(40);
  std::vector<uint64_t> ek, ck = Keys(0, 9);
  for (size_t s = 0; s < 40; ++s) ek.push_back(ap_stable_ordinal_key(s));
  Plan plan = MakePlan(ek, ck, 12);
  for (uint32_t i = 0; i < 9; ++i) {
    ap_subset_params p = aptest::Params(AP_MODE_STABLE, i, 9, 12);
    p.stable_plan = plan.get();
    auto a = aptest::Compute(ring.get(), p);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(ap_aperture_mode(a.get()), AP_MODE_STABLE);
    ASSERT_EQ(ap_aperture_count(a.get()), ap_stable_plan_row_size(plan.get(), i));
    const uint32_t *e = ap_stable_plan_row_endpoints(plan.get(), i);
    const double *w = ap_stable_plan_row_shares(plan.get(), i);
    for (size_t k = 0; k < ap_aperture_count(a.get()); ++k) {
      const ap_member *m = ap_aperture_member(a.get(), k);
      EXPECT_EQ(m->index, e[k]);
      EXPECT_NEAR(m->pick_weight / (double)ap_aperture_count(a.get()), w[k], 1e-12);
    }
    EXPECT_EQ(ap_aperture_offset(a.get()),
              (double)(ap_stable_client_point(ck[i], 0) >> 11) * 0x1.0p-53);
  }
}

TEST(StableMode, PlanOfAnotherShapeIsRejected) {
  auto ring = aptest::MakeRing(40);
  Plan plan = MakePlan(Keys(0, 41), Keys(0, 9), 12);
  ap_subset_params p = aptest::Params(AP_MODE_STABLE, 0, 9, 12);
  p.stable_plan = plan.get();
  ap_aperture *a = nullptr;
  ap_error err;
  EXPECT_EQ(ap_aperture_compute(ring.get(), &p, &a, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("params.stable_plan"), std::string::npos);
  EXPECT_EQ(a, nullptr);
}

TEST(StableMode, NameParses) {
  ap_mode mode;
  ap_error err;
  ASSERT_EQ(ap_mode_parse("stable", &mode, &err), AP_OK);
  EXPECT_EQ(mode, AP_MODE_STABLE);
  EXPECT_STREQ(ap_mode_name(AP_MODE_STABLE), "stable");
  EXPECT_EQ(ap_mode_parse("stabel", &mode, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("stable"), std::string::npos);
}

}  // namespace

namespace {

// Health widening keeps every member of the plan's row and adds endpoints
// until enough are ready, as in the window modes.
TEST(StableMode, WideningKeepsTheRowAndReachesMinReady) {
  auto ring = aptest::MakeRing(60);
  auto plan = aptest::OrdinalPlan(60, 20, 12);
  ap_subset_params p = aptest::Params(AP_MODE_STABLE, 3, 20, 12);
  p.stable_plan = plan.get();
  auto base = aptest::Compute(ring.get(), p);
  ASSERT_NE(base, nullptr);
  std::vector<uint8_t> ready(60, 1);
  for (size_t k = 0; k < ap_aperture_count(base.get()); ++k)
    ready[ap_aperture_member(base.get(), k)->index] = 0;  // every member down
  ap_aperture *wide = nullptr;
  ap_error err;
  ASSERT_EQ(ap_aperture_widen(ring.get(), base.get(), ready.data(), 4, &wide, &err), AP_OK)
      << err.message;
  aptest::Aperture owned(wide);
  EXPECT_EQ(ap_aperture_count(wide), ap_aperture_count(base.get()) + 4);
  EXPECT_EQ(ap_aperture_widened_count(wide), 4u);
  for (size_t k = 0; k < ap_aperture_count(base.get()); ++k)
    EXPECT_TRUE(ap_aperture_find(wide, ap_aperture_member(base.get(), k)->index, nullptr));
  for (size_t k = ap_aperture_count(base.get()); k < ap_aperture_count(wide); ++k)
    EXPECT_TRUE(ready[ap_aperture_member(wide, k)->index]);
}

}  // namespace
