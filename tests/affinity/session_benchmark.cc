// Cost of the sticky-session decision per call: ap_session_table_route()
// for a known key (the common case: one shard lock, one hash lookup, an LRU
// move) and for a flood of new keys at the cap (eviction and block reuse),
// and of the hash-mode choice (lock-free binary search on the ring).
//   bazel run -c opt //tests/affinity:session_benchmark
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

extern "C" {
#include "policy/affinity/ap_affinity.h"
#include "policy/affinity/ap_session_table.h"
}

namespace {

const char* kAddress = "127.0.0.1:50051";
int Usable(void*, const char*) { return 1; }
const char* Place(void*) { return kAddress; }

std::vector<std::string> Keys(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("session-" + std::to_string(i));
  return out;
}

ap_session_table* g_table = nullptr;

void BM_RouteKnownKey(benchmark::State& state) {
  static const std::vector<std::string> keys = Keys(10000);
  if (state.thread_index() == 0) {
    ap_session_table_create(100000, 600000, &g_table, nullptr);
  }
  ap_session_chooser ch = {&Usable, &Place, nullptr};
  size_t i = static_cast<size_t>(state.thread_index()) * 7919;
  for (auto _ : state) {
    const std::string& k = keys[i++ % keys.size()];
    ap_session_table_route(g_table, k.data(), k.size(), 1000, &ch, nullptr,
                           nullptr);
  }
  if (state.thread_index() == 0) {
    ap_session_table_destroy(g_table);
    g_table = nullptr;
  }
}
BENCHMARK(BM_RouteKnownKey)->Threads(1)->Threads(2);

void BM_RouteNewKeysAtTheCap(benchmark::State& state) {
  static const std::vector<std::string> keys = Keys(200000);
  ap_session_table* t = nullptr;
  ap_session_table_create(1000, 0, &t, nullptr);
  ap_session_chooser ch = {&Usable, &Place, nullptr};
  size_t i = 0;
  for (auto _ : state) {
    const std::string& k = keys[i++ % keys.size()];
    ap_session_table_route(t, k.data(), k.size(), 1000, &ch, nullptr, nullptr);
  }
  state.counters["size"] = static_cast<double>(ap_session_table_size(t));
  ap_session_table_destroy(t);
}
BENCHMARK(BM_RouteNewKeysAtTheCap);

void BM_HashChoose(benchmark::State& state) {
  const int members = static_cast<int>(state.range(0));
  std::vector<std::string> names;
  std::vector<const char*> pointers;
  for (int m = 0; m < members; ++m)
    names.push_back("10.0." + std::to_string(m / 256) + "." +
                    std::to_string(m % 256) + ":443");
  for (const auto& n : names) pointers.push_back(n.c_str());
  ap_hash_ring* ring = nullptr;
  ap_hash_ring_create(pointers.data(), nullptr, names.size(), 100, &ring,
                      nullptr);
  std::vector<uint8_t> usable(names.size(), 1);
  static const std::vector<std::string> keys = Keys(10000);
  size_t i = 0, member = 0;
  for (auto _ : state) {
    const std::string& k = keys[i++ % keys.size()];
    ap_affinity_hash_choose(ring, k.data(), k.size(), usable.data(), &member,
                            nullptr);
    benchmark::DoNotOptimize(member);
  }
  ap_hash_ring_destroy(ring);
}
BENCHMARK(BM_HashChoose)->Arg(12)->Arg(100)->Arg(1000);

}  // namespace
