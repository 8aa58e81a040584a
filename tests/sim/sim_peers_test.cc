// `sim peers` as a real process: its sessions-changed figures equal a
// brute-force count on the core's apertures made here, client by client,
// and never fall below the optimum (the joiner's or leaver's sessions).
#include <stdio.h>
#include <stdlib.h>

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ring/ap_ring.h"
#include "tests/sim/mini_json.h"

namespace {

std::string RunSimPeers(const std::string& args) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* ws = getenv("TEST_WORKSPACE");
  std::string bin = (srcdir && ws) ? std::string(srcdir) + "/" + ws + "/interop/sim/sim"
                                   : "interop/sim/sim";
  FILE* p = popen((bin + " peers " + args).c_str(), "r");
  std::string out;
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0);
  return out;
}

const mini_json::Value& Mode(const mini_json::Value& modes, const std::string& name) {
  for (size_t i = 0; i < modes.size(); i++)
    if (modes[i]["mode"].str == name) return modes[i];
  throw std::runtime_error("no mode " + name);
}

// Ring indices of the members of peer `index` of `count` on n servers.
std::set<uint32_t> Members(ap_mode mode, uint32_t n, uint32_t index, uint32_t count,
                           uint32_t a) {
  std::vector<double> w(n, 1.0);
  ap_ring* ring = nullptr;
  EXPECT_EQ(AP_OK, ap_ring_create(w.data(), n, &ring, nullptr));
  ap_subset_params p;
  ap_subset_params_init(&p);
  p.mode = mode;
  p.peer_index = index;
  p.peer_count = count;
  p.min_aperture = a;
  ap_aperture* ap = nullptr;
  EXPECT_EQ(AP_OK, ap_aperture_compute(ring, &p, &ap, nullptr));
  std::set<uint32_t> out;
  for (size_t k = 0; k < ap_aperture_count(ap); k++) out.insert(ap_aperture_member(ap, k)->index);
  ap_aperture_destroy(ap);
  ap_ring_destroy(ring);
  return out;
}

size_t SymDiff(const std::set<uint32_t>& x, const std::set<uint32_t>& y) {
  size_t common = 0;
  for (uint32_t v : x) common += y.count(v);
  return x.size() + y.size() - 2 * common;
}

struct Counted {
  double sessions = 0, join = 0, join_opt = 0, leave = 0, leave_opt = 0;
};

// Mean over every position, as fractions of the sessions before.
Counted Count(ap_mode mode, uint32_t n, uint32_t c, uint32_t a) {
  Counted r;
  for (uint32_t i = 0; i < c; i++) r.sessions += Members(mode, n, i, c, a).size();
  for (uint32_t j = 0; j <= c; j++) {
    size_t changed = 0;
    for (uint32_t i = 0; i < c; i++)
      changed += SymDiff(Members(mode, n, i, c, a), Members(mode, n, i < j ? i : i + 1, c + 1, a));
    size_t joiner = Members(mode, n, j, c + 1, a).size();
    r.join += (changed + joiner) / r.sessions / (c + 1);
    r.join_opt += joiner / r.sessions / (c + 1);
  }
  for (uint32_t l = 0; l < c; l++) {
    size_t changed = 0;
    for (uint32_t i = 0; i < c; i++) {
      if (i == l) continue;
      changed += SymDiff(Members(mode, n, i, c, a), Members(mode, n, i < l ? i : i - 1, c - 1, a));
    }
    size_t leaver = Members(mode, n, l, c, a).size();
    r.leave += (changed + leaver) / r.sessions / c;
    r.leave_opt += leaver / r.sessions / c;
  }
  return r;
}

TEST(SimPeers, PointEqualsABruteForceCountOnTheCore) {
  auto v = mini_json::Parse(RunSimPeers(
      "--servers 12 --clients 4 --min-aperture 3 --no-grid --json"));
  const auto& modes = v["point"]["modes"];
  ASSERT_EQ(modes.size(), 7u);
  for (ap_mode mode : {AP_MODE_CONTINUOUS, AP_MODE_SMOOTH, AP_MODE_DISCRETE, AP_MODE_VDC,
                       AP_MODE_MESH}) {
    const auto& m = Mode(modes, ap_mode_name(mode));
    Counted want = Count(mode, 12, 4, 3);
    SCOPED_TRACE(ap_mode_name(mode));
    EXPECT_EQ(m["sessions"].num(), want.sessions);
    EXPECT_NEAR(m["join_changed"].num(), want.join, 1e-12);
    EXPECT_NEAR(m["join_optimum"].num(), want.join_opt, 1e-12);
    EXPECT_NEAR(m["leave_changed"].num(), want.leave, 1e-12);
    EXPECT_NEAR(m["leave_optimum"].num(), want.leave_opt, 1e-12);
    EXPECT_GE(m["join_changed"].num() + 1e-12, m["join_optimum"].num());
    EXPECT_GE(m["leave_changed"].num() + 1e-12, m["leave_optimum"].num());
    EXPECT_GE(m["join_changed_max"].num() + 1e-12, m["join_changed"].num());
  }
  // Mesh and random do not depend on the coordinate: only the joiner's or
  // leaver's own sessions change.
  for (const char* name : {"mesh", "random"}) {
    const auto& m = Mode(modes, name);
    EXPECT_NEAR(m["join_changed"].num(), m["join_optimum"].num(), 1e-12) << name;
    EXPECT_NEAR(m["leave_changed"].num(), m["leave_optimum"].num(), 1e-12) << name;
  }
  // Continuous at C = 4, N = 12, A = 3: every client holds 3 whole servers
  // and all agree: load max/mean exactly 1; disagreeing clients overload.
  const auto& cont = Mode(modes, "continuous");
  EXPECT_NEAR(cont["load_agreed_max"].num(), 1.0, 1e-9);
  EXPECT_GT(cont["load_join_disagree_max"].num(), 1.0);
}

TEST(SimPeers, GridWorstIsAtLeastEveryCellsMean) {
  auto v = mini_json::Parse(RunSimPeers(
      "--servers 12 --clients 4 --min-aperture 3 --grid-servers 12,12 --grid-clients 4,4 "
      "--grid-positions 5 --json"));
  const auto& modes = v["grid"]["modes"];
  ASSERT_EQ(modes.size(), 7u);
  // One cell (12, 4) with the positions 0..4 (k * 5 / 5) for a join: the
  // point's mean over every position.
  const auto& cont = Mode(modes, "continuous");
  EXPECT_EQ(cont["cells"].num(), 1);
  EXPECT_NEAR(cont["join_worst"].num(), Count(AP_MODE_CONTINUOUS, 12, 4, 3).join, 1e-12);
  EXPECT_EQ(cont["join_servers"].num(), 12);
  EXPECT_EQ(cont["join_clients"].num(), 4);
}

}  // namespace
