// Benchmarks of the core's hot and warm paths:
//   bazel run -c opt //tests/core:core_benchmark
// Targets: one pick2 + P2C decision under 50 ns; a 10,000-endpoint
// rebuild under 2 ms.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ring/ap_order.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/core/ap_rng.h"
#include "policy/core/stable/ap_stable.h"
#include "policy/core/stable/ap_stable_testing.h"

namespace {

// Peer count used for the client coordinate: 1/10 of the endpoints, at
// least 3, so the aperture is the usual ~12-13 members.
uint32_t PeersFor(size_t n) { return n / 10 < 3 ? 3 : (uint32_t)(n / 10); }

ap_subset_params ParamsFor(ap_mode mode, size_t n) {
  ap_subset_params p;
  ap_subset_params_init(&p);
  p.mode = mode;
  p.peer_count = PeersFor(n);
  p.peer_index = p.peer_count / 3;
  p.random_seed = 42;
  return p;
}

// Ring + aperture (continuous) for N endpoints.
void BM_RingAndAperture(benchmark::State &state) {
  const size_t n = (size_t)state.range(0);
  const ap_subset_params p = ParamsFor(AP_MODE_CONTINUOUS, n);
  for (auto _ : state) {
    ap_ring *ring = nullptr;
    ap_aperture *ap = nullptr;
    ap_ring_create(nullptr, n, &ring, nullptr);
    ap_aperture_compute(ring, &p, &ap, nullptr);
    benchmark::DoNotOptimize(ap);
    ap_aperture_destroy(ap);
    ap_ring_destroy(ring);
  }
}
BENCHMARK(BM_RingAndAperture)->Arg(10)->Arg(1000)->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

// What the policy does on a resolver update: ring + aperture + pick table,
// per mode, for 10,000 endpoints.
void BM_Rebuild(benchmark::State &state) {
  const size_t n = 10000;
  const ap_mode mode = (ap_mode)state.range(0);
  ap_subset_params p = ParamsFor(mode, n);
  std::vector<double> weights;
  // Stable also rebuilds its one extra input, the service's plan.
  std::vector<uint64_t> endpoint_keys, peer_keys;
  for (size_t s = 0; s < n; ++s) endpoint_keys.push_back(ap_stable_ordinal_key(s));
  for (uint32_t i = 0; i < p.peer_count; ++i) peer_keys.push_back(ap_stable_ordinal_key(i));
  for (auto _ : state) {
    ap_ring *ring = nullptr;
    ap_aperture *ap = nullptr;
    ap_pick_table *table = nullptr;
    ap_stable_plan *plan = nullptr;
    ap_ring_create(nullptr, n, &ring, nullptr);
    if (mode == AP_MODE_STABLE) {
      ap_stable_plan_create(endpoint_keys.data(), nullptr, n, peer_keys.data(), p.peer_count,
                            p.min_aperture, &plan, nullptr);
      p.stable_plan = plan;
    }
    ap_aperture_compute(ring, &p, &ap, nullptr);
    const size_t count = ap_aperture_count(ap);
    weights.resize(count);
    for (size_t k = 0; k < count; ++k) {
      weights[k] = ap_aperture_member(ap, k)->pick_weight;
    }
    ap_pick_table_create(weights.data(), count, &table, nullptr);
    benchmark::DoNotOptimize(table);
    ap_pick_table_destroy(table);
    ap_aperture_destroy(ap);
    ap_stable_plan_destroy(plan);
    ap_ring_destroy(ring);
  }
  state.SetLabel(ap_mode_name(mode));
}
BENCHMARK(BM_Rebuild)
    ->Arg(AP_MODE_CONTINUOUS)->Arg(AP_MODE_SMOOTH)->Arg(AP_MODE_DISCRETE)
    ->Arg(AP_MODE_RANDOM)->Arg(AP_MODE_VDC)->Arg(AP_MODE_MESH)
    ->Arg(AP_MODE_STABLE)->Unit(benchmark::kMicrosecond);

// The stable plan of a whole service (what every client of a stable-mode
// service computes on each rebuild): endpoints x peers, keys from address
// strings as the policy makes them. The design bound: 10,000 x 1,000 in
// at most 10 ms.
void BM_StablePlan(benchmark::State &state) {
  const size_t n = (size_t)state.range(0), c = (size_t)state.range(1);
  std::vector<uint64_t> endpoints, peers;
  for (size_t s = 0; s < n; ++s) {
    const std::string a = "10." + std::to_string(s / 65536) + "." +
                          std::to_string((s / 256) % 256) + "." +
                          std::to_string(s % 256) + ":8080";
    endpoints.push_back(ap_stable_key(a.c_str()));
  }
  for (size_t i = 0; i < c; ++i) {
    peers.push_back(ap_stable_key(("192.168.0." + std::to_string(i)).c_str()));
  }
  uint32_t rounds = 0;
  double load = 0;
  for (auto _ : state) {
    ap_stable_plan *plan = nullptr;
    ap_stable_plan_create(endpoints.data(), nullptr, n, peers.data(), c, 12,
                          &plan, nullptr);
    rounds = ap_stable_plan_rounds(plan);
    load = ap_stable_plan_load_max(plan);
    ap_stable_plan_destroy(plan);
  }
  state.counters["scaling_rounds"] = rounds;
  state.counters["load_max"] = load;
}
BENCHMARK(BM_StablePlan)
    ->Args({100, 100})->Args({1000, 100})->Args({10000, 1000})
    ->Unit(benchmark::kMillisecond);

// Ordering 10,000 address strings and fingerprinting them (the other half
// of a rebuild when the address list changed).
void BM_OrderAndFingerprint(benchmark::State &state) {
  const size_t n = (size_t)state.range(0);
  std::vector<std::string> addresses;
  for (size_t i = 0; i < n; ++i) {
    addresses.push_back("10." + std::to_string(i / 65536) + "." +
                        std::to_string((i / 256) % 256) + "." +
                        std::to_string(i % 256) + ":8080");
  }
  std::vector<const char *> ptrs;
  for (const auto &a : addresses) ptrs.push_back(a.c_str());
  std::vector<size_t> order(n);
  for (auto _ : state) {
    ap_order_endpoints(ptrs.data(), n, order.data(), nullptr);
    benchmark::DoNotOptimize(
        ap_order_fingerprint(ptrs.data(), order.data(), n));
  }
}
BENCHMARK(BM_OrderAndFingerprint)->Arg(10000)->Unit(benchmark::kMicrosecond);

// One P2C decision as the picker makes it (two independent weighted draws,
// the fair comparison) over a continuous aperture's 13 weights.
void BM_Pick2P2C(benchmark::State &state) {
  ap_ring *ring = nullptr;
  ap_aperture *ap = nullptr;
  ap_ring_create(nullptr, 100, &ring, nullptr);
  ap_subset_params p = ParamsFor(AP_MODE_CONTINUOUS, 100);
  p.peer_count = 7;
  p.peer_index = 3;
  ap_aperture_compute(ring, &p, &ap, nullptr);
  const size_t count = ap_aperture_count(ap);
  std::vector<double> weights(count);
  for (size_t k = 0; k < count; ++k) {
    weights[k] = ap_aperture_member(ap, k)->pick_weight;
  }
  ap_pick_table *table = nullptr;
  ap_pick_table_create(weights.data(), count, &table, nullptr);
  std::vector<double> load(count, 0.0);
  ap_rng rng;
  ap_rng_seed(&rng, 7);
  for (auto _ : state) {
    const size_t a = ap_pick1(table, &rng), b = ap_pick1(table, &rng);
    const ap_candidate ca = {load[a], weights[a], 1};
    const ap_candidate cb = {load[b], weights[b], 1};
    const size_t chosen =
        a != b && ap_p2c_choose_fair(&ca, &cb, &rng) ? b : a;
    load[chosen] += 1.0;  // stands in for the call tracker's increment
    if (load[chosen] > 64) load[chosen] = 0;
    benchmark::DoNotOptimize(chosen);
  }
  state.SetLabel(std::to_string(count) + " members");
  ap_pick_table_destroy(table);
  ap_aperture_destroy(ap);
  ap_ring_destroy(ring);
}
BENCHMARK(BM_Pick2P2C);

}  // namespace
