// Pick() on a real aperture picker (core pick table, P2C, arena call
// tracker with Start/Finish) over 12, 100 and 1000 endpoints, on 1 and 2
// threads.
//   bazel run -c opt //tests/lb:pick_benchmark
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <benchmark/benchmark.h>

#include "policy/core/ap_pick.h"
#include "policy/core/ap_rng.h"
#include "policy/lb/picker/picker.h"
#include "tests/lb/picker_fakes.h"

namespace {

using grpc_core::LoadBalancingPolicy;

using aperture_test::IdleSubchannel;
using aperture_test::ScratchCallState;

aperture_lb::AperturePicker* PickerFor(size_t n) {
  static std::mutex mu;
  static std::map<size_t, std::unique_ptr<aperture_lb::AperturePicker>> pickers;
  std::lock_guard<std::mutex> lock(mu);
  auto& picker = pickers[n];
  if (picker == nullptr) {
    std::vector<aperture_lb::AperturePicker::Slot> slots;
    std::vector<double> weights;
    ap_rng rng;
    ap_rng_seed(&rng, 42);
    for (size_t i = 0; i < n; ++i) {
      // Intersection-like weights in (0.5, 1].
      double w = 1.0 - 0.5 * ap_rng_uniform(&rng);
      slots.push_back({grpc_core::MakeRefCounted<IdleSubchannel>(),
                       grpc_core::MakeRefCounted<aperture_lb::EndpointCounters>(),
                       w});
      weights.push_back(w);
    }
    ap_pick_table* table = nullptr;
    if (ap_pick_table_create(weights.data(), n, &table, nullptr) != AP_OK) abort();
    picker = std::make_unique<aperture_lb::AperturePicker>(
        std::move(slots), aperture_lb::PickTablePtr(table), 2);
  }
  return picker.get();
}

void BM_PickWithCallTracker(benchmark::State& state) {
  aperture_lb::AperturePicker* picker = PickerFor(state.range(0));
  ScratchCallState call_state;
  LoadBalancingPolicy::PickArgs args{"/bench.Service/Method", nullptr,
                                     &call_state};
  for (auto _ : state) {
    LoadBalancingPolicy::PickResult result = picker->Pick(args);
    auto* complete =
        absl::get_if<LoadBalancingPolicy::PickResult::Complete>(&result.result);
    if (complete == nullptr) {
      state.SkipWithError("pick did not complete");
      break;
    }
    complete->subchannel_call_tracker->Start();
    complete->subchannel_call_tracker->Finish(
        {absl::OkStatus(), nullptr, nullptr});
    benchmark::DoNotOptimize(complete->subchannel.get());
  }
}
BENCHMARK(BM_PickWithCallTracker)->Arg(12)->Arg(100)->Arg(1000)->Threads(1);
BENCHMARK(BM_PickWithCallTracker)->Arg(12)->Arg(100)->Arg(1000)->Threads(2);

}  // namespace

BENCHMARK_MAIN();
