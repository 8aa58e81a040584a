// The simulator's stable mode and its worst-case outputs, on the real
// program: churn's grid ratios and load, peers' ratios, the deploy verb.
// Stable's figures are checked against an independent count made here on
// the core's plan (ap_stable_plan_create): sessions as (client identity,
// server identity) pairs, changed = their symmetric difference.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "policy/core/stable/ap_stable.h"
#include "tests/sim/mini_json.h"
#include "tests/sim/run_sim.h"

namespace {

using run_sim::Result;
using run_sim::RunSim;

const char* const kModes[] = {"continuous", "discrete", "random", "vdc",
                              "mesh",       "smooth",   "stable"};

mini_json::Value RunJson(const std::vector<std::string>& args) {
  Result r = RunSim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return mini_json::Parse(r.out);
}

const mini_json::Value& Mode(const mini_json::Value& modes, const std::string& name) {
  for (size_t i = 0; i < modes.size(); i++)
    if (modes[i]["mode"].str == name) return modes[i];
  throw std::runtime_error("no mode " + name);
}

using Sessions = std::set<std::pair<uint32_t, uint32_t>>;  // (client id, server id)

// The stable sessions of servers `servers` and clients `clients` (their
// identities), from one plan with ordinal keys of the identities.
Sessions StableSessions(const std::vector<uint32_t>& servers,
                        const std::vector<uint32_t>& clients, uint32_t a) {
  std::vector<uint64_t> ekeys, ckeys;
  for (uint32_t s : servers) ekeys.push_back(ap_stable_ordinal_key(s));
  for (uint32_t c : clients) ckeys.push_back(ap_stable_ordinal_key(c));
  ap_stable_plan* plan = nullptr;
  ap_error err;
  EXPECT_EQ(AP_OK, ap_stable_plan_create(ekeys.data(), nullptr, ekeys.size(), ckeys.data(),
                                         ckeys.size(), a, &plan, &err))
      << err.message;
  Sessions out;
  for (size_t c = 0; c < clients.size(); c++) {
    const uint32_t* row = ap_stable_plan_row_endpoints(plan, c);
    for (size_t k = 0; k < ap_stable_plan_row_size(plan, c); k++)
      out.insert({clients[c], servers[row[k]]});
  }
  ap_stable_plan_destroy(plan);
  return out;
}

size_t SymDiff(const Sessions& x, const Sessions& y) {
  size_t common = 0;
  for (const auto& s : x) common += y.count(s);
  return x.size() + y.size() - 2 * common;
}

size_t OfServer(const Sessions& x, uint32_t server) {
  size_t n = 0;
  for (const auto& s : x) n += s.second == server;
  return n;
}

std::vector<uint32_t> Range(uint32_t lo, uint32_t hi) {  // [lo, hi)
  std::vector<uint32_t> v;
  for (uint32_t i = lo; i < hi; i++) v.push_back(i);
  return v;
}

std::vector<uint32_t> Without(std::vector<uint32_t> v, uint32_t x) {
  v.erase(std::find(v.begin(), v.end(), x));
  return v;
}

TEST(SimStable, ChurnPointIsCountedFromIdentities) {
  // Server r leaving: the fleet without r's key, not a relabelled ring of
  // n-1 ordinals. Mean over every r; a joiner has the new identity n.
  const uint32_t n = 20, c = 15, a = 4;
  auto v = RunJson({"churn", "--servers", "20", "--clients", "15", "--min-aperture", "4",
                    "--no-grid", "--json"});
  const auto& st = Mode(v["point"]["modes"], "stable");
  const Sessions base = StableSessions(Range(0, n), Range(0, c), a);
  const double total = base.size();
  double remove = 0, remove_opt = 0, remove_max = 0;
  for (uint32_t r = 0; r < n; r++) {
    double d = SymDiff(base, StableSessions(Without(Range(0, n), r), Range(0, c), a)) / total;
    remove += d / n;
    remove_opt += OfServer(base, r) / total / n;
    remove_max = std::max(remove_max, d);
  }
  const Sessions plus = StableSessions(Range(0, n + 1), Range(0, c), a);
  EXPECT_EQ(st["sessions"].num(), total);
  EXPECT_NEAR(st["remove_changed"].num(), remove, 1e-12);
  EXPECT_NEAR(st["remove_changed_max"].num(), remove_max, 1e-12);
  EXPECT_NEAR(st["remove_optimum"].num(), remove_opt, 1e-12);
  EXPECT_NEAR(st["add_changed"].num(), SymDiff(base, plus) / total, 1e-12);
  EXPECT_NEAR(st["add_optimum"].num(), OfServer(plus, n) / total, 1e-12);
}

TEST(SimStable, ChurnGridRowsHaveRatiosAndLoadForEveryMode) {
  auto v = RunJson({"churn", "--servers", "50", "--clients", "20", "--grid-servers", "50,80",
                    "--grid-clients", "7,40", "--json"});
  const auto& modes = v["grid"]["modes"];
  for (const char* name : kModes) {
    SCOPED_TRACE(name);
    const auto& m = Mode(modes, name);
    // No cell beats its optimum, and no fleet's busiest server is below the mean.
    EXPECT_GE(m["remove_worst_ratio"].num(), 1.0 - 1e-12);
    EXPECT_GE(m["add_worst_ratio"].num(), 1.0 - 1e-12);
    EXPECT_GE(m["load_worst"].num(), 1.0 - 1e-12);
    EXPECT_GE(m["ratio_skipped_cells"].num(), 0);
    EXPECT_LE(m["ratio_skipped_cells"].num(), m["cells"].num());
    // Each worst case names a cell of the grid.
    for (const char* at : {"remove_ratio", "add_ratio", "load"}) {
      EXPECT_GE(m[std::string(at) + "_servers"].num(), 50) << at;
      EXPECT_LE(m[std::string(at) + "_servers"].num(), 80) << at;
      EXPECT_GE(m[std::string(at) + "_clients"].num(), 7) << at;
      EXPECT_LE(m[std::string(at) + "_clients"].num(), 40) << at;
    }
  }
  // Mesh: only the leaver's or joiner's sessions move; every server holds
  // every client, so load is even. Continuous and smooth are even by
  // construction (ap_aperture.h).
  EXPECT_NEAR(Mode(modes, "mesh")["remove_worst_ratio"].num(), 1.0, 1e-12);
  EXPECT_NEAR(Mode(modes, "mesh")["add_worst_ratio"].num(), 1.0, 1e-12);
  for (const char* even : {"mesh", "continuous", "smooth"})
    EXPECT_NEAR(Mode(modes, even)["load_worst"].num(), 1.0, 1e-9) << even;
  // Stable: a leaving server closes its sessions and each client it leaves
  // short opens at most one, so about twice the optimum; shares are scaled
  // to within AP_STABLE_TOLERANCE of even (ap_stable.h).
  const auto& st = Mode(modes, "stable");
  EXPECT_LE(st["remove_worst_ratio"].num(), 3.0);
  EXPECT_LE(st["add_worst_ratio"].num(), 3.0);
  EXPECT_LE(st["load_worst"].num(), 1.05);
  EXPECT_EQ(st["ratio_skipped_cells"].num(), 0);
}

// Connections per client: the point's mean is its sessions / C in every
// mode, and stable's mean and max are those of the plan counted here.
TEST(SimStable, ChurnPointConnectionsPerClient) {
  const uint32_t n = 20, c = 15, a = 4;
  auto v = RunJson({"churn", "--servers", "20", "--clients", "15", "--min-aperture", "4",
                    "--no-grid", "--json"});
  const auto& modes = v["point"]["modes"];
  ASSERT_EQ(modes.size(), 8u);
  for (size_t i = 0; i < modes.size(); i++) {
    SCOPED_TRACE(modes[i]["mode"].str);
    EXPECT_NEAR(modes[i]["connections_per_client"].num(), modes[i]["sessions"].num() / c,
                1e-12);
    EXPECT_GE(modes[i]["connections_per_client_max"].num(),
              modes[i]["connections_per_client"].num());
  }
  EXPECT_EQ(Mode(modes, "mesh")["connections_per_client_max"].num(), n);
  EXPECT_EQ(Mode(modes, "mesh")["connections_per_client"].num(), n);
  const Sessions base = StableSessions(Range(0, n), Range(0, c), a);
  std::vector<size_t> per_client(c, 0);
  for (const auto& s : base) per_client[s.first]++;
  const auto& st = Mode(modes, "stable");
  EXPECT_NEAR(st["connections_per_client"].num(), static_cast<double>(base.size()) / c, 1e-12);
  EXPECT_EQ(st["connections_per_client_max"].num(),
            *std::max_element(per_client.begin(), per_client.end()));
}

// The grid's worst connections ratio, (sessions / C) / max(A, N / C) over
// the cells, and the same over the dense cells (C x A / N >= 2), against
// the point runs of every cell (every mode) and stable's plans counted
// here.
TEST(SimStable, ChurnGridConnectionsRatioIsTheWorstCell) {
  const uint32_t a = 12;
  auto v = RunJson({"churn", "--servers", "50", "--clients", "10", "--grid-servers", "50,53",
                    "--grid-clients", "7,11", "--json"});
  const auto& grid = v["grid"]["modes"];
  std::map<std::string, double> worst, dense;
  double stable_worst = 0, stable_dense = 0;
  size_t dense_cells = 0, cells = 0;
  for (uint32_t c = 7; c <= 11; c++) {
    for (uint32_t n = 50; n <= 53; n++) {
      ++cells;
      const double floor = std::max<double>(a, static_cast<double>(n) / c);
      const bool is_dense = static_cast<double>(c) * a / n >= 2;
      dense_cells += is_dense;
      auto p = RunJson({"churn", "--servers", std::to_string(n), "--clients",
                        std::to_string(c), "--no-grid", "--json"});
      const auto& modes = p["point"]["modes"];
      for (size_t i = 0; i < modes.size(); i++) {
        const double r = modes[i]["sessions"].num() / c / floor;
        worst[modes[i]["mode"].str] = std::max(worst[modes[i]["mode"].str], r);
        if (is_dense) dense[modes[i]["mode"].str] = std::max(dense[modes[i]["mode"].str], r);
      }
      const double r = StableSessions(Range(0, n), Range(0, c), a).size() / double(c) / floor;
      stable_worst = std::max(stable_worst, r);
      if (is_dense) stable_dense = std::max(stable_dense, r);
    }
  }
  ASSERT_GT(dense_cells, 0u);
  ASSERT_LT(dense_cells, cells);  // both kinds of cell in the grid
  ASSERT_EQ(worst.size(), 8u);
  for (const auto& kv : worst) {
    SCOPED_TRACE(kv.first);
    const auto& m = Mode(grid, kv.first);
    EXPECT_EQ(m["cells"].num(), cells);
    EXPECT_NEAR(m["connections_ratio_worst"].num(), kv.second, 1e-12);
    EXPECT_NEAR(m["connections_ratio_worst_dense"].num(), dense[kv.first], 1e-12);
  }
  EXPECT_NEAR(Mode(grid, "stable")["connections_ratio_worst"].num(), stable_worst, 1e-12);
  EXPECT_NEAR(Mode(grid, "stable")["connections_ratio_worst_dense"].num(), stable_dense, 1e-12);
  // The window modes hold max(A, N/C) or a little more; mesh holds N.
  EXPECT_NEAR(Mode(grid, "mesh")["connections_ratio_worst"].num(), 53.0 / 12.0, 1e-12);
}

// The point's bounds: N x C up to 1,000,000 (so 1000 x 1000) and N^2 x C
// up to 1.25e9 (the costliest point allowed before, 5000 x 50); beyond
// either it exits 2 naming the bound.
TEST(SimStable, ChurnPointSizeCap) {
  Result r = RunSim({"churn", "--servers", "1000", "--clients", "1001", "--no-grid"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exceeds 1,000,000"), std::string::npos) << r.err;
  r = RunSim({"churn", "--servers", "5000", "--clients", "51", "--no-grid"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exceeds 1,250,000,000"), std::string::npos) << r.err;
}

TEST(SimStable, PeersRowsHaveRatiosAndStableClientsKeepTheirKeys) {
  const uint32_t n = 16, c = 6, a = 3;
  auto v = RunJson({"peers", "--servers", "16", "--clients", "6", "--min-aperture", "3",
                    "--grid-servers", "20,60", "--grid-clients", "2,12", "--json"});
  for (const char* part : {"point", "grid"}) {
    for (const char* name : kModes) {
      SCOPED_TRACE(std::string(part) + " " + name);
      const auto& m = Mode(v[part]["modes"], name);
      EXPECT_GE(m["join_worst_ratio"].num(), 1.0 - 1e-12);
      EXPECT_GE(m["leave_worst_ratio"].num(), 1.0 - 1e-12);
    }
    // Mesh and random do not depend on the coordinate (sim_peers_test).
    for (const char* name : {"mesh", "random"}) {
      EXPECT_NEAR(Mode(v[part]["modes"], name)["join_worst_ratio"].num(), 1.0, 1e-12);
      EXPECT_NEAR(Mode(v[part]["modes"], name)["leave_worst_ratio"].num(), 1.0, 1e-12);
    }
  }
  // Stable point against the plan: a joiner is the new identity c, a leaver's
  // key disappears and the others keep theirs.
  const Sessions base = StableSessions(Range(0, n), Range(0, c), a);
  const Sessions plus = StableSessions(Range(0, n), Range(0, c + 1), a);
  const double total = base.size();
  const size_t joiner = plus.size() - [&] {
    size_t k = 0;
    for (const auto& s : plus) k += s.first != c;
    return k;
  }();
  double leave = 0, leave_ratio = 0;
  for (uint32_t l = 0; l < c; l++) {
    const Sessions after = StableSessions(Range(0, n), Without(Range(0, c), l), a);
    size_t changed = SymDiff(base, after);
    size_t own = 0;
    for (const auto& s : base) own += s.first == l;
    leave += changed / total / c;
    leave_ratio = std::max(leave_ratio, static_cast<double>(changed) / own);
  }
  const auto& st = Mode(v["point"]["modes"], "stable");
  EXPECT_NEAR(st["join_changed"].num(), SymDiff(base, plus) / total, 1e-12);
  EXPECT_NEAR(st["join_optimum"].num(), joiner / total, 1e-12);
  EXPECT_NEAR(st["join_worst_ratio"].num(), static_cast<double>(SymDiff(base, plus)) / joiner,
              1e-12);
  EXPECT_NEAR(st["leave_changed"].num(), leave, 1e-12);
  EXPECT_NEAR(st["leave_worst_ratio"].num(), leave_ratio, 1e-12);
}

TEST(SimStable, DeployCountsEveryReplacement) {
  const uint32_t n = 30, c = 20, a = 5;
  auto v = RunJson({"deploy", "--servers", "30", "--clients", "20", "--min-aperture", "5",
                    "--json"});
  const auto& modes = v["modes"];
  ASSERT_EQ(modes.size(), 7u);
  for (const char* name : kModes) {
    SCOPED_TRACE(name);
    const auto& m = Mode(modes, name);
    EXPECT_GE(m["changed"].num(), m["optimum"].num());
    EXPECT_GT(m["optimum"].num(), 0);
    EXPECT_NEAR(m["ratio"].num(), m["changed"].num() / m["optimum"].num(), 1e-12);
    EXPECT_GE(m["load_worst"].num(), 1.0 - 1e-12);
  }
  // Mesh: each step closes the old server's c sessions and opens the new
  // one's c, nothing else: changed = optimum = 2 c n, ratio exactly 1.
  const auto& mesh = Mode(modes, "mesh");
  EXPECT_EQ(mesh["changed"].num(), 2.0 * c * n);
  EXPECT_EQ(mesh["optimum"].num(), 2.0 * c * n);
  EXPECT_EQ(mesh["ratio"].num(), 1.0);
  // Stable against the plan, step by step: server i replaced by n + i.
  std::vector<uint32_t> ids = Range(0, n);
  Sessions before = StableSessions(ids, Range(0, c), a);
  double changed = 0, optimum = 0;
  for (uint32_t i = 0; i < n; i++) {
    ids.erase(ids.begin());
    ids.push_back(n + i);
    Sessions after = StableSessions(ids, Range(0, c), a);
    changed += SymDiff(before, after);
    optimum += OfServer(before, i) + OfServer(after, n + i);
    before = after;
  }
  const auto& st = Mode(modes, "stable");
  EXPECT_EQ(st["changed"].num(), changed);
  EXPECT_EQ(st["optimum"].num(), optimum);
  EXPECT_LE(st["ratio"].num(), 3.0);
  EXPECT_LE(st["load_worst"].num(), 1.05);
}

TEST(SimStable, SubsetOfAStableClientIsItsPlanRow) {
  auto v = RunJson({"subset", "--servers", "10", "--peers", "5", "--index", "2", "--mode",
                    "stable", "--min-aperture", "3", "--json"});
  std::vector<uint64_t> ekeys, ckeys;
  for (uint32_t s = 0; s < 10; s++) ekeys.push_back(ap_stable_ordinal_key(s));
  for (uint32_t c = 0; c < 5; c++) ckeys.push_back(ap_stable_ordinal_key(c));
  ap_stable_plan* plan = nullptr;
  ASSERT_EQ(AP_OK, ap_stable_plan_create(ekeys.data(), nullptr, 10, ckeys.data(), 5, 3, &plan,
                                         nullptr));
  const auto& eps = v["endpoints"];
  ASSERT_EQ(eps.size(), ap_stable_plan_row_size(plan, 2));
  for (size_t k = 0; k < eps.size(); k++) {
    EXPECT_EQ(eps[k]["index"].num(), ap_stable_plan_row_endpoints(plan, 2)[k]);
    EXPECT_NEAR(eps[k]["pick_weight"].num(),
                ap_stable_plan_row_shares(plan, 2)[k] * static_cast<double>(eps.size()), 1e-12);
  }
  ap_stable_plan_destroy(plan);
}

TEST(SimStable, OutputIsIdenticalEveryRun) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"deploy", "--servers", "40", "--clients", "30", "--json"},
           {"churn", "--grid-servers", "50,60", "--grid-clients", "7,20", "--json"},
           {"peers", "--servers", "30", "--clients", "10", "--grid-clients", "2,10", "--json"}}) {
    Result a = RunSim(args), b = RunSim(args);
    EXPECT_EQ(a.exit_code, 0) << args[0] << ": " << a.err;
    EXPECT_FALSE(a.out.empty()) << args[0];
    EXPECT_EQ(a.out, b.out) << args[0];
  }
}

TEST(SimStable, DeployBadFlagsExitTwoNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"deploy", "--servers", "0"}, "--servers"},
      {{"deploy", "--servers", "abc"}, "--servers"},
      {{"deploy", "--clients", "0"}, "--clients"},
      {{"deploy", "--clients", "-3"}, "--clients"},
      {{"deploy", "--min-aperture", "0"}, "--min-aperture"},
      {{"deploy", "--bogus", "1"}, "--bogus"},
      {{"deploy", "--json=1"}, "--json"},
      {{"deploy", "--servers", "5", "--servers", "6"}, "--servers"},
      // N steps of up to N x C sessions each: absurd sizes refused up front.
      {{"deploy", "--servers", "2000", "--clients", "2000"}, "--servers"},
  };
  for (const auto& c : cases) {
    Result r = RunSim(c.first);
    std::string joined;
    for (const auto& a : c.first) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << joined;
    EXPECT_NE(r.err.find(c.second), std::string::npos) << joined << "\n" << r.err;
  }
}

}  // namespace

namespace {

const mini_json::Value& Row(const mini_json::Value& rows, const std::string& variant) {
  for (size_t i = 0; i < rows.size(); i++)
    if (rows[i]["variant"].str == variant) return rows[i];
  throw std::runtime_error("no variant " + variant);
}

// The covers experiment (docs/modes.md, "Experiment: server-centric
// covers") at 100 x 100: its stable row is the core's plan, as churn
// counts it; the candidate's figures are the ones the docs give as the
// reason it did not replace stable (connections at the floor, a joining
// client moving more than twice its sessions); walks with covers only
// where they fall short hold A each and cannot balance the load.
TEST(SimStable, CoversExperimentRowsAndItsReasons) {
  auto v = RunJson({"covers", "--servers", "100", "--clients", "100", "--json"});
  const auto& rows = v["rows"];
  ASSERT_EQ(rows.size(), 3u);
  auto churn = RunJson({"churn", "--servers", "100", "--clients", "100", "--min-aperture",
                        "12", "--no-grid", "--json"});
  const auto& st = Mode(churn["point"]["modes"], "stable");
  EXPECT_NEAR(Row(rows, "stable")["connections_per_client"].num(),
              st["connections_per_client"].num(), 1e-4);
  EXPECT_EQ(Row(rows, "stable")["connections_per_client_max"].num(),
            st["connections_per_client_max"].num());
  const auto& covers = Row(rows, "covers");
  EXPECT_LE(covers["connections_per_client"].num(), 1.1 * 12);
  EXPECT_LE(covers["busiest_over_mean"].num(), 1.5);
  EXPECT_LE(covers["load"].num(), 1.01);
  EXPECT_GT(covers["client_join"].num(), 2.0);
  EXPECT_LE(Row(rows, "stable")["client_join"].num(), 2.0);
  const auto& walkdef = Row(rows, "walkdef");
  EXPECT_EQ(walkdef["connections_per_client_max"].num(), 12);
  EXPECT_EQ(walkdef["client_join"].num(), 1.0);
  EXPECT_GT(walkdef["load"].num(), 1.01);
}

}  // namespace

// Stable's design clauses on the churn grid (sim_misses.h): a cell misses when
// its figure exceeds the limit by more than 1e-9; the region is the range
// of C x A / N over the cells that miss (0..0 when none).
constexpr double kMissEps = 1e-9;

struct Misses {
  size_t over = 0;
  double lo = 0, hi = 0;
  void Note(double figure, double limit, double ca_n) {
    if (!(figure > limit + kMissEps)) return;
    lo = over ? std::min(lo, ca_n) : ca_n;
    hi = over ? std::max(hi, ca_n) : ca_n;
    over++;
  }
};

void ExpectMisses(const mini_json::Value& m, const std::string& name, const Misses& want) {
  SCOPED_TRACE(name);
  EXPECT_EQ(m[name + "_cells_over"].num(), want.over);
  EXPECT_NEAR(m[name + "_over_ca_n_min"].num(), want.lo, 1e-12);
  EXPECT_NEAR(m[name + "_over_ca_n_max"].num(), want.hi, 1e-12);
}

// What holds for every mode row from the definitions: each count is at
// most its cells, a region is empty iff its count is 0 and otherwise lies
// in the grid (dense misses at C x A / N >= 2), a count is above 0 iff the
// row's worst figure is over the limit, and server_change counts the cells
// missing on a leave or a join.
void ExpectChurnMissesConsistent(const mini_json::Value& m, double ca_n_lo, double ca_n_hi) {
  const double cells = m["cells"].num();
  EXPECT_LE(m["connections_dense_cells"].num(), cells);
  EXPECT_LE(m["connections_dense_cells_over"].num(), m["connections_dense_cells"].num());
  const struct {
    const char* name;
    double worst, limit;
  } clauses[] = {
      {"connections", m["connections_ratio_worst"].num(), 1.6},
      {"connections_dense", m["connections_ratio_worst_dense"].num(), 1.1},
      {"busiest", m["busiest_ratio_worst"].num(), 1.5},
      {"remove", m["remove_worst_ratio"].num(), 2.0},
      {"add", m["add_worst_ratio"].num(), 2.0},
      {"server_change", std::max(m["remove_worst_ratio"].num(), m["add_worst_ratio"].num()), 2.0},
  };
  for (const auto& cl : clauses) {
    SCOPED_TRACE(cl.name);
    const std::string f = cl.name;
    const double over = m[f + "_cells_over"].num();
    const double lo = m[f + "_over_ca_n_min"].num(), hi = m[f + "_over_ca_n_max"].num();
    EXPECT_LE(over, cells);
    EXPECT_EQ(over > 0, cl.worst > cl.limit + kMissEps) << cl.worst;
    if (over == 0) {
      EXPECT_EQ(lo, 0);
      EXPECT_EQ(hi, 0);
    } else {
      EXPECT_LE(lo, hi);
      EXPECT_GE(lo, (f == "connections_dense" ? 2.0 : ca_n_lo) - 1e-12);
      EXPECT_LE(hi, ca_n_hi + 1e-12);
    }
  }
  const double rem = m["remove_cells_over"].num(), add = m["add_cells_over"].num();
  EXPECT_GE(m["server_change_cells_over"].num(), std::max(rem, add));
  EXPECT_LE(m["server_change_cells_over"].num(), rem + add);
  EXPECT_GE(m["busiest_ratio_worst"].num(), 1.0 - 1e-12);  // the busiest is at least the mean
}

// Every mode on a small grid: the connection clauses against each cell's
// point run (its sessions / C and busiest client), the dense cells counted
// here; mesh (every client holds all N >= 50 servers: N / max(12, N/C) >
// 1.6 in every cell, busiest = mean, a change moves only the optimum)
// misses every connection clause in every cell and no other.
TEST(SimStable, ChurnGridCountsTheCellsThatMissTargets) {
  const uint32_t a = 12;
  auto v = RunJson({"churn", "--servers", "50", "--clients", "10", "--grid-servers", "50,53",
                    "--grid-clients", "7,11", "--json"});
  const auto& grid = v["grid"]["modes"];
  ASSERT_EQ(grid.size(), 8u);
  std::map<std::string, Misses> conns, dense, busiest;
  size_t cells = 0, dense_cells = 0;
  for (uint32_t c = 7; c <= 11; c++) {
    for (uint32_t n = 50; n <= 53; n++) {
      ++cells;
      const double floor = std::max<double>(a, static_cast<double>(n) / c);
      const double ca_n = static_cast<double>(c) * a / n;
      dense_cells += ca_n >= 2;
      auto p = RunJson({"churn", "--servers", std::to_string(n), "--clients",
                        std::to_string(c), "--no-grid", "--json"});
      const auto& modes = p["point"]["modes"];
      for (size_t i = 0; i < modes.size(); i++) {
        const std::string& name = modes[i]["mode"].str;
        const double mean = modes[i]["connections_per_client"].num();
        conns[name].Note(mean / floor, 1.6, ca_n);
        if (ca_n >= 2) dense[name].Note(mean / floor, 1.1, ca_n);
        busiest[name].Note(modes[i]["connections_per_client_max"].num() / mean, 1.5, ca_n);
      }
    }
  }
  ASSERT_GT(dense_cells, 0u);
  ASSERT_LT(dense_cells, cells);
  for (size_t i = 0; i < grid.size(); i++) {
    const auto& m = grid[i];
    const std::string& name = m["mode"].str;
    SCOPED_TRACE(name);
    EXPECT_EQ(m["cells"].num(), cells);
    EXPECT_EQ(m["connections_dense_cells"].num(), dense_cells);
    ExpectChurnMissesConsistent(m, 7.0 * a / 53, 11.0 * a / 50);
    ExpectMisses(m, "connections", conns[name]);
    ExpectMisses(m, "connections_dense", dense[name]);
    ExpectMisses(m, "busiest", busiest[name]);
  }
  const auto& mesh = Mode(grid, "mesh");
  EXPECT_EQ(mesh["connections_cells_over"].num(), cells);
  EXPECT_EQ(mesh["connections_dense_cells_over"].num(), dense_cells);
  EXPECT_EQ(mesh["busiest_cells_over"].num(), 0);
  EXPECT_EQ(mesh["server_change_cells_over"].num(), 0);
}

// Stable on a grid around N/C = A, every clause counted here from the core's
// plans: connections and the busiest client of the fleet; a leave of the
// servers at positions 0 and N/2 and a join of identity N, changed / optimum
// of the position-averaged figures (sim churn's grid, 2 positions).
TEST(SimStable, ChurnGridStableMissesCountedFromThePlans) {
  const uint32_t a = 12;
  auto v = RunJson({"churn", "--servers", "50", "--clients", "10", "--grid-servers", "250,300",
                    "--grid-step", "10", "--grid-clients", "30,100", "--json"});
  const auto& st = Mode(v["grid"]["modes"], "stable");
  Misses conns, dense, busiest, remove, add, change;
  size_t cells = 0;
  for (uint32_t c = 30; c <= 100; c += 10) {
    for (uint32_t n = 250; n <= 300; n += 10) {
      ++cells;
      const double ca_n = static_cast<double>(c) * a / n;
      const Sessions base = StableSessions(Range(0, n), Range(0, c), a);
      const double total = base.size();
      std::vector<size_t> per_client(c, 0);
      for (const auto& s : base) per_client[s.first]++;
      const double mean = total / c;
      const double ratio = mean / std::max<double>(a, static_cast<double>(n) / c);
      conns.Note(ratio, 1.6, ca_n);
      if (ca_n >= 2) dense.Note(ratio, 1.1, ca_n);
      busiest.Note(*std::max_element(per_client.begin(), per_client.end()) / mean, 1.5, ca_n);
      double rem = 0, rem_opt = 0;
      for (uint32_t gone : {0u, n / 2}) {
        rem += SymDiff(base, StableSessions(Without(Range(0, n), gone), Range(0, c), a)) / total / 2;
        rem_opt += OfServer(base, gone) / total / 2;
      }
      const Sessions plus = StableSessions(Range(0, n + 1), Range(0, c), a);
      const double joined = SymDiff(base, plus) / total, joined_opt = OfServer(plus, n) / total;
      const size_t removes = remove.over, adds = add.over;
      remove.Note(rem / rem_opt, 2.0, ca_n);
      add.Note(joined / joined_opt, 2.0, ca_n);
      if (remove.over > removes || add.over > adds) change.Note(1, 0, ca_n);
    }
  }
  // The grid reaches both sides of the connection clauses.
  ASSERT_GT(conns.over, 0u);
  ASSERT_LT(conns.over, cells);
  ASSERT_GT(busiest.over, 0u);
  ASSERT_GT(dense.over, 0u);
  EXPECT_EQ(st["cells"].num(), cells);
  ExpectChurnMissesConsistent(st, 30.0 * a / 300, 100.0 * a / 250);
  ExpectMisses(st, "connections", conns);
  ExpectMisses(st, "connections_dense", dense);
  ExpectMisses(st, "busiest", busiest);
  ExpectMisses(st, "remove", remove);
  ExpectMisses(st, "add", add);
  ExpectMisses(st, "server_change", change);
}

// sim peers' grid rows: the cells over 2x the optimum on a client joining
// or leaving, for every mode. A count is at most the cells and above 0 iff
// the row's worst ratio is over 2; `client_change` counts the cells that
// miss on either; mesh and random do not depend on the coordinate (ratio
// 1), so they miss nowhere; a region lies in the grid's C x A / N.
TEST(SimStable, PeersGridCountsTheCellsOverTwiceTheOptimum) {
  const double a = 12;
  auto v = RunJson({"peers", "--no-grid", "--json"});
  auto g = RunJson({"peers", "--servers", "16", "--clients", "6", "--grid-servers", "20,60",
                    "--grid-clients", "2,12", "--json"});
  EXPECT_FALSE(v.has("grid"));
  size_t missing_somewhere = 0;
  for (const char* name : kModes) {
    SCOPED_TRACE(name);
    const auto& m = Mode(g["grid"]["modes"], name);
    const double cells = m["cells"].num();
    for (const char* f : {"join", "leave", "client_change"}) {
      SCOPED_TRACE(f);
      const std::string s = f;
      const double over = m[s + "_cells_over"].num();
      const double lo = m[s + "_over_ca_n_min"].num(), hi = m[s + "_over_ca_n_max"].num();
      EXPECT_LE(over, cells);
      if (over == 0) {
        EXPECT_EQ(lo, 0);
        EXPECT_EQ(hi, 0);
      } else {
        EXPECT_LE(lo, hi);
        EXPECT_GE(lo, 2 * a / 60 - 1e-12);
        EXPECT_LE(hi, 12 * a / 20 + 1e-12);
      }
    }
    const double join = m["join_cells_over"].num(), leave = m["leave_cells_over"].num();
    EXPECT_EQ(join > 0, m["join_worst_ratio"].num() > 2 + kMissEps);
    EXPECT_EQ(leave > 0, m["leave_worst_ratio"].num() > 2 + kMissEps);
    EXPECT_GE(m["client_change_cells_over"].num(), std::max(join, leave));
    EXPECT_LE(m["client_change_cells_over"].num(), join + leave);
    missing_somewhere += m["client_change_cells_over"].num() > 0;
  }
  for (const char* name : {"mesh", "random"})
    EXPECT_EQ(Mode(g["grid"]["modes"], name)["client_change_cells_over"].num(), 0) << name;
  EXPECT_GT(missing_somewhere, 0u);  // the window modes move far more than the optimum
}
