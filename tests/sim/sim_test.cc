// Runs the real simulator (//interop:sim, a data dependency) as a child
// process and checks its JSON output and exit codes. Expected values are
// worked out by hand from the aperture definition (see each test).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
    // Stable scales shares until every server is within AP_STABLE_TOLERANCE
    // (1e-3, ap_stable.h) of its target; services add up within it too.
    EXPECT_LE(Mode(modes, "stable")["load"]["max_mean"].num(), 1.001 + 1e-9) << scenario;
    EXPECT_GE(Mode(modes, "stable")["load"]["min_mean"].num(), 0.999 - 1e-9) << scenario;
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
  // Same model and tolerance as tests/hash_ring: 4 sd ~ 0.03.
  EXPECT_NEAR(row["key_share"][0].num(), 0.25, 0.03);
  EXPECT_NEAR(row["key_share"][1].num(), 0.50, 0.03);
  EXPECT_NEAR(row["key_share"][2].num(), 0.25, 0.03);
  // A weight-1 joiner among weights 1,2,1 should take ~1/5 of the keys
  // (1000 points of 5000: sd 0.0057), member 0 leaving moves its ~1/4.
  EXPECT_NEAR(row["moved_add"].num(), 0.2, 0.03);
  EXPECT_NEAR(row["moved_remove"].num(), row["key_share"][0].num(), 1e-12);
}

TEST(Sim, PlacementExperimentReportsEveryVariant) {
  auto v = RunJson({"placement", "--json"});
  const auto& vars = v["variants"];
  ASSERT_EQ(vars.size(), 7u);
  for (size_t i = 0; i < vars.size(); i++) {
    // Nothing can beat the optimum: only the leaver's sessions must close.
    EXPECT_GE(vars[i]["remove_changed"].num(), vars[i]["remove_optimum"].num())
        << vars[i]["name"].str;
    EXPECT_GE(vars[i]["add_changed"].num(), vars[i]["add_optimum"].num())
        << vars[i]["name"].str;
  }
  EXPECT_EQ(vars[0]["name"].str, "index + continuous");
  EXPECT_EQ(vars[1]["name"].str, "index + smooth");
  EXPECT_EQ(vars[3]["name"].str, "vdc-stable + smooth, load ~ arc");
  // Index placement (100 equal arcs): continuous covers every point
  // ceil(12 * 100 / 100) = 12 times and smooth normalises by coverage, so
  // both are exactly even.
  for (size_t i : {0u, 1u}) {
    EXPECT_NEAR(vars[i]["load_max_mean"].num(), 1.0, 1e-9) << vars[i]["name"].str;
    EXPECT_NEAR(vars[i]["load_min_mean"].num(), 1.0, 1e-9) << vars[i]["name"].str;
  }
  // VDC positions of stable indices 0..99: indices 0..63 are the multiples
  // of 1/64 and 64..99 split 36 of those gaps in two, so 28 arcs are 1/64
  // and 72 are 1/128. Smooth makes load proportional to the arc: max/mean
  // = (1/64) / (1/100) = 1.5625, min/mean = (1/128) / (1/100) = 0.78125.
  EXPECT_NEAR(vars[3]["load_max_mean"].num(), 100.0 / 64, 1e-9);
  EXPECT_NEAR(vars[3]["load_min_mean"].num(), 100.0 / 128, 1e-9);
  // The equal-capacity readings divide the arc out: uneven only by how
  // many short arcs a window holds, so well inside the arc-proportional
  // spread; 1.15 / 0.85 is above the worst the README's sweep over every
  // (N, C) found (1.141 / 0.877).
  for (size_t i : {2u, 4u, 5u}) {
    EXPECT_LT(vars[i]["load_max_mean"].num(), 1.15) << vars[i]["name"].str;
    EXPECT_GT(vars[i]["load_min_mean"].num(), 0.85) << vars[i]["name"].str;
  }
}

TEST(Sim, OutputIsIdenticalEveryRun) {
  Result a = RunSim({"balance", "--json"});
  Result b = RunSim({"balance", "--json"});
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  Result c = RunSim({"churn", "--no-grid"});
  Result d = RunSim({"churn", "--no-grid"});
  EXPECT_EQ(c.out, d.out);
}

TEST(Sim, TablesWithoutJson) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"subset", "--servers", "10", "--peers", "3", "--index", "0"},
           {"connections"},
           {"balance", "--per-server"},
           {"vnodes"},
           {"vdc", "--count", "4"},
           {"hash"},
           {"deploy", "--servers", "12", "--clients", "6"}}) {
    Result r = RunSim(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << args[0];
    EXPECT_NE(r.out[0], '{') << args[0];
  }
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
      {{"churn", "--servers", "1000", "--clients", "1000"}, "--servers"},
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
