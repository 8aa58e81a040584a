// The fleet's prediction (churn_model) against the session model's own
// relabelling of ring positions (common/sessions): the same core, but the model goes through the
// policy's path (address strings, ap_order_endpoints, explicit weights), so
// the two agree only if that path lays out the ring as the simulator does.
// Stable mode keys endpoints by address, so its prediction is checked
// against plans built here from the address keys (ap_stable_plan_create).
#include <stdint.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "interop/fleet/churn_model.h"
#include "interop/sim/sim_model.h"
#include "interop/common/sessions.h"
#include "policy/core/ring/ap_order.h"
#include "policy/core/stable/ap_stable.h"
#include "tests/interop/fleet_oracle.h"

namespace {

// The relabelling shortcut, an independent route to the churn of the
// modes that follow ring positions alone: removing the server at ring
// position r leaves a ring of n-1 whose index j is identity j (j < r) or
// j+1; adding one at position p gives a ring of n+1 whose index p is the
// new identity n. So the sessions of the two ring sizes, relabelled, give
// the change for every position without computing a fleet per position.
/* |A symmetric-difference B| of two sorted identity lists, where B's items
 * are relabelled ring indices: skip == position to leave out of B (the
 * joined server, counted separately), shift_from: indices >= it map to
 * index + shift. */
size_t diff_count(const uint32_t *a, size_t na, const uint32_t *b,
                         size_t nb, uint32_t skip, uint32_t shift_from,
                         int shift) {
  size_t i = 0, j = 0, diff = 0;
  for (;;) {
    while (j < nb && b[j] == skip) j++;
    if (i == na || j == nb) break;
    uint32_t bj = b[j] >= shift_from ? (uint32_t)((int64_t)b[j] + shift) : b[j];
    if (a[i] == bj) {
      i++;
      j++;
    } else if (a[i] < bj) {
      diff++;
      i++;
    } else {
      diff++;
      j++;
    }
  }
  diff += na - i;
  for (; j < nb; j++)
    if (b[j] != skip) diff++;
  return diff;
}

int contains(const uint32_t *a, size_t n, uint32_t x) {
  for (size_t i = 0; i < n; i++)
    if (a[i] == x) return 1;
  return 0;
}

/* Sessions changed over all clients from `before` to `after`, where after's
 * ring relabels as diff_count() describes; `server` is the position that
 * left (in before) or joined (in after), whose sessions *optimum counts. A
 * joined server's sessions are new, so they count as changed too. */
size_t step_changes(const io_sessions *before, const io_sessions *after,
                           uint32_t server, int joined, size_t *optimum) {
  size_t diff = 0, opt = 0;
  for (uint32_t c = 0; c < before->clients; c++) {
    const uint32_t *a = before->idx + before->start[c];
    size_t na = before->start[c + 1] - before->start[c];
    const uint32_t *b = after->idx + after->start[c];
    size_t nb = after->start[c + 1] - after->start[c];
    if (!joined) {
      opt += (size_t)contains(a, na, server);
      /* after index j is identity j (j < server) or j + 1 */
      diff += diff_count(a, na, b, nb, UINT32_MAX, server, +1);
    } else {
      /* after index server is the new one; index j > server is j - 1 */
      size_t has = (size_t)contains(b, nb, server);
      opt += has;
      diff += diff_count(a, na, b, nb, server, server + 1, -1) + has;
    }
  }
  if (optimum) *optimum = opt;
  return diff;
}

size_t RelabelRemoved(const io_sessions *before, const io_sessions *after, uint32_t r,
                      size_t *optimum) {
  return step_changes(before, after, r, 0, optimum);
}

size_t RelabelAdded(const io_sessions *before, const io_sessions *after, uint32_t p,
                    size_t *optimum) {
  return step_changes(before, after, p, 1, optimum);
}


std::vector<std::string> Addresses(uint32_t n) {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n; i++) out.push_back("127.0.0." + std::to_string(10 + i) + ":4711");
  return out;
}

std::vector<const char *> Pointers(const std::vector<std::string> &v) {
  std::vector<const char *> out;
  for (const std::string &s : v) out.push_back(s.c_str());
  return out;
}

// Ring position of every address (input position -> ring index).
std::vector<uint32_t> RingPositions(const std::vector<const char *> &addresses) {
  std::vector<size_t> order(addresses.size());
  ap_error err;
  EXPECT_EQ(AP_OK, ap_order_endpoints(addresses.data(), addresses.size(), order.data(), &err));
  std::vector<uint32_t> pos(addresses.size());
  for (size_t k = 0; k < order.size(); k++) pos[order[k]] = static_cast<uint32_t>(k);
  return pos;
}

uint64_t SimSeed(uint32_t client, const void *) { return io_sim_client_seed(0, client); }

struct Point {
  uint32_t servers, clients, min_aperture;
};

TEST(ChurnModelTest, RemovalAndAdditionOfEveryServerMatchTheSimulator) {
  const Point points[] = {{12, 4, 3}, {13, 7, 3}, {16, 8, 2}, {9, 5, 12}};
  for (const Point &pt : points) {
    for (int k = 0; k < SIM_NUM_MODES; k++) {
      const ap_mode mode = io_sim_modes[k];
      // stable keys endpoints by address, the simulator by ring index: its
      // own tests are below (StablePrediction...)
      if (mode == AP_MODE_STABLE) continue;
      SCOPED_TRACE(std::string(ap_mode_name(mode)) + " at " + std::to_string(pt.servers) + ":" +
                   std::to_string(pt.clients) + ":" + std::to_string(pt.min_aperture));
      std::vector<uint64_t> seeds;  // the simulator's random seeds
      for (uint32_t c = 0; c < pt.clients; c++) seeds.push_back(io_sim_client_seed(0, c));
      churn_model_fleet fleet = {mode, pt.clients, pt.min_aperture, seeds.data()};
      ap_error err;
      io_sessions lo, full;
      ASSERT_EQ(AP_OK, io_sessions_compute(mode, pt.servers - 1, pt.clients, pt.min_aperture, SimSeed, nullptr, &lo, &err));
      ASSERT_EQ(AP_OK, io_sessions_compute(mode, pt.servers, pt.clients, pt.min_aperture, SimSeed, nullptr, &full, &err));

      std::vector<std::string> all = Addresses(pt.servers);
      std::vector<const char *> all_p = Pointers(all);
      std::vector<uint32_t> pos = RingPositions(all_p);
      long total = 0;
      std::vector<long> sessions(pt.servers);
      ASSERT_EQ(AP_OK, io_churn_model_sessions(&fleet, all_p.data(), all_p.size(), sessions.data(), &total, &err));
      EXPECT_EQ(static_cast<long>(full.total), total);
      for (uint32_t x = 0; x < pt.servers; x++) {
        std::vector<const char *> rest;
        for (uint32_t i = 0; i < pt.servers; i++) {
          if (i != x) rest.push_back(all_p[i]);
        }
        churn_model_change rem, add;
        ASSERT_EQ(AP_OK, io_churn_model_diff(&fleet, all_p.data(), all_p.size(), rest.data(),
                                          rest.size(), &rem, &err));
        ASSERT_EQ(AP_OK, io_churn_model_diff(&fleet, rest.data(), rest.size(), all_p.data(),
                                          all_p.size(), &add, &err));
        size_t opt_rem = 0, opt_add = 0;
        size_t sim_rem = RelabelRemoved(&full, &lo, pos[x], &opt_rem);
        size_t sim_add = RelabelAdded(&lo, &full, pos[x], &opt_add);
        EXPECT_EQ(static_cast<long>(sim_rem), rem.changed) << "removing " << all[x];
        EXPECT_EQ(static_cast<long>(opt_rem), rem.optimum) << "removing " << all[x];
        EXPECT_EQ(sessions[x], rem.optimum) << "removing " << all[x];
        EXPECT_EQ(static_cast<long>(full.total), rem.sessions_before);
        EXPECT_EQ(static_cast<long>(lo.total), rem.sessions_after);
        EXPECT_EQ(static_cast<long>(sim_add), add.changed) << "adding " << all[x];
        EXPECT_EQ(static_cast<long>(opt_add), add.optimum) << "adding " << all[x];
        EXPECT_GE(rem.changed, rem.optimum);
      }
      io_sessions_free(&lo);
      io_sessions_free(&full);
    }
  }
}

// The model against the independent oracle (fleet_oracle.h: windows and
// sessions from the definitions, no core code but the order's hash) at the
// fleet tests' points and every removal and addition position, so the
// real-process tests' predictions are checked by something other than the
// core they come from.
TEST(ChurnModelTest, ContinuousSmoothAndMeshChangesAreTheOraclesAtEveryPosition) {
  const Point points[] = {{12, 4, 3}, {13, 7, 3}, {16, 8, 2}, {9, 5, 12}, {6, 3, 2}};
  const std::pair<ap_mode, oracle::Mode> modes[] = {{AP_MODE_CONTINUOUS, oracle::Mode::kContinuous},
                                                    {AP_MODE_SMOOTH, oracle::Mode::kSmooth},
                                                    {AP_MODE_MESH, oracle::Mode::kMesh}};
  int compared = 0;
  for (const Point &pt : points) {
    for (const auto &mode : modes) {
      SCOPED_TRACE(std::string(ap_mode_name(mode.first)) + " at " + std::to_string(pt.servers) +
                   ":" + std::to_string(pt.clients) + ":" + std::to_string(pt.min_aperture));
      churn_model_fleet fleet = {mode.first, pt.clients, pt.min_aperture, nullptr};
      std::vector<std::string> all = Addresses(pt.servers), hosts;
      for (uint32_t i = 0; i < pt.servers; i++) hosts.push_back(fleet_oracle::ServerHost(i));
      std::vector<const char *> all_p = Pointers(all);
      for (uint32_t x = 0; x < pt.servers; x++) {
        std::vector<const char *> rest;
        std::vector<std::string> rest_hosts;
        for (uint32_t i = 0; i < pt.servers; i++) {
          if (i == x) continue;
          rest.push_back(all_p[i]);
          rest_hosts.push_back(hosts[i]);
        }
        churn_model_change rem, add;
        ap_error err;
        ASSERT_EQ(AP_OK, io_churn_model_diff(&fleet, all_p.data(), all_p.size(), rest.data(),
                                             rest.size(), &rem, &err));
        ASSERT_EQ(AP_OK, io_churn_model_diff(&fleet, rest.data(), rest.size(), all_p.data(),
                                             all_p.size(), &add, &err));
        const oracle::SessionChange want_rem =
            fleet_oracle::ServerChange(mode.second, hosts, rest_hosts, pt.clients, pt.min_aperture);
        const oracle::SessionChange want_add =
            fleet_oracle::ServerChange(mode.second, rest_hosts, hosts, pt.clients, pt.min_aperture);
        EXPECT_EQ(want_rem.sessions_before, rem.sessions_before) << "removing " << all[x];
        EXPECT_EQ(want_rem.sessions_after, rem.sessions_after) << "removing " << all[x];
        EXPECT_EQ(want_rem.changed, rem.changed) << "removing " << all[x];
        EXPECT_EQ(want_rem.optimum, rem.optimum) << "removing " << all[x];
        EXPECT_EQ(want_add.changed, add.changed) << "adding " << all[x];
        EXPECT_EQ(want_add.optimum, add.optimum) << "adding " << all[x];
        compared++;
      }
    }
  }
  EXPECT_EQ(compared, 3 * (12 + 13 + 16 + 9 + 6));
}

TEST(ChurnModelTest, MeshHoldsEveryServerFromEveryClient) {
  std::vector<std::string> all = Addresses(7);
  std::vector<const char *> p = Pointers(all);
  churn_model_fleet fleet = {AP_MODE_MESH, 5, 3, nullptr};
  std::vector<long> sessions(7);
  long total = 0;
  ap_error err;
  ASSERT_EQ(AP_OK, io_churn_model_sessions(&fleet, p.data(), p.size(), sessions.data(), &total, &err));
  EXPECT_EQ(35, total);
  for (long s : sessions) EXPECT_EQ(5, s);
  churn_model_change rem;
  ASSERT_EQ(AP_OK, io_churn_model_diff(&fleet, p.data(), 7, p.data() + 1, 6, &rem, &err));
  EXPECT_EQ(5, rem.changed);  // only the removed server's sessions
  EXPECT_EQ(5, rem.optimum);
}

TEST(ChurnModelTest, BadInputIsRejectedWithAMessage) {
  std::vector<std::string> all = Addresses(4);
  std::vector<const char *> p = Pointers(all);
  churn_model_fleet fleet = {AP_MODE_CONTINUOUS, 3, 2, nullptr};
  uint8_t member[4];
  ap_error err;
  EXPECT_EQ(AP_EINVAL, io_churn_model_members(nullptr, p.data(), 4, 0, member, &err));
  EXPECT_EQ(AP_EINVAL, io_churn_model_members(&fleet, p.data(), 4, 3, member, &err));
  EXPECT_NE(std::string::npos, std::string(err.message).find("client 3"));
  EXPECT_EQ(AP_ERANGE, io_churn_model_members(&fleet, p.data(), 0, 0, member, &err));
  const char *dup[] = {p[0], p[1], p[0]};
  EXPECT_EQ(AP_EINVAL, io_churn_model_members(&fleet, dup, 3, 0, member, &err));
  churn_model_fleet random = {AP_MODE_RANDOM, 3, 2, nullptr};
  EXPECT_EQ(AP_EINVAL, io_churn_model_members(&random, p.data(), 4, 0, member, &err));
  churn_model_change out;
  EXPECT_EQ(AP_EINVAL, io_churn_model_diff(&fleet, p.data(), 4, nullptr, 3, &out, &err));
  EXPECT_EQ(AP_ERANGE, io_churn_model_diff(&fleet, p.data(), 4, p.data(), 0, &out, &err));
}

// Addresses whose list order differs from the policy's ring order (ports
// and hosts mixed), so a mix-up of list positions and ring indices shows.
std::vector<std::string> MixedAddresses(uint32_t n, uint32_t first_host) {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n; i++) {
    out.push_back("127.0.0." + std::to_string(first_host + (i * 7) % n) + ":" +
                  std::to_string(4711 + (i % 3)));
  }
  return out;
}

// Each client's members as address strings, from a plan built here
// directly with the documented identities: endpoint key =
// ap_stable_key(address string), peer key = ap_stable_ordinal_key(peer index).
std::vector<std::vector<std::string>> PlanMembers(const std::vector<std::string> &addresses,
                                                  uint32_t clients, uint32_t min_aperture) {
  std::vector<uint64_t> endpoint_keys, client_keys;
  for (const std::string &a : addresses) endpoint_keys.push_back(ap_stable_key(a.c_str()));
  for (uint32_t c = 0; c < clients; c++) client_keys.push_back(ap_stable_ordinal_key(c));
  ap_stable_plan *plan = nullptr;
  ap_error err;
  EXPECT_EQ(AP_OK, ap_stable_plan_create(endpoint_keys.data(), nullptr, endpoint_keys.size(),
                                         client_keys.data(), clients, min_aperture, &plan, &err))
      << err.message;
  std::vector<std::vector<std::string>> out(clients);
  for (uint32_t c = 0; plan != nullptr && c < clients; c++) {
    const uint32_t *row = ap_stable_plan_row_endpoints(plan, c);
    for (size_t k = 0; k < ap_stable_plan_row_size(plan, c); k++) out[c].push_back(addresses[row[k]]);
  }
  ap_stable_plan_destroy(plan);
  return out;
}

// The prediction's members of each client, as address strings.
std::vector<std::vector<std::string>> ModelMembers(const churn_model_fleet &fleet,
                                                   const std::vector<std::string> &addresses) {
  std::vector<const char *> p = Pointers(addresses);
  std::vector<std::vector<std::string>> out(fleet.clients);
  for (uint32_t c = 0; c < fleet.clients; c++) {
    std::vector<uint8_t> member(addresses.size());
    ap_error err;
    EXPECT_EQ(AP_OK, io_churn_model_members(&fleet, p.data(), p.size(), c, member.data(), &err))
        << err.message;
    for (size_t i = 0; i < addresses.size(); i++) {
      if (member[i]) out[c].push_back(addresses[i]);
    }
  }
  return out;
}

size_t SymmetricDifference(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<std::string> d;
  std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(d));
  return d.size();
}

const Point kStablePoints[] = {{8, 4, 3}, {12, 4, 3}, {13, 7, 3}, {16, 8, 2}, {9, 5, 12}};

TEST(ChurnModelTest, StablePredictionIsThePlanOfTheAddressKeys) {
  for (const Point &pt : kStablePoints) {
    SCOPED_TRACE(std::to_string(pt.servers) + ":" + std::to_string(pt.clients) + ":" +
                 std::to_string(pt.min_aperture));
    std::vector<std::string> all = MixedAddresses(pt.servers, 10);
    churn_model_fleet fleet = {AP_MODE_STABLE, pt.clients, pt.min_aperture, nullptr};
    std::vector<std::vector<std::string>> model = ModelMembers(fleet, all);
    std::vector<std::vector<std::string>> plan = PlanMembers(all, pt.clients, pt.min_aperture);
    for (uint32_t c = 0; c < pt.clients; c++) {
      EXPECT_EQ(0u, SymmetricDifference(model[c], plan[c])) << "client " << c;
      EXPECT_GE(model[c].size(), std::min<size_t>(pt.min_aperture, pt.servers)) << "client " << c;
    }
  }
}

TEST(ChurnModelTest, StableDeployStepsMatchThePlansOfBothAnswers) {
  for (const Point &pt : kStablePoints) {
    SCOPED_TRACE(std::to_string(pt.servers) + ":" + std::to_string(pt.clients) + ":" +
                 std::to_string(pt.min_aperture));
    churn_model_fleet fleet = {AP_MODE_STABLE, pt.clients, pt.min_aperture, nullptr};
    std::vector<std::string> current = MixedAddresses(pt.servers, 10);
    std::vector<std::string> replacements = MixedAddresses(pt.servers, 10 + pt.servers);
    for (uint32_t i = 0; i < pt.servers; i++) {  // a rolling replacement
      std::vector<std::string> next = current;
      next[i] = replacements[i];
      std::vector<std::vector<std::string>> before = PlanMembers(current, pt.clients, pt.min_aperture);
      std::vector<std::vector<std::string>> after = PlanMembers(next, pt.clients, pt.min_aperture);
      long expected = 0;
      for (uint32_t c = 0; c < pt.clients; c++) expected += static_cast<long>(SymmetricDifference(before[c], after[c]));
      std::vector<const char *> b = Pointers(current), a = Pointers(next);
      churn_model_change ch;
      ap_error err;
      ASSERT_EQ(AP_OK, io_churn_model_diff(&fleet, b.data(), b.size(), a.data(), a.size(), &ch, &err))
          << err.message;
      EXPECT_EQ(expected, ch.changed) << "replacing " << current[i] << " by " << next[i];
      EXPECT_GE(ch.changed, ch.optimum);
      current = next;
    }
  }
}

}  // namespace
