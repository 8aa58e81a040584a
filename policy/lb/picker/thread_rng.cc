#include "policy/lb/picker/thread_rng.h"

#include <stdint.h>
#include <time.h>

#include <atomic>

#include "policy/core/ap_hash.h"

namespace aperture_lb {
namespace {

std::atomic<uint64_t> g_thread_seed_counter{0};

}  // namespace

ap_rng* ThreadRng() {
  static thread_local ap_rng rng;
  static thread_local bool seeded = false;
  if (!seeded) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t seed = ap_mix64(
        static_cast<uint64_t>(ts.tv_nsec) ^
        (static_cast<uint64_t>(ts.tv_sec) << 30) ^
        ap_mix64(g_thread_seed_counter.fetch_add(1, std::memory_order_relaxed)) ^
        reinterpret_cast<uintptr_t>(&rng));
    ap_rng_seed(&rng, seed);
    seeded = true;
  }
  return &rng;
}

}  // namespace aperture_lb
