// Brute-force apertures from the definitions (see aperture_oracle.h): every
// quantity is computed directly, in long double, one arc and one ring
// segment at a time. Slow on purpose; the tests use at most a few dozen
// endpoints.
#include "tests/oracle/aperture_oracle.h"

#include <stdlib.h>

#include <algorithm>

namespace oracle {
namespace {

typedef long double real;

// Length of [a0, a1) ∩ [b0, b1).
real Overlap(real a0, real a1, real b0, real b1) {
  real lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? hi - lo : 0;
}

// A window on the ring: [start, start + width) taken mod 1, width in (0, 1].
struct Window {
  real start, width;
  // Length of the part of [s, e) (0 <= s <= e <= 1) inside the window.
  real OverlapWith(real s, real e) const {
    if (width >= 1) return e - s;
    real end = start + width;
    if (end <= 1) return Overlap(s, e, start, end);
    return Overlap(s, e, start, 1) + Overlap(s, e, 0, end - 1);
  }
  bool Contains(real x) const {
    if (width >= 1) return true;
    real d = x - start;
    if (d < 0) d += 1;
    return d < width;
  }
};

// Arc boundaries b_0 = 0 .. b_n = 1 from the weights.
std::vector<real> Boundaries(size_t n, const std::vector<double>& weights) {
  std::vector<real> b(n + 1, 0);
  real total = 0;
  for (size_t j = 0; j < n; ++j) total += weights.empty() ? 1 : weights[j];
  real sum = 0;
  for (size_t j = 0; j < n; ++j) {
    b[j] = sum / total;
    sum += weights.empty() ? 1 : weights[j];
  }
  b[n] = 1;
  return b;
}

// Window of client k in the given mode.
Window WindowOf(Mode mode, size_t n, uint32_t k, uint32_t count, uint32_t a) {
  Window w;
  w.start = static_cast<real>(k) / count;
  if (mode == Mode::kContinuous) {
    // m = ceil(A*C/N), in integers.
    uint64_t m = (static_cast<uint64_t>(a) * count + n - 1) / n;
    w.width = m >= count ? 1 : static_cast<real>(m) / count;
  } else {
    real by_aperture = static_cast<real>(a) / n;
    real by_peers = static_cast<real>(1) / count;
    w.width = std::min<real>(1, std::max(by_aperture, by_peers));
  }
  return w;
}

// ∫ over [s, e) ∩ window `mine` of 1/c(x), c(x) = number of the `count`
// windows that contain x. c is piecewise constant between the windows'
// ends, so the integral is a sum over those segments.
real InverseCoverageIntegral(Mode mode, size_t n, uint32_t index, uint32_t count,
                             uint32_t a, real s, real e) {
  std::vector<real> cuts = {s, e};
  for (uint32_t k = 0; k < count; ++k) {
    Window w = WindowOf(mode, n, k, count, a);
    for (real x : {w.start, w.start + w.width - (w.start + w.width >= 1 ? 1 : 0)}) {
      if (x > s && x < e) cuts.push_back(x);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  const Window mine = WindowOf(mode, n, index, count, a);
  real sum = 0;
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    real lo = cuts[c], hi = cuts[c + 1];
    if (hi <= lo) continue;
    real mid = (lo + hi) / 2;
    if (!mine.Contains(mid)) continue;
    int covering = 0;
    for (uint32_t k = 0; k < count; ++k) {
      covering += WindowOf(mode, n, k, count, a).Contains(mid) ? 1 : 0;
    }
    sum += (hi - lo) / covering;  // covering >= 1: `mine` contains mid
  }
  return sum;
}

}  // namespace

std::vector<Member> Aperture(Mode mode, size_t n, uint32_t peer_index,
                             uint32_t peer_count, uint32_t min_aperture,
                             const std::vector<double>& weights) {
  std::vector<Member> out;
  if (n == 0 || peer_count == 0 || peer_index >= peer_count || min_aperture == 0 ||
      (!weights.empty() && weights.size() != n)) {
    return out;
  }
  for (double w : weights) {
    if (!(w > 0)) return out;
  }
  auto weight = [&](size_t j) { return weights.empty() ? 1.0 : weights[j]; };
  if (mode == Mode::kMesh) {
    for (size_t j = 0; j < n; ++j) out.push_back({j, 1.0, weight(j)});
    return out;
  }
  const uint32_t a = static_cast<uint32_t>(std::min<size_t>(min_aperture, n));
  const std::vector<real> b = Boundaries(n, weights);
  const Window window = WindowOf(mode, n, peer_index, peer_count, a);
  for (size_t j = 0; j < n; ++j) {
    real arc = b[j + 1] - b[j];
    real overlap = window.OverlapWith(b[j], b[j + 1]);
    if (overlap <= 1e-12L * arc) continue;  // a sliver is not a member
    Member m;
    m.ring_index = j;
    m.intersection = static_cast<double>(overlap / arc);
    if (mode == Mode::kContinuous) {
      m.pick_weight = m.intersection * weight(j);
    } else {
      real integral = InverseCoverageIntegral(mode, n, peer_index, peer_count, a,
                                              b[j], b[j + 1]);
      m.pick_weight = static_cast<double>(integral / arc * weight(j));
    }
    out.push_back(m);
  }
  return out;
}

std::vector<Member> WindowMembers(size_t n, double start, double width,
                                  const std::vector<double>& weights) {
  std::vector<Member> out;
  if (n == 0 || !(start >= 0 && start < 1) || !(width > 0 && width <= 1) ||
      (!weights.empty() && weights.size() != n)) {
    return out;
  }
  for (double w : weights) {
    if (!(w > 0)) return out;
  }
  const std::vector<real> b = Boundaries(n, weights);
  const Window window{start, width};
  for (size_t j = 0; j < n; ++j) {
    real arc = b[j + 1] - b[j];
    real overlap = window.OverlapWith(b[j], b[j + 1]);
    if (overlap <= 1e-12L * arc) continue;
    double intersection = static_cast<double>(overlap / arc);
    out.push_back({j, intersection, intersection * (weights.empty() ? 1.0 : weights[j])});
  }
  return out;
}

std::vector<std::string> RingOrder(const std::vector<std::string>& addresses,
                                   uint64_t (*host_hash)(const std::string& host)) {
  struct Key {
    uint64_t hash;
    long port;
    std::string address;
  };
  std::vector<Key> keys;
  for (const std::string& address : addresses) {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon + 1 == address.size()) return {};
    char* end = nullptr;
    long port = strtol(address.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535) return {};
    keys.push_back({host_hash(address.substr(0, colon)), port, address});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& x, const Key& y) {
    if (x.hash != y.hash) return x.hash < y.hash;
    return x.port != y.port ? x.port < y.port : x.address < y.address;
  });
  std::vector<std::string> out;
  for (const Key& k : keys) out.push_back(k.address);
  return out;
}

std::set<std::string> MemberAddresses(Mode mode, const std::vector<std::string>& ring,
                                      uint32_t peer_index, uint32_t peer_count,
                                      uint32_t min_aperture) {
  std::set<std::string> out;
  for (const Member& m : Aperture(mode, ring.size(), peer_index, peer_count, min_aperture)) {
    out.insert(ring[m.ring_index]);
  }
  return out;
}

SessionChange EndpointChange(Mode mode, const std::vector<std::string>& before_ring,
                             const std::vector<std::string>& after_ring,
                             uint32_t clients, uint32_t min_aperture) {
  SessionChange out;
  const std::set<std::string> before_all(before_ring.begin(), before_ring.end());
  const std::set<std::string> after_all(after_ring.begin(), after_ring.end());
  for (uint32_t c = 0; c < clients; ++c) {
    std::set<std::string> b = MemberAddresses(mode, before_ring, c, clients, min_aperture);
    std::set<std::string> a = MemberAddresses(mode, after_ring, c, clients, min_aperture);
    out.sessions_before += static_cast<long>(b.size());
    out.sessions_after += static_cast<long>(a.size());
    for (const std::string& x : b) {
      if (a.count(x) == 0) out.changed++;
      if (after_all.count(x) == 0) out.optimum++;
    }
    for (const std::string& x : a) {
      if (b.count(x) == 0) out.changed++;
      if (before_all.count(x) == 0) out.optimum++;
    }
  }
  return out;
}

std::vector<std::string> RingOrderOneHost(
    const std::vector<std::string>& addresses) {
  struct Key {
    long port;
    std::string address;
  };
  std::vector<Key> keys;
  std::string host;
  for (const std::string& address : addresses) {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon + 1 == address.size()) return {};
    std::string h = address.substr(0, colon);
    if (keys.empty()) host = h;
    if (h != host) return {};
    char* end = nullptr;
    long port = strtol(address.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535) return {};
    keys.push_back({port, address});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& x, const Key& y) {
    return x.port != y.port ? x.port < y.port : x.address < y.address;
  });
  std::vector<std::string> out;
  for (const Key& k : keys) out.push_back(k.address);
  return out;
}

std::map<std::string, double> ExpectedByAddress(
    Mode mode, const std::vector<std::string>& addresses, uint32_t peer_index,
    uint32_t peer_count, uint32_t min_aperture,
    const std::map<std::string, double>& weights) {
  std::map<std::string, double> out;
  std::vector<std::string> ring = RingOrderOneHost(addresses);
  if (ring.empty()) return out;
  std::vector<double> ring_weights;
  for (const std::string& address : ring) {
    auto it = weights.find(address);
    ring_weights.push_back(it == weights.end() ? 1.0 : it->second);
  }
  for (const Member& m : Aperture(mode, ring.size(), peer_index, peer_count,
                                  min_aperture, ring_weights)) {
    out[ring[m.ring_index]] = m.pick_weight;
  }
  return out;
}

}  // namespace oracle
