// The stable plan from its written definition (see stable_oracle.h). Written
// for clarity, not speed: std::sort, explicit scans, vectors of rows.
#include "tests/oracle/stable_oracle.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace stable_oracle {
namespace {

constexpr uint64_t kSaltEndpoint = 0x5DEECE66DA3B1F27ull;
constexpr uint64_t kSaltCoin = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kStep = 0x9E3779B97F4A7C15ull;
constexpr uint32_t kPoints = 32;
constexpr double kTolerance = 1e-3;
constexpr uint32_t kMaxRounds = 500;
constexpr uint32_t kStallRounds = 16;
constexpr double kStallGain = 0.01;
constexpr double kShareFloor = 1e-12;

constexpr uint64_t kK1 = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kK2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kK3 = 0x165667B19E3779F9ull;

uint64_t Rotl(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

uint64_t Absorb(uint64_t h, uint64_t w) {
  return Rotl(h ^ (Rotl(w * kK2, 31) * kK1), 27) * kK3 + kK2;
}

// Index of the first element of `sorted` (ascending by .first) whose
// position is >= pos, wrapping to 0 past the end: a linear scan.
template <typename T>
size_t FirstAtOrAfter(const std::vector<std::pair<uint64_t, T>>& sorted,
                      uint64_t pos) {
  for (size_t k = 0; k < sorted.size(); ++k)
    if (sorted[k].first >= pos) return k;
  return 0;
}

}  // namespace

uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t SplitMix64Output(uint64_t seed, uint64_t k) {
  uint64_t state = seed;
  uint64_t out = 0;
  for (uint64_t j = 0; j < k; ++j) {
    state += kStep;
    out = Mix64(state);
  }
  return out;
}

uint64_t Hash64(const std::string& bytes, uint64_t seed) {
  const uint64_t len = bytes.size();
  uint64_t h = (seed + kK3) ^ (len * kK1);
  size_t at = 0;
  for (; at + 8 <= bytes.size(); at += 8) {
    uint64_t b = 0;
    for (unsigned j = 0; j < 8; ++j)
      b |= (uint64_t)(unsigned char)bytes[at + j] << (8 * j);
    h = Absorb(h, b);
  }
  if (at < bytes.size()) {
    uint64_t t = 0;
    for (unsigned j = 0; at + j < bytes.size(); ++j)
      t |= (uint64_t)(unsigned char)bytes[at + j] << (8 * j);
    h = Absorb(h, t);
  }
  return Mix64(h ^ len);
}

uint64_t Key(const std::string& identity) { return Hash64(identity, kSaltEndpoint); }
uint64_t OrdinalKey(uint64_t k) { return Mix64(k ^ kStep); }
uint64_t ClientPoint(uint64_t key, uint32_t v) { return Mix64(key + v * kStep); }
uint64_t EndpointPoint(uint64_t key) { return Mix64(key ^ kSaltEndpoint); }
uint32_t CoverCount(uint64_t key) {
  return (Mix64(key ^ kSaltCoin) >> 63) == 0 ? 2u : 1u;
}

bool ComputePlan(const std::vector<uint64_t>& endpoint_keys,
                 const std::vector<double>& weights,
                 const std::vector<uint64_t>& client_keys,
                 uint32_t min_aperture, Plan* out) {
  const size_t n = endpoint_keys.size(), c = client_keys.size();
  if (n == 0 || c == 0 || min_aperture == 0) return false;
  if (!weights.empty() && weights.size() != n) return false;
  for (double w : weights)
    if (!(w > 0) || !std::isfinite(w)) return false;

  // Canonical order: by ascending key. by_key[r] = caller's index.
  std::vector<size_t> e_order(n), c_order(c);
  for (size_t k = 0; k < n; ++k) e_order[k] = k;
  for (size_t k = 0; k < c; ++k) c_order[k] = k;
  std::sort(e_order.begin(), e_order.end(),
            [&](size_t a, size_t b) { return endpoint_keys[a] < endpoint_keys[b]; });
  std::sort(c_order.begin(), c_order.end(),
            [&](size_t a, size_t b) { return client_keys[a] < client_keys[b]; });
  std::vector<uint64_t> ek(n), ck(c);
  std::vector<double> w(n, 1.0);
  for (size_t r = 0; r < n; ++r) {
    ek[r] = endpoint_keys[e_order[r]];
    if (!weights.empty()) w[r] = weights[e_order[r]];
    if (r > 0 && ek[r] == ek[r - 1]) return false;
  }
  for (size_t r = 0; r < c; ++r) {
    ck[r] = client_keys[c_order[r]];
    if (r > 0 && ck[r] == ck[r - 1]) return false;
  }

  // Rings. A client point's tie-break is the client's canonical rank
  // (ascending key), so sorting (position, rank) pairs orders the ring.
  std::vector<std::pair<uint64_t, uint32_t>> client_ring, endpoint_ring;
  for (size_t r = 0; r < c; ++r)
    for (uint32_t v = 0; v < kPoints; ++v)
      client_ring.push_back({ClientPoint(ck[r], v), (uint32_t)r});
  for (size_t r = 0; r < n; ++r) endpoint_ring.push_back({EndpointPoint(ek[r]), (uint32_t)r});
  std::sort(client_ring.begin(), client_ring.end());
  std::sort(endpoint_ring.begin(), endpoint_ring.end());

  // Membership as a 0/1 matrix, canonical rows and columns.
  std::vector<std::vector<bool>> member(c, std::vector<bool>(n, false));
  for (size_t s = 0; s < n; ++s) {
    const size_t want = std::min<size_t>(CoverCount(ek[s]), c);
    std::vector<uint32_t> got;
    size_t at = FirstAtOrAfter(client_ring, EndpointPoint(ek[s]));
    while (got.size() < want) {
      const uint32_t who = client_ring[at].second;
      if (std::find(got.begin(), got.end(), who) == got.end()) got.push_back(who);
      at = (at + 1) % client_ring.size();
    }
    for (uint32_t who : got) member[who][s] = true;
  }
  const size_t a = std::min<size_t>(min_aperture, n);
  for (size_t r = 0; r < c; ++r) {
    size_t at = FirstAtOrAfter(endpoint_ring, ClientPoint(ck[r], 0));
    for (size_t k = 0; k < a; ++k) {
      member[r][endpoint_ring[at].second] = true;
      at = (at + 1) % n;
    }
  }
  std::vector<std::vector<uint32_t>> rows(c);
  for (size_t r = 0; r < c; ++r)
    for (size_t s = 0; s < n; ++s)
      if (member[r][s]) rows[r].push_back((uint32_t)s);

  // Scaling.
  double total_weight = 0;
  for (size_t s = 0; s < n; ++s) total_weight += w[s];
  std::vector<double> target(n), v(n, 1.0), u(c), col(n);
  for (size_t s = 0; s < n; ++s) target[s] = (double)c * w[s] / total_weight;
  for (size_t r = 0; r < c; ++r) u[r] = 1.0 / (double)rows[r].size();
  double mark = std::numeric_limits<double>::infinity();
  uint32_t rounds = 0;
  for (uint32_t round = 0;; ++round) {
    std::fill(col.begin(), col.end(), 0.0);
    for (size_t r = 0; r < c; ++r)
      for (uint32_t s : rows[r]) col[s] += u[r];
    double err = 0;
    // One-sided: only an endpoint above its target counts.
    for (size_t s = 0; s < n; ++s) err = std::max(err, col[s] * v[s] / target[s] - 1.0);
    rounds = round;
    if (err <= kTolerance || round >= kMaxRounds) break;
    if (round % kStallRounds == 0) {
      if (mark - err < kStallGain * mark) break;
      mark = err;
    }
    for (size_t s = 0; s < n; ++s) v[s] = target[s] / col[s];
    for (size_t r = 0; r < c; ++r) {
      double sum = 0;
      for (uint32_t s : rows[r]) sum += v[s];
      u[r] = 1.0 / sum;
    }
  }
  std::vector<std::vector<double>> shares(c);
  std::fill(col.begin(), col.end(), 0.0);
  for (size_t r = 0; r < c; ++r) {
    double top = 0;
    for (uint32_t s : rows[r]) top = std::max(top, v[s]);
    double sum = 0;
    for (uint32_t s : rows[r]) {
      const double x = v[s] > top * kShareFloor ? v[s] : top * kShareFloor;
      shares[r].push_back(x);
      sum += x;
    }
    for (size_t k = 0; k < rows[r].size(); ++k) {
      shares[r][k] /= sum;
      col[rows[r][k]] += shares[r][k];
    }
  }
  double load_max = 0;
  for (size_t s = 0; s < n; ++s) load_max = std::max(load_max, col[s] / target[s]);

  // Back to the caller's order, rows ascending by the caller's index.
  Plan plan;
  plan.members.resize(c);
  plan.shares.resize(c);
  for (size_t r = 0; r < c; ++r) {
    std::vector<std::pair<uint32_t, double>> row;
    for (size_t k = 0; k < rows[r].size(); ++k)
      row.push_back({(uint32_t)e_order[rows[r][k]], shares[r][k]});
    std::sort(row.begin(), row.end());
    for (const auto& m : row) {
      plan.members[c_order[r]].push_back(m.first);
      plan.shares[c_order[r]].push_back(m.second);
    }
  }
  plan.load_max = load_max;
  plan.rounds = rounds;
  *out = std::move(plan);
  return true;
}

}  // namespace stable_oracle
