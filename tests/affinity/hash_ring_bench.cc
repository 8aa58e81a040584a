// Benchmarks of the consistent-hash ring: build, lookup (binary search) and
// lookup skipping unusable members.
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

extern "C" {
#include "policy/core/ap_hash.h"
#include "policy/affinity/ap_hash_ring.h"
}

namespace {

struct Fixture {
  std::vector<std::string> names;
  std::vector<const char*> ptrs;
  ap_hash_ring* ring = nullptr;
  Fixture(int members, uint32_t vnodes) {
    for (int i = 0; i < members; i++)
      names.push_back("10.0." + std::to_string(i / 256) + "." +
                      std::to_string(i % 256) + ":443");
    for (const auto& n : names) ptrs.push_back(n.c_str());
    ap_hash_ring_create(ptrs.data(), nullptr, ptrs.size(), vnodes, &ring,
                        nullptr);
  }
  ~Fixture() { ap_hash_ring_destroy(ring); }
};

void BM_Build(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)), 100);
  for (auto _ : state) {
    ap_hash_ring* r = nullptr;
    ap_hash_ring_create(f.ptrs.data(), nullptr, f.ptrs.size(), 100, &r,
                        nullptr);
    ap_hash_ring_destroy(r);
  }
  state.SetLabel(std::to_string(state.range(0) * 100) + " points");
}
BENCHMARK(BM_Build)->Arg(12)->Arg(100)->Arg(1000);

void BM_Lookup(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)), 100);
  uint64_t h = 0;
  size_t sink = 0;
  for (auto _ : state) {
    h = ap_mix64(h);
    sink += ap_hash_ring_lookup(f.ring, h);
  }
  benchmark::DoNotOptimize(sink);
}
BENCHMARK(BM_Lookup)->Arg(12)->Arg(100)->Arg(1000);

void BM_LookupUsableHalfDown(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)), 100);
  std::vector<uint8_t> usable(f.names.size());
  for (size_t i = 0; i < usable.size(); i++) usable[i] = i % 2;
  uint64_t h = 0;
  size_t sink = 0, member = 0;
  for (auto _ : state) {
    h = ap_mix64(h);
    ap_hash_ring_lookup_usable(f.ring, h, usable.data(), &member, nullptr);
    sink += member;
  }
  benchmark::DoNotOptimize(sink);
}
BENCHMARK(BM_LookupUsableHalfDown)->Arg(12)->Arg(100)->Arg(1000);

}  // namespace
