// Runs the real simulator (//interop:sim, a data dependency) as a child
// process and checks its JSON output, its tables and exit codes. Expected
// values are worked out by hand from the aperture definition (see each
// test) or computed from it by the independent oracle (tests/oracle).
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/oracle/aperture_oracle.h"
#include "tests/sim/mini_json.h"
#include "tests/sim/run_sim.h"

namespace {

using run_sim::Result;
using run_sim::RunSim;

mini_json::Value RunJson(const std::vector<std::string>& args) {
  Result r = RunSim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return mini_json::Parse(r.out);
}

void ExpectEndpoints(const mini_json::Value& v,
                     const std::vector<std::pair<int, double>>& want) {
  const auto& eps = v["endpoints"];
  ASSERT_EQ(eps.size(), want.size());
  for (size_t k = 0; k < want.size(); k++) {
    EXPECT_EQ(eps[k]["index"].num(), want[k].first) << "endpoint " << k;
    EXPECT_NEAR(eps[k]["weight"].num(), want[k].second, 1e-9) << "endpoint " << k;
  }
}

TEST(Sim, SubsetOfACoordinateWithPartialEdges) {
  // N=10, C=4, A=3: width = ceil(3*4/10)/4 = 2/4; client 1: offset 1/4.
  // Window [0.25, 0.75): arc 2 = [0.2, 0.3) half covered, arcs 3..6 whole,
  // arc 7 = [0.7, 0.8) half covered.
  auto v = RunJson({"subset", "--servers", "10", "--peers", "4", "--index",
                    "1", "--min-aperture", "3", "--json"});
  EXPECT_NEAR(v["offset"].num(), 0.25, 1e-12);
  EXPECT_NEAR(v["width"].num(), 0.5, 1e-12);
  ExpectEndpoints(v, {{2, 0.5}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 0.5}});
}

TEST(Sim, SubsetOfAnExplicitWrappingWindow) {
  // [0.95, 1.15) on 10 arcs: half of arc 9, all of arc 0, half of arc 1,
  // listed from the window's start.
  auto v = RunJson({"subset", "--servers", "10", "--offset", "0.95",
                    "--width", "0.2", "--json"});
  EXPECT_NEAR(v["offset"].num(), 0.95, 1e-12);
  EXPECT_NEAR(v["width"].num(), 0.2, 1e-12);
  ExpectEndpoints(v, {{9, 0.5}, {0, 1}, {1, 0.5}});
}

TEST(Sim, SubsetSmallRingUsesWholeRing) {
  // N=10 < 12: A = 10, C = 3: width = min(1, ceil(30/10)/3) = 1, so all ten
  // endpoints are members with full intersection.
  auto v = RunJson({"subset", "--servers", "10", "--peers", "3", "--index",
                    "2", "--json"});
  EXPECT_NEAR(v["offset"].num(), 2.0 / 3, 1e-12);
  EXPECT_NEAR(v["width"].num(), 1.0, 1e-12);
  const auto& eps = v["endpoints"];
  ASSERT_EQ(eps.size(), 10u);
  double total = 0;
  for (size_t k = 0; k < eps.size(); k++) total += eps[k]["weight"].num();
  EXPECT_NEAR(total, 10.0, 1e-9);
}

TEST(Sim, ConnectionsSeed001) {
  auto v = RunJson({"connections", "--json"});
  EXPECT_EQ(v["clients"].num(), 500);
  EXPECT_EQ(v["servers"].num(), 1000);
  EXPECT_EQ(v["mesh"].num(), 500000);
  // 500 clients x 1000 servers, A = 20: width = ceil(20*500/1000)/500 =
  // 10/500, exactly 20 whole arcs per client.
  EXPECT_EQ(v["aperture"].num(), 10000);
}

TEST(Sim, ConnectionsFlagsChangeTheNumbers) {
  auto v = RunJson({"connections", "--clients", "10", "--servers", "40",
                    "--subset", "4", "--json"});
  EXPECT_EQ(v["mesh"].num(), 400);
  // width = ceil(4*10/40)/10 = 1/10 = 4 whole arcs per client.
  EXPECT_EQ(v["aperture"].num(), 40);
}

TEST(Sim, VnodesRowsWithCvDecreasingInV) {
  auto v = RunJson({"vnodes", "--json"});
  const auto& rows = v["rows"];
  ASSERT_EQ(rows.size(), 6u);
  const double want_v[] = {1, 2, 4, 16, 64, 256};
  for (size_t i = 0; i < rows.size(); i++) {
    EXPECT_EQ(rows[i]["v"].num(), want_v[i]);
    EXPECT_GT(rows[i]["imbalance"].num(), 1.0);
    if (i > 0) {
      EXPECT_LT(rows[i]["cv"].num(), rows[i - 1]["cv"].num()) << "V=" << want_v[i];
    }
  }
  // 256x the vnodes: CV falls by about sqrt(256) = 16 (between 8x and 32x).
  double ratio = rows[0]["cv"].num() / rows[5]["cv"].num();
  EXPECT_GT(ratio, 8);
  EXPECT_LT(ratio, 32);
}

TEST(Sim, VdcValues) {
  auto v = RunJson({"vdc", "--count", "6", "--json"});
  const double want[] = {0, 0.5, 0.25, 0.75, 0.125, 0.625};
  ASSERT_EQ(v["values"].size(), 6u);
  for (size_t i = 0; i < 6; i++) EXPECT_EQ(v["values"][i].num(), want[i]);
}

const mini_json::Value& Mode(const mini_json::Value& modes,
                             const std::string& name) {
  for (size_t i = 0; i < modes.size(); i++)
    if (modes[i]["mode"].str == name) return modes[i];
  throw std::runtime_error("no mode " + name);
}

TEST(Sim, BalanceContinuousAndSmoothEvenRandomUneven) {
  auto v = RunJson({"balance", "--json"});
  for (const char* scenario : {"single", "multi"}) {
    const auto& modes = v[scenario]["modes"];
    ASSERT_EQ(modes.size(), 7u);
    // Continuous covers every ring point equally for each service, so the
    // expected load is even; smooth normalises by coverage
    // too. Both to 1e-9.
    for (const char* even : {"continuous", "smooth", "mesh"}) {
      EXPECT_NEAR(Mode(modes, even)["load"]["max_mean"].num(), 1.0, 1e-9)
          << scenario << " " << even;
      EXPECT_NEAR(Mode(modes, even)["load"]["min_mean"].num(), 1.0, 1e-9)
          << scenario << " " << even;
    }
    EXPECT_GT(Mode(modes, "random")["load"]["cv"].num(), 0.05) << scenario;
    // Stable scales shares until no server is above its target by more
    // than AP_STABLE_TOLERANCE (1e-3, ap_stable.h); services add up within
    // it too. The stop rule is one-sided, so a server may stay below its
    // target (0.9989 here at worst): 0.99 bounds that.
    EXPECT_LE(Mode(modes, "stable")["load"]["max_mean"].num(), 1.001 + 1e-9) << scenario;
    EXPECT_GE(Mode(modes, "stable")["load"]["min_mean"].num(), 0.99) << scenario;
  }
  // SRE book: 300 x 300, random 30% subsets. Connections per backend are
  // Binomial(300, 0.3): mean 90, sd 7.9; the extremes of 300 such draws sit
  // near +-2.9 sd (1.26 / 0.74 of the mean). Wide bounds, fixed seeds.
  const auto& sre = Mode(v["sre"]["modes"], "random")["connections"];
  EXPECT_NEAR(sre["mean"].num(), 90, 1e-9);
  EXPECT_GT(sre["max_mean"].num(), 1.1);
  EXPECT_LT(sre["max_mean"].num(), 1.45);
  EXPECT_GT(sre["min_mean"].num(), 0.55);
  EXPECT_LT(sre["min_mean"].num(), 0.9);
}

TEST(Sim, ChurnPointMeshIsOptimalHashModIsNot) {
  auto v = RunJson({"churn", "--servers", "100", "--clients", "100",
                    "--no-grid", "--json"});
  const auto& modes = v["point"]["modes"];
  ASSERT_EQ(modes.size(), 8u);
  // Continuous at N = C = 100: width 12/100, 12 whole arcs per client:
  // 1200 sessions, 12 per server, so the optimum is 12/1200 = 1%.
  const auto& cont = Mode(modes, "continuous");
  EXPECT_EQ(cont["sessions"].num(), 1200);
  EXPECT_NEAR(cont["remove_optimum"].num(), 0.01, 1e-12);
  EXPECT_GE(cont["remove_changed"].num(), cont["remove_optimum"].num());
  // Mesh: only the removed server's sessions close, only the new one's open.
  const auto& mesh = Mode(modes, "mesh");
  EXPECT_NEAR(mesh["remove_changed"].num(), mesh["remove_optimum"].num(), 1e-12);
  EXPECT_NEAR(mesh["add_changed"].num(), mesh["add_optimum"].num(), 1e-12);
  // Hash-mod reshuffles nearly everything: more than 100% (closed + opened).
  EXPECT_GT(Mode(modes, "hash-mod")["remove_changed"].num(), 1.0);
  EXPECT_LT(cont["remove_changed"].num(),
            Mode(modes, "hash-mod")["remove_changed"].num());
}

TEST(Sim, ChurnGridFindsTheWidthJump) {
  // N = 78, C = 13: width 2/13 (12 whole arcs); at N = 77 the width jumps
  // to ceil(156/77)/13 = 3/13 = 17.8 arcs, so every client opens at least
  // 5 sessions: removal changes at least 5/12 = 41.7% of the sessions.
  auto v = RunJson({"churn", "--servers", "78", "--clients", "13",
                    "--grid-servers", "76,80", "--grid-clients", "12,14",
                    "--json"});
  const auto& cont = Mode(v["grid"]["modes"], "continuous");
  EXPECT_GE(cont["remove_worst"].num(), 5.0 / 12);
  EXPECT_EQ(cont["remove_servers"].num(), 78);
  EXPECT_EQ(cont["remove_clients"].num(), 13);
  EXPECT_GE(Mode(v["point"]["modes"], "continuous")["remove_changed"].num(),
            5.0 / 12);
}

TEST(Sim, ChurnGridMeansAndCellComparisonMatchThePoints) {
  // One cell (N = 12, C = 4, min aperture 3) with as many positions as
  // servers: the grid's removal then visits every position, exactly as the
  // point does, so its mean must equal the point's mean removal, and the
  // cell comparison must agree with the point's smooth vs continuous.
  auto v = RunJson({"churn", "--servers", "12", "--clients", "4", "--min-aperture", "3",
                    "--grid-servers", "12,12", "--grid-clients", "4,4",
                    "--grid-positions", "12", "--json"});
  const auto& grid = v["grid"]["modes"];
  const auto& point = v["point"]["modes"];
  for (const char* mode : {"continuous", "smooth", "discrete", "mesh"}) {
    EXPECT_EQ(Mode(grid, mode)["cells"].num(), 1) << mode;
    EXPECT_NEAR(Mode(grid, mode)["remove_mean"].num(), Mode(point, mode)["remove_changed"].num(),
                1e-12)
        << mode;
    EXPECT_NEAR(Mode(grid, mode)["remove_mean"].num(), Mode(grid, mode)["remove_worst"].num(),
                1e-12)
        << mode;
  }
  const auto& cmp = v["grid"]["smooth_vs_continuous"];
  EXPECT_EQ(cmp["cells"].num(), 1);
  const bool smooth_more = Mode(point, "smooth")["remove_changed"].num() >
                           Mode(point, "continuous")["remove_changed"].num() + 1e-12;
  EXPECT_EQ(cmp["smooth_more_on_removal"].num(), smooth_more ? 1 : 0);
  // At this point continuous's width jumps (125% vs 42%: README, churn-grid).
  EXPECT_FALSE(smooth_more);

  // A wider grid: every mean lies between 0 and the worst cell, and the
  // comparison counts no more cells than there are.
  auto g = RunJson({"churn", "--min-aperture", "3", "--grid-servers", "8,48",
                    "--grid-clients", "3,12", "--json"});
  const auto& gm = g["grid"]["modes"];
  ASSERT_EQ(gm.size(), 8u);  // the seven modes and hash-mod: never an empty list
  for (size_t i = 0; i < gm.size(); i++) {
    EXPECT_EQ(gm[i]["cells"].num(), 41 * 10);
    EXPECT_GT(gm[i]["remove_mean"].num(), 0);
    EXPECT_LE(gm[i]["remove_mean"].num(), gm[i]["remove_worst"].num() + 1e-12);
    EXPECT_LE(gm[i]["add_mean"].num(), gm[i]["add_worst"].num() + 1e-12);
  }
  const auto& gc = g["grid"]["smooth_vs_continuous"];
  EXPECT_EQ(gc["cells"].num(), 41 * 10);
  EXPECT_LE(gc["smooth_more_on_removal"].num(), gc["cells"].num());
  EXPECT_LE(gc["smooth_more_on_addition"].num(), gc["cells"].num());
}

TEST(Sim, HashSharesFollowWeights) {
  auto v = RunJson({"hash", "--weights", "1,2,1", "--vnodes", "1000",
                    "--keys", "100000", "--json"});
  const auto& row = v["rows"][0];
  // Same model and tolerance as tests/affinity: 4 sd ~ 0.03.
  EXPECT_NEAR(row["key_share"][0].num(), 0.25, 0.03);
  EXPECT_NEAR(row["key_share"][1].num(), 0.50, 0.03);
  EXPECT_NEAR(row["key_share"][2].num(), 0.25, 0.03);
  // A weight-1 joiner among weights 1,2,1 should take ~1/5 of the keys
  // (1000 points of 5000: sd 0.0057), member 0 leaving moves its ~1/4.
  EXPECT_NEAR(row["moved_add"].num(), 0.2, 0.03);
  EXPECT_NEAR(row["moved_remove"].num(), row["key_share"][0].num(), 1e-12);
}

// --- The placement experiment from its definition ---
//
// sim_placement.c's header and docs/simulator.md ("placement") define it:
// servers carry stable indices; "index" places them in index order on
// equal arcs, "vdc-stable" at vdc(index) with arcs to the next position
// (the ring's weights are the gaps); windows are the mode's (continuous,
// smooth) or, for the index-space width, [i/C, i/C + k/C) with k =
// ceil(A*C/(M/2)), M the smallest power of two above every index; "load ~
// arc" takes the pick weights as they are, "equal capacity" divides them
// by the arc. A removal takes out index r = 1 + k(N-1)/4 (k = 0..3,
// averaged), an addition brings index N (in index order: at ring position
// N/2). Sessions are (client, index) pairs. Everything below is computed
// from that with the oracle (tests/oracle: no core code), never from the
// simulator's own output.

// Van der Corput value of i in base 2 (bit reversal).
double Vdc(uint32_t i) {
  double v = 0, f = 0.5;
  for (; i != 0; i >>= 1, f /= 2)
    if (i & 1) v += f;
  return v;
}

struct Placement {
  const char* name;
  bool vdc;
  oracle::Mode mode;
  bool equal_capacity;
  bool index_space_width;
};

const Placement kPlacements[] = {
    {"index + continuous", false, oracle::Mode::kContinuous, false, false},
    {"index + smooth", false, oracle::Mode::kSmooth, false, false},
    {"vdc-stable + continuous", true, oracle::Mode::kContinuous, true, false},
    {"vdc-stable + smooth, load ~ arc", true, oracle::Mode::kSmooth, false, false},
    {"vdc-stable + smooth, equal capacity", true, oracle::Mode::kSmooth, true, false},
    {"vdc-stable + index-space width", true, oracle::Mode::kContinuous, true, true},
};

// Each client's members (sorted indices) and each index's expected load
// (every client sends 1, split by its weights).
struct PlacedFleet {
  std::vector<std::vector<uint32_t>> members;
  std::map<uint32_t, double> load;
  size_t total = 0;
};

PlacedFleet Place(const Placement& p, const std::vector<uint32_t>& present, uint32_t clients,
                  uint32_t a) {
  std::vector<uint32_t> order = present;  // ring index -> stable index
  std::vector<double> gaps;               // empty: equal arcs
  if (p.vdc) {
    std::sort(order.begin(), order.end(),
              [](uint32_t x, uint32_t y) { return Vdc(x) < Vdc(y); });
    for (size_t j = 0; j < order.size(); j++) {
      double next = j + 1 < order.size() ? Vdc(order[j + 1]) : 1 + Vdc(order[0]);
      gaps.push_back(next - Vdc(order[j]));
    }
  }
  double width = 1;
  if (p.index_space_width) {
    double space = 1;
    while (space <= *std::max_element(present.begin(), present.end())) space *= 2;
    double k = std::ceil(static_cast<double>(a) * clients / (space > 1 ? space / 2 : 1));
    width = k >= clients ? 1 : k / clients;
  }
  PlacedFleet f;
  for (uint32_t c = 0; c < clients; c++) {
    std::vector<oracle::Member> ms =
        p.index_space_width
            ? oracle::WindowMembers(order.size(), static_cast<double>(c) / clients, width, gaps)
            : oracle::Aperture(p.mode, order.size(), c, clients, a, gaps);
    EXPECT_FALSE(ms.empty());
    double sum = 0;
    std::vector<uint32_t> ids;
    for (const auto& m : ms) {
      sum += p.equal_capacity ? m.pick_weight / gaps[m.ring_index] : m.pick_weight;
      ids.push_back(order[m.ring_index]);
    }
    for (const auto& m : ms) {
      double w = p.equal_capacity ? m.pick_weight / gaps[m.ring_index] : m.pick_weight;
      f.load[order[m.ring_index]] += w / sum;
    }
    std::sort(ids.begin(), ids.end());
    f.total += ids.size();
    f.members.push_back(ids);
  }
  return f;
}

// Sessions closed + opened between two fleets; *had/*has: sessions of
// index x before/after.
size_t Changed(const PlacedFleet& b, const PlacedFleet& a, uint32_t x, size_t* had, size_t* has) {
  size_t diff = 0;
  *had = *has = 0;
  for (size_t c = 0; c < b.members.size(); c++) {
    std::vector<uint32_t> d;
    std::set_symmetric_difference(b.members[c].begin(), b.members[c].end(), a.members[c].begin(),
                                  a.members[c].end(), std::back_inserter(d));
    diff += d.size();
    *had += std::count(b.members[c].begin(), b.members[c].end(), x);
    *has += std::count(a.members[c].begin(), a.members[c].end(), x);
  }
  return diff;
}

struct PlacedCell {
  double remove = 0, remove_opt = 0, add = 0, add_opt = 0, load_max = 0, load_min = 0,
         per_client = 0;
};

PlacedCell PlaceCell(const Placement& p, uint32_t n, uint32_t clients, uint32_t a) {
  std::vector<uint32_t> all;
  for (uint32_t i = 0; i < n; i++) all.push_back(i);
  PlacedFleet before = Place(p, all, clients, a);
  PlacedCell out;
  double mean = 0, hi = 0, lo = 1e300;
  for (uint32_t i = 0; i < n; i++) mean += before.load[i] / n;
  for (uint32_t i = 0; i < n; i++) {
    hi = std::max(hi, before.load[i]);
    lo = std::min(lo, before.load[i]);
  }
  out.load_max = hi / mean;
  out.load_min = lo / mean;
  out.per_client = static_cast<double>(before.total) / clients;
  const double total = static_cast<double>(before.total);
  for (uint32_t k = 0; k < 4; k++) {
    uint32_t r = 1 + static_cast<uint32_t>(static_cast<uint64_t>(k) * (n - 1) / 4);
    std::vector<uint32_t> others;
    for (uint32_t i = 0; i < n; i++)
      if (i != r) others.push_back(i);
    size_t had, has;
    out.remove += Changed(before, Place(p, others, clients, a), r, &had, &has) / total / 4;
    out.remove_opt += had / total / 4;
  }
  std::vector<uint32_t> joined;  // index n at position n/2 in index order
  for (uint32_t i = 0, j = 0; i <= n; i++) joined.push_back(i == n / 2 ? n : j++);
  size_t had, has;
  out.add = Changed(before, Place(p, joined, clients, a), n, &had, &has) / total;
  out.add_opt = has / total;
  return out;
}

TEST(Sim, PlacementExperimentReportsEveryVariant) {
  auto v = RunJson({"placement", "--json"});
  const auto& vars = v["variants"];
  ASSERT_EQ(vars.size(), 7u);
  // The point (100 servers, 100 clients, A = 12), every figure of the six
  // placements on the ring against the definition.
  for (size_t i = 0; i < 6; i++) {
    const Placement& p = kPlacements[i];
    SCOPED_TRACE(p.name);
    ASSERT_EQ(vars[i]["name"].str, p.name);
    PlacedCell want = PlaceCell(p, 100, 100, 12);
    EXPECT_NEAR(vars[i]["remove_changed"].num(), want.remove, 1e-12);
    EXPECT_NEAR(vars[i]["remove_optimum"].num(), want.remove_opt, 1e-12);
    EXPECT_NEAR(vars[i]["add_changed"].num(), want.add, 1e-12);
    EXPECT_NEAR(vars[i]["add_optimum"].num(), want.add_opt, 1e-12);
    EXPECT_NEAR(vars[i]["load_max_mean"].num(), want.load_max, 1e-9);
    EXPECT_NEAR(vars[i]["load_min_mean"].num(), want.load_min, 1e-9);
    EXPECT_NEAR(vars[i]["per_client"].num(), want.per_client, 1e-12);
    EXPECT_GT(want.remove_opt, 0);
    EXPECT_GE(want.remove, want.remove_opt);
  }
  // Definitions that pin the point by hand too: index placement (100 equal
  // arcs) is exactly even under continuous and smooth; the VDC positions
  // of 0..99 leave 28 arcs of 1/64 and 72 of 1/128, and smooth's load
  // follows the arc: 100/64 and 100/128 of the mean.
  for (size_t i : {0u, 1u}) {
    EXPECT_NEAR(vars[i]["load_max_mean"].num(), 1.0, 1e-9);
    EXPECT_NEAR(vars[i]["load_min_mean"].num(), 1.0, 1e-9);
  }
  EXPECT_NEAR(vars[3]["load_max_mean"].num(), 100.0 / 64, 1e-9);
  EXPECT_NEAR(vars[3]["load_min_mean"].num(), 100.0 / 128, 1e-9);

  // The sweep (servers 50..300 step 5 and 64, 128, 256; clients 7, 10, 13,
  // 25, 50, 100, 300): what the definitions force.
  for (size_t i = 0; i < vars.size(); i++) {
    EXPECT_GE(vars[i]["sweep_remove_ratio"].num(), 1 - 1e-12) << vars[i]["name"].str;
    EXPECT_GE(vars[i]["sweep_add_ratio"].num(), 1 - 1e-12) << vars[i]["name"].str;
  }
  // Equal arcs: even everywhere.
  for (size_t i : {0u, 1u}) {
    EXPECT_NEAR(vars[i]["sweep_load_max_mean"].num(), 1.0, 1e-9) << vars[i]["name"].str;
    EXPECT_NEAR(vars[i]["sweep_load_min_mean"].num(), 1.0, 1e-9) << vars[i]["name"].str;
  }
  // Load ~ arc: with 2^k < N < 2^(k+1) the VDC arcs are 1/2^k and
  // 1/2^(k+1), so max/mean = N/2^k, min/mean = N/2^(k+1) (1 at a power of
  // two). Worst over the sweep: N = 255 (255/128) and N = 65, 130, 260
  // (65/128).
  EXPECT_NEAR(vars[3]["sweep_load_max_mean"].num(), 255.0 / 128, 1e-9);
  EXPECT_NEAR(vars[3]["sweep_load_min_mean"].num(), 65.0 / 128, 1e-9);
  // The width jump of continuous windows survives stable placement: at
  // (300, 25) the width ceil(12*25/N)/25 doubles from 1/25 to 2/25 when N
  // drops to 299, so each of the 25 windows takes in at least 7 whole new
  // arcs (no arc is longer than 1/128 after a removal, the new part is
  // 0.04 long) while the leaver had at most 2 sessions (the windows cover
  // every point once): at least 87x the optimum.
  for (size_t i : {0u, 2u}) {
    EXPECT_GT(vars[i]["sweep_remove_ratio"].num(), 50) << vars[i]["name"].str;
  }
  // Index-space width: a removal keeps M (the top index stays), so the
  // windows keep their place; only the leaver's sessions close and each
  // client that held it may open its predecessor, whose arc absorbs the
  // leaver's: at most 2x. The joins that double M (N = 64, 128, 256)
  // shrink every window: at (64, 7) k falls from 3 to 2, each client drops
  // at least 7 whole arcs of 1/64 while the joiner's arc of 1/128 is in at
  // most 3 windows: far above 2x.
  EXPECT_LE(vars[5]["sweep_remove_ratio"].num(), 2 + 1e-9);
  EXPECT_GT(vars[5]["sweep_add_ratio"].num(), 8);
  // The core's stable mode (ap_stable.h): a change moves at most twice
  // the sessions it must, no server above its target by more than
  // AP_STABLE_TOLERANCE (1e-3); the stop rule is one-sided, so servers
  // below their targets are bounded loosely (0.992 at worst in the sweep).
  const auto& stable = vars[6];
  EXPECT_EQ(stable["name"].str, "stable mode, keys of the indices");
  EXPECT_GE(stable["remove_changed"].num(), stable["remove_optimum"].num());
  EXPECT_LE(stable["remove_changed"].num(), 2 * stable["remove_optimum"].num() + 1e-12);
  EXPECT_GE(stable["add_changed"].num(), stable["add_optimum"].num());
  EXPECT_LE(stable["add_changed"].num(), 2 * stable["add_optimum"].num() + 1e-12);
  EXPECT_LE(stable["sweep_remove_ratio"].num(), 2 + 1e-9);
  EXPECT_LE(stable["sweep_add_ratio"].num(), 2 + 1e-9);
  EXPECT_LE(stable["load_max_mean"].num(), 1.001 + 1e-9);
  EXPECT_GE(stable["load_min_mean"].num(), 0.99);
  EXPECT_LE(stable["sweep_load_max_mean"].num(), 1.001 + 1e-9);
  EXPECT_GE(stable["sweep_load_min_mean"].num(), 0.99);
}

// --- Determinism ---

// A fresh directory under TEST_TMPDIR.
std::string FreshDir(const std::string& tag) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string templ = std::string(tmp ? tmp : "/tmp") + "/" + tag + ".XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  const char* dir = mkdtemp(buf.data());
  return dir ? std::string(dir) : std::string();
}

// "The numbers depend on no clock and no machine: the same command prints
// the same table anywhere" (docs/simulator.md). Each command runs three
// times: as the test runs it; with its flags in another order, from
// another working directory, with an environment that shares nothing with
// the test's (another locale, time zone, home and PATH, and a 64 KiB
// variable that moves the stack) and pinned to one CPU (churn shares its
// jobs between two threads); and with address randomisation off (anything
// seeded, hashed or ordered by an address moves). Output that depends on
// the time, the pid, addresses, thread timing, the environment, the
// directory or the flag order differs between these runs.
TEST(Sim, OutputIsIdenticalEveryRun) {
  const std::string elsewhere = FreshDir("elsewhere");
  ASSERT_FALSE(elsewhere.empty());
  run_sim::Env other;
  other.replace_env = true;
  other.env = {"LC_ALL=C.UTF-8", "LANG=C.UTF-8", "TZ=Pacific/Chatham",
               "HOME=" + elsewhere, "PATH=/nonexistent", "PAD=" + std::string(65536, 'x')};
  other.cwd = elsewhere;
  other.one_cpu = true;
  run_sim::Env fixed_addresses;
  fixed_addresses.no_aslr = true;
  struct Case {
    std::vector<std::string> args, reordered;
  };
  const std::vector<Case> cases = {
      {{"balance", "--json"}, {"balance", "--json"}},
      {{"balance", "--servers", "60", "--services", "5,13", "--json"},
       {"balance", "--json", "--services", "5,13", "--servers", "60"}},
      {{"churn", "--no-grid", "--servers", "40", "--clients", "30"},
       {"churn", "--clients", "30", "--servers", "40", "--no-grid"}},
      {{"churn", "--servers", "30", "--clients", "8", "--grid-servers", "20,40",
        "--grid-clients", "3,9", "--json"},
       {"churn", "--json", "--grid-clients", "3,9", "--grid-servers", "20,40", "--clients", "8",
        "--servers", "30"}},
      {{"connections", "--clients", "50", "--servers", "200", "--subset", "10", "--json"},
       {"connections", "--subset", "10", "--servers", "200", "--clients", "50", "--json"}},
      {{"subset", "--servers", "40", "--peers", "9", "--index", "4", "--mode", "random", "--json"},
       {"subset", "--json", "--mode", "random", "--index", "4", "--peers", "9", "--servers", "40"}},
      {{"deploy", "--servers", "20", "--clients", "9", "--min-aperture", "3"},
       {"deploy", "--min-aperture", "3", "--clients", "9", "--servers", "20"}},
      {{"peers", "--no-grid", "--servers", "30", "--clients", "10", "--json"},
       {"peers", "--json", "--clients", "10", "--servers", "30", "--no-grid"}},
      {{"hash", "--keys", "20000", "--json"}, {"hash", "--json", "--keys", "20000"}},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    Result base = RunSim(c.args);
    ASSERT_EQ(base.exit_code, 0) << base.err;
    ASSERT_GT(base.out.size(), 100u);
    Result moved = RunSim(c.reordered, other);
    EXPECT_EQ(moved.exit_code, 0) << moved.err;
    EXPECT_EQ(base.out, moved.out) << "another order, directory, environment and one CPU";
    Result unrandomised = RunSim(c.args, fixed_addresses);
    EXPECT_EQ(unrandomised.exit_code, 0) << unrandomised.err;
    EXPECT_EQ(base.out, unrandomised.out) << "address randomisation off";
  }
  // And one output pinned byte for byte, every number from the definition
  // and the documented --json form (docs/simulator.md, "subset"): N = 10,
  // C = 4, i = 1, A = 3 gives offset 1/4 and width ceil(3*4/10)/4 = 1/2,
  // arcs 2 and 7 half covered and 3..6 whole; continuous pick weight =
  // intersection. A host or build that printed any of it differently (a
  // locale's decimal comma, another rounding) fails here.
  Result pinned = RunSim({"subset", "--servers", "10", "--peers", "4", "--index", "1",
                          "--min-aperture", "3", "--json"},
                         other);
  EXPECT_EQ(pinned.out,
            "{\"mode\":\"continuous\",\"offset\":0.25,\"width\":0.5,\"logical\":3,\"endpoints\":["
            "{\"index\":2,\"weight\":0.5,\"pick_weight\":0.5},"
            "{\"index\":3,\"weight\":1,\"pick_weight\":1},"
            "{\"index\":4,\"weight\":1,\"pick_weight\":1},"
            "{\"index\":5,\"weight\":1,\"pick_weight\":1},"
            "{\"index\":6,\"weight\":1,\"pick_weight\":1},"
            "{\"index\":7,\"weight\":0.5,\"pick_weight\":0.5}]}\n");
}

// --- Tables for people, JSON for machines: the same numbers ---

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// A table row's cells (split at '|', trimmed).
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, '|');) out.push_back(Trim(cell));
  return out;
}

// The numbers printed in `text`, as printed ("17.50%" gives "17.50").
std::vector<std::string> Numbers(const std::string& text) {
  static const std::regex kNumber("[-+]?[0-9]+(\\.[0-9]+)?");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kNumber);
       it != std::sregex_iterator(); ++it) {
    out.push_back(it->str());
  }
  return out;
}

// `printed` shows `value` rounded to the digits it has: within half a unit
// of its last digit.
void ExpectShown(const std::string& printed, double value, const std::string& what) {
  size_t dot = printed.find('.');
  int decimals = dot == std::string::npos ? 0 : static_cast<int>(printed.size() - dot - 1);
  double tolerance = 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9) + 1e-12 * std::fabs(value);
  EXPECT_NEAR(std::stod(printed), value, tolerance) << what << ": table shows " << printed;
}

// Expects `cells` to hold exactly the numbers `want` (scaled as printed).
void ExpectNumbers(const std::string& text, const std::vector<double>& want,
                   const std::string& what) {
  std::vector<std::string> got = Numbers(text);
  ASSERT_EQ(got.size(), want.size()) << what << ": '" << text << "'";
  for (size_t k = 0; k < want.size(); k++) ExpectShown(got[k], want[k], what + " #" + std::to_string(k));
}

// The data rows of the first table at or after line `from` (the lines after
// its "---+---" rule up to the first blank line); *next = the line after.
std::vector<std::string> TableRows(const std::vector<std::string>& lines, size_t from,
                                   size_t* next = nullptr) {
  size_t k = from;
  while (k < lines.size() && lines[k].find("---+") == std::string::npos) k++;
  std::vector<std::string> rows;
  for (k++; k < lines.size() && !Trim(lines[k]).empty(); k++) rows.push_back(lines[k]);
  if (next) *next = k;
  return rows;
}

// Index of the first line containing `marker` (lines.size() when none).
size_t LineWith(const std::vector<std::string>& lines, const std::string& marker,
                size_t from = 0) {
  for (size_t k = from; k < lines.size(); k++)
    if (lines[k].find(marker) != std::string::npos) return k;
  ADD_FAILURE() << "no line with '" << marker << "'";
  return lines.size();
}

// Runs `args` as a table and with --json; both must succeed.
struct TableAndJson {
  std::vector<std::string> lines;
  mini_json::Value json;
};
TableAndJson RunBoth(std::vector<std::string> args) {
  TableAndJson out;
  Result table = RunSim(args);
  EXPECT_EQ(table.exit_code, 0) << args[0] << ": " << table.err;
  EXPECT_FALSE(table.out.empty());
  if (!table.out.empty()) EXPECT_NE(table.out[0], '{') << args[0];
  out.lines = Lines(table.out);
  args.push_back("--json");
  out.json = RunJson(args);
  return out;
}

void ExpectSubsetTable(const std::vector<std::string>& args) {
  TableAndJson r = RunBoth(args);
  const auto& v = r.json;
  ASSERT_GE(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[0].find("mode " + v["mode"].str + ","), 0u) << r.lines[0];
  ExpectNumbers(r.lines[0], {10, v["logical"].num()}, "servers, logical aperture");
  ExpectNumbers(r.lines[1], {v["offset"].num(), v["width"].num(),
                             static_cast<double>(v["endpoints"].size())},
                "offset, width, physical aperture");
  std::vector<std::string> rows = TableRows(r.lines, 2);
  ASSERT_EQ(rows.size(), v["endpoints"].size());
  for (size_t k = 0; k < rows.size(); k++) {
    const auto& e = v["endpoints"][k];
    ExpectNumbers(rows[k], {e["index"].num(), e["weight"].num(), e["pick_weight"].num()},
                  "endpoint " + std::to_string(k));
  }
}

void ExpectConnectionsTable() {
  TableAndJson r = RunBoth({"connections", "--clients", "50", "--servers", "200", "--subset", "10"});
  const auto& v = r.json;
  ExpectNumbers(r.lines[0], {v["clients"].num(), v["servers"].num(), v["subset"].num()}, "header");
  ExpectNumbers(r.lines[LineWith(r.lines, "full mesh")], {v["mesh"].num()}, "mesh");
  // This line is the nominal count, clients x subset (JSON "nominal"); the
  // windows' real count (JSON "aperture") is the continuous row's.
  ExpectNumbers(r.lines[LineWith(r.lines, "aperture  (clients x subset)")],
                {v["nominal"].num(), v["mesh"].num() / v["nominal"].num()}, "nominal");
  EXPECT_EQ(v["nominal"].num(), v["clients"].num() * v["subset"].num());
  EXPECT_EQ(v["aperture"].num(), Mode(v["modes"], "continuous")["connections"].num());
  std::vector<std::string> rows = TableRows(r.lines, 0);
  ASSERT_EQ(rows.size(), v["modes"].size());
  ASSERT_EQ(rows.size(), 7u);
  for (size_t k = 0; k < rows.size(); k++) {
    const auto& m = v["modes"][k];
    std::vector<std::string> cells = Cells(rows[k]);
    ASSERT_EQ(cells.size(), 4u) << rows[k];
    EXPECT_EQ(cells[0], m["mode"].str);
    ExpectNumbers(cells[1] + " " + cells[2] + " " + cells[3],
                  {m["connections"].num(), m["per_client"].num(),
                   100 * m["connections"].num() / v["mesh"].num()},
                  m["mode"].str);
  }
}

// One block of `balance`: header numbers, the mode table, the per-server
// table when `per_server`.
void ExpectBalanceBlock(const std::vector<std::string>& lines, size_t at,
                        const mini_json::Value& block, std::vector<double> header,
                        bool per_server) {
  const auto& modes = block["modes"];
  header.push_back(block["servers"].num());
  for (size_t k = 0; k < block["services"].size(); k++) header.push_back(block["services"][k].num());
  header.push_back(block["min_aperture"].num());
  ExpectNumbers(lines[at], header, "block header");
  size_t next = 0;
  std::vector<std::string> rows = TableRows(lines, at, &next);
  ASSERT_EQ(rows.size(), modes.size());
  ASSERT_GT(rows.size(), 0u);
  for (size_t k = 0; k < rows.size(); k++) {
    const auto& m = modes[k];
    std::vector<std::string> cells = Cells(rows[k]);
    ASSERT_EQ(cells.size(), 3u) << rows[k];
    EXPECT_EQ(cells[0], m["mode"].str);
    const auto& c = m["connections"];
    const auto& l = m["load"];
    ExpectNumbers(cells[1], {c["mean"].num(), c["max_mean"].num(), c["min_mean"].num(), c["cv"].num()},
                  m["mode"].str + " connections");
    ExpectNumbers(cells[2], {l["max_mean"].num(), l["min_mean"].num(), l["cv"].num()},
                  m["mode"].str + " load");
  }
  if (!per_server) return;
  size_t head = LineWith(lines, "  server |", next);
  ASSERT_LT(head, lines.size());
  std::vector<std::string> names = Cells(lines[head]);
  ASSERT_EQ(names.size(), modes.size() + 1);
  const size_t servers = static_cast<size_t>(block["servers"].num());
  ASSERT_LT(head + servers, lines.size());
  for (size_t m = 0; m < modes.size(); m++) EXPECT_EQ(names[m + 1], modes[m]["mode"].str);
  for (size_t s = 0; s < servers; s++) {
    std::vector<std::string> cells = Cells(lines[head + 1 + s]);
    ASSERT_EQ(cells.size(), modes.size() + 1) << lines[head + 1 + s];
    ExpectNumbers(cells[0], {static_cast<double>(s)}, "server index");
    for (size_t m = 0; m < modes.size(); m++) {
      // the share relative to the mean: load x servers (the loads add up to 1)
      ExpectNumbers(cells[m + 1],
                    {modes[m]["per_server_connections"][s].num(),
                     modes[m]["per_server_load"][s].num() * static_cast<double>(servers)},
                    "server " + std::to_string(s) + " " + modes[m]["mode"].str);
    }
  }
}

void ExpectBalanceTables() {
  TableAndJson r = RunBoth({"balance", "--per-server"});
  ExpectBalanceBlock(r.lines, LineWith(r.lines, "one service:"), r.json["single"], {}, true);
  ExpectBalanceBlock(r.lines, LineWith(r.lines, "services sharing the servers:"), r.json["multi"],
                     {}, true);
  ExpectBalanceBlock(r.lines, LineWith(r.lines, "SRE book example"), r.json["sre"], {30}, false);
}

void ExpectVnodesTable() {
  TableAndJson r = RunBoth({"vnodes"});
  const auto& v = r.json;
  ExpectNumbers(r.lines[0], {v["nodes"].num()}, "nodes");
  ExpectNumbers(r.lines[1], {v["seeds"].num(), 100 / v["nodes"].num()}, "seeds, fair share");
  std::vector<std::string> rows = TableRows(r.lines, 0);
  ASSERT_EQ(rows.size(), v["rows"].size());
  ASSERT_EQ(rows.size(), 6u);
  for (size_t k = 0; k < rows.size(); k++) {
    const auto& x = v["rows"][k];
    ExpectNumbers(rows[k],
                  {x["v"].num(), x["imbalance"].num(), x["cv"].num(), x["inv_sqrt_v"].num(),
                   x["cv_sqrt_v"].num(), x["formula"].num(), x["rms_cv"].num()},
                  "V row " + std::to_string(k));
  }
}

void ExpectVdcTable() {
  TableAndJson r = RunBoth({"vdc", "--count", "6"});
  std::vector<std::string> rows = TableRows(r.lines, 0);
  ASSERT_EQ(rows.size(), 6u);
  ASSERT_EQ(r.json["values"].size(), 6u);
  for (size_t i = 0; i < rows.size(); i++) {
    std::vector<std::string> cells = Cells(rows[i]);
    ASSERT_EQ(cells.size(), 3u) << rows[i];
    ExpectNumbers(cells[0], {static_cast<double>(i)}, "i");
    std::string reversed = "0.";  // the bits of i, lowest first
    for (size_t b = i; b > 0; b >>= 1) reversed += (b & 1) ? '1' : '0';
    if (i == 0) reversed += '0';
    EXPECT_EQ(cells[1], reversed) << "i = " << i;
    ExpectNumbers(cells[2], {r.json["values"][i].num()}, "vdc(" + std::to_string(i) + ")");
  }
}

void ExpectHashTable() {
  TableAndJson r = RunBoth({"hash", "--keys", "20000"});
  const auto& v = r.json;
  const auto& w = v["weights"];
  ExpectNumbers(r.lines[0], {static_cast<double>(w.size()), v["keys"].num()}, "members, keys");
  size_t head = LineWith(r.lines, "vnodes |");
  std::vector<double> labels;  // "m0 (w1)": member k and its weight
  double total = 0;
  for (size_t k = 0; k < w.size(); k++) {
    labels.push_back(static_cast<double>(k));
    labels.push_back(w[k].num());
    total += w[k].num();
  }
  std::vector<std::string> hc = Cells(r.lines[head]);
  ASSERT_EQ(hc.size(), w.size() + 6);  // "worst |s/w - 1|" holds two more bars
  std::string member_heads;
  for (size_t k = 0; k < w.size(); k++) member_heads += hc[k + 1] + " ";
  ExpectNumbers(member_heads, labels, "member heads");
  std::vector<std::string> ideal = Cells(r.lines[head + 1]);
  ASSERT_EQ(ideal[0], "ideal");
  ASSERT_EQ(ideal.size(), w.size() + 4);
  for (size_t k = 0; k < w.size(); k++)
    ExpectNumbers(ideal[k + 1], {100 * w[k].num() / total}, "ideal share");
  ExpectNumbers(ideal[w.size() + 1], {0}, "ideal worst");
  ExpectNumbers(ideal[w.size() + 2], {100 * v["ideal_moved_add"].num()}, "ideal add");
  ExpectNumbers(ideal[w.size() + 3], {100 * v["ideal_moved_remove"].num()}, "ideal remove");
  const auto& rows = v["rows"];
  ASSERT_EQ(rows.size(), 5u);
  for (size_t k = 0; k < rows.size(); k++) {
    std::vector<std::string> cells = Cells(r.lines[head + 2 + k]);
    ASSERT_EQ(cells.size(), w.size() + 4) << r.lines[head + 2 + k];
    const auto& x = rows[k];
    ExpectNumbers(cells[0], {x["vnodes"].num()}, "vnodes");
    for (size_t m = 0; m < w.size(); m++)
      ExpectNumbers(cells[m + 1], {100 * x["key_share"][m].num()}, "share");
    ExpectNumbers(cells[w.size() + 1], {100 * x["worst_rel_error"].num()}, "worst");
    ExpectNumbers(cells[w.size() + 2], {100 * x["moved_add"].num()}, "moved on add");
    ExpectNumbers(cells[w.size() + 3], {100 * x["moved_remove"].num()}, "moved on remove");
  }
}

void ExpectDeployTable() {
  TableAndJson r = RunBoth({"deploy", "--servers", "12", "--clients", "6", "--min-aperture", "3"});
  const auto& v = r.json;
  ExpectNumbers(r.lines[0], {v["clients"].num(), v["servers"].num(), v["min_aperture"].num()},
                "header");
  ExpectNumbers(r.lines[LineWith(r.lines, "steps;")], {v["servers"].num()}, "steps");
  std::vector<std::string> rows = TableRows(r.lines, 0);
  ASSERT_EQ(rows.size(), v["modes"].size());
  ASSERT_EQ(rows.size(), 7u);
  for (size_t k = 0; k < rows.size(); k++) {
    const auto& m = v["modes"][k];
    std::vector<std::string> cells = Cells(rows[k]);
    ASSERT_EQ(cells.size(), 6u) << rows[k];
    EXPECT_EQ(cells[0], m["mode"].str);
    ExpectNumbers(rows[k].substr(rows[k].find('|')),
                  {m["sessions"].num(), m["changed"].num(), m["optimum"].num(), m["ratio"].num(),
                   m["load_worst"].num()},
                  m["mode"].str);
  }
}

// churn --no-grid and peers --no-grid: per mode "changed% (max max%) optimum%"
// for each of two changes.
void ExpectChangeTable(const std::string& verb, const char* first, const char* second,
                       size_t extra) {
  TableAndJson r = RunBoth({verb, "--no-grid", "--servers", "30", "--clients", "10"});
  const auto& p = r.json["point"];
  ExpectNumbers(r.lines[0], {p["clients"].num(), p["servers"].num(), p["min_aperture"].num()},
                verb + " header");
  std::vector<std::string> rows = TableRows(r.lines, 0);
  ASSERT_EQ(rows.size(), p["modes"].size());
  ASSERT_GE(rows.size(), 7u);
  for (size_t k = 0; k < rows.size(); k++) {
    const auto& m = p["modes"][k];
    std::vector<std::string> cells = Cells(rows[k]);
    ASSERT_EQ(cells.size(), 4 + extra) << rows[k];
    EXPECT_EQ(cells[0], m["mode"].str);
    ExpectNumbers(cells[1], {m["sessions"].num()}, m["mode"].str + " sessions");
    for (const auto& change : {std::make_pair(first, 2), std::make_pair(second, 3)}) {
      const std::string c = change.first;
      ExpectNumbers(cells[change.second],
                    {100 * m[c + "_changed"].num(), 100 * m[c + "_changed_max"].num(),
                     100 * m[c + "_optimum"].num()},
                    m["mode"].str + " " + c);
    }
    if (extra) {
      ExpectNumbers(cells[4], {m["load_agreed_max"].num(), m["load_join_disagree_max"].num(),
                               m["load_leave_disagree_max"].num()},
                    m["mode"].str + " load");
    }
  }
}

// Every table shows the numbers of the same run's JSON, row by row and
// cell by cell, to the digits it prints.
TEST(Sim, TablesWithoutJson) {
  ExpectSubsetTable({"subset", "--servers", "10", "--peers", "4", "--index", "1", "--min-aperture", "3"});
  ExpectSubsetTable({"subset", "--servers", "10", "--peers", "4", "--index", "1", "--min-aperture",
                     "3", "--mode", "smooth"});
  ExpectConnectionsTable();
  ExpectBalanceTables();
  ExpectVnodesTable();
  ExpectVdcTable();
  ExpectHashTable();
  ExpectDeployTable();
  ExpectChangeTable("churn", "remove", "add", 0);
  ExpectChangeTable("peers", "join", "leave", 1);
}

struct BadCase {
  std::vector<std::string> args;
  std::string must_mention;
};

TEST(Sim, BadInputExitsTwoWithAMessage) {
  const std::vector<BadCase> cases = {
      {{}, "usage"},
      {{"help"}, "usage"},
      {{"frobnicate"}, "frobnicate"},
      {{"subset"}, "--servers"},
      {{"subset", "--servers", "abc", "--peers", "3", "--index", "0"}, "--servers"},
      {{"subset", "--servers", "-5", "--peers", "3", "--index", "0"}, "--servers"},
      {{"subset", "--servers", "0", "--peers", "3", "--index", "0"}, "--servers"},
      {{"subset", "--servers", "10x", "--peers", "3", "--index", "0"}, "--servers"},
      {{"subset", "--servers", "99999999999999999999", "--peers", "3", "--index", "0"}, "--servers"},
      {{"subset", "--servers", "10", "--peers", "3", "--index", "3"}, "--index"},
      {{"subset", "--servers", "10", "--peers", "3"}, "--index"},
      {{"subset", "--servers", "10", "--offset", "1.5", "--width", "0.1"}, "--offset"},
      {{"subset", "--servers", "10", "--offset", "0.5", "--width", "nan"}, "--width"},
      {{"subset", "--servers", "10", "--offset", "0.5", "--width", "0"}, "--width"},
      {{"subset", "--servers", "10", "--peers", "3", "--index", "0", "--offset", "0.1", "--width", "0.1"}, "--peers"},
      {{"subset", "--servers", "10", "--peers", "3", "--index", "0", "--mode", "fancy"}, "--mode"},
      {{"subset", "--servers", "10", "--peers", "3", "--index", "0", "--min-aperture", "0"}, "--min-aperture"},
      {{"subset", "--servers"}, "--servers"},
      {{"connections", "--bogus", "1"}, "--bogus"},
      {{"connections", "--clients", "100000", "--servers", "100000"}, "--clients"},
      {{"balance", "--services", "5,,7"}, "--services"},
      {{"balance", "--services", "5,0"}, "--services"},
      {{"churn", "--grid-servers", "300,50"}, "--grid-servers"},
      {{"churn", "--servers", "1"}, "--servers"},
      {{"vnodes", "--vnodes", "0"}, "--vnodes"},
      {{"vdc"}, "--count"},
      {{"vdc", "--count", "0"}, "--count"},
      {{"vdc", "--count", "5", "--count", "6"}, "--count"},
      {{"hash", "--weights", "1,-2"}, "--weights"},
      {{"hash", "--keys", "1e5"}, "--keys"},
      {{"vdc", "--json=1", "--count", "3"}, "--json"},
      {{"placement", "--servers", "1"}, "--servers"},
      // Sizes whose work or memory would be absurd are refused up front.
      {{"churn", "--servers", "1000", "--clients", "1001"}, "--servers"},
      {{"churn", "--servers", "5000", "--clients", "51"}, "--servers"},
      {{"churn", "--grid-servers", "50,2000", "--grid-clients", "7,2000"}, "--grid-servers"},
      {{"vnodes", "--nodes", "10000", "--vnodes", "4096"}, "--nodes"},
  };
  for (const auto& c : cases) {
    Result r = RunSim(c.args);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << joined;
    EXPECT_NE(r.err.find(c.must_mention), std::string::npos)
        << joined << "\n" << r.err;
  }
}

}  // namespace
