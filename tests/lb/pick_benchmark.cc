// Pick() on a real aperture picker (core pick table, P2C, arena call
// tracker with Start/Finish) over 12, 100 and 1000 endpoints, on 1 and 2
// threads, under each pick metric (second argument: 0 outstanding,
// 1 peakEwma, 2 orca), with the gray-failure health on (third argument 1:
// the default health config, the endpoints in one health group as the
// policy makes them) or switched off (0: ejectAfterFailures and
// stuckCallMs 0, so neither the pick nor the tracker makes a health call
// or reads the health clock): the difference is what the health decision
// costs. Under orca every Finish() reads a fixed backend metric report
// (cpu_utilization 0.5) through the accessor, as gRPC hands it over, so
// the reports stay fresh and the metric path is measured, not the
// fallback. Metric 3 is orca with the skew balance, as the policy runs
// orca by default (clientSkewBalance): the trackers also sample the rate in
// the raw trailer, one call per endpoint every 100 ms (here a fixed trailer
// whose lookup costs less than gRPC's; every other call pays the check).
//   bazel run -c opt //tests/lb:pick_benchmark
#include <string.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <memory>
#include <mutex>
#include <vector>

#include <benchmark/benchmark.h>

#include "policy/core/pick/ap_health_group.h"
#include "policy/core/pick/ap_load.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/ap_rng.h"
#include "policy/core/ap_rng_testing.h"
#include "policy/lb/core_ptr.h"
#include "policy/lb/picker/picker.h"
#include "tests/lb/picker_fakes.h"

namespace {

using grpc_core::LoadBalancingPolicy;

using aperture_test::IdleSubchannel;
using aperture_test::ScratchCallState;

// What gRPC's client channel hands the call tracker: a parsed report.
class FixedMetrics
    : public LoadBalancingPolicy::BackendMetricAccessor {
 public:
  FixedMetrics() { data_.cpu_utilization = 0.5; }
  const grpc_core::BackendMetricData* GetBackendMetricData() override {
    return &data_;
  }

 private:
  grpc_core::BackendMetricData data_;
};

// The call's trailing metadata with a rate report (rps_fractional 250).
class FixedTrailers : public LoadBalancingPolicy::MetadataInterface {
 public:
  FixedTrailers() {
    const double rps = 250;
    uint64_t bits;
    memcpy(&bits, &rps, sizeof bits);
    bytes_.push_back('\x31');  // field 6, a double
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>(bits >> (8 * i)));
  }
  void Add(absl::string_view, absl::string_view) override {}
  std::vector<std::pair<std::string, std::string>> TestOnlyCopyToVector()
      override {
    return {};
  }
  absl::optional<absl::string_view> Lookup(absl::string_view key,
                                           std::string*) const override {
    if (key != "endpoint-load-metrics-bin") return absl::nullopt;
    return absl::string_view(bytes_);
  }

 private:
  std::string bytes_;
};

constexpr int kOrcaWithSkew = 3;  // the benchmarks' metric argument

aperture_lb::AperturePicker* PickerFor(size_t n, int metric_arg, bool health) {
  const bool skew = metric_arg == kOrcaWithSkew;
  const auto metric =
      skew ? AP_PICK_ORCA : static_cast<ap_pick_metric>(metric_arg);
  static std::mutex mu;
  static std::map<std::tuple<size_t, int, bool>,
                  std::unique_ptr<aperture_lb::AperturePicker>>
      pickers;
  static aperture_lb::HealthGroupPtr group(ap_health_group_create());
  std::lock_guard<std::mutex> lock(mu);
  auto& picker = pickers[{n, metric_arg, health}];
  if (picker == nullptr) {
    ap_health_group_set_members(group.get(), static_cast<uint32_t>(n));
    std::vector<aperture_lb::AperturePicker::Slot> slots;
    std::vector<double> weights;
    ap_rng rng;
    ap_rng_seed(&rng, 42);
    for (size_t i = 0; i < n; ++i) {
      // Intersection-like weights in (0.5, 1].
      double w = 1.0 - 0.5 * ap_rng_uniform(&rng);
      auto counters =
          grpc_core::MakeRefCounted<aperture_lb::EndpointCounters>(group.get());
      // Every endpoint has data, so the metric (not the fallback) is used.
      ap_load_record_latency(&counters->load,
                             1000000 + (int64_t)(1e6 * ap_rng_uniform(&rng)),
                             ap_load_now_ns(), nullptr);
      ap_load_record_utilization(&counters->load, ap_rng_uniform(&rng),
                                 ap_load_coarse_now_ns(), nullptr);
      slots.push_back({grpc_core::MakeRefCounted<IdleSubchannel>(),
                       std::move(counters), w});
      weights.push_back(w);
    }
    ap_pick_table* table = nullptr;
    if (ap_pick_table_create(weights.data(), n, &table, nullptr) != AP_OK) abort();
    ap_health_config config = aperture_lb::AperturePicker::DefaultHealth();
    if (!health) {
      config.eject_after_failures = 0;
      config.stuck_call_ms = 0;
    }
    picker = std::make_unique<aperture_lb::AperturePicker>(
        std::move(slots), aperture_lb::PickTablePtr(table), 2, nullptr, config,
        metric, skew, group.get());
  }
  return picker.get();
}

void Label(benchmark::State& state, int metric_arg) {
  const char* metric =
      metric_arg == kOrcaWithSkew
          ? "orca+skew"
          : ap_pick_metric_name(static_cast<ap_pick_metric>(metric_arg));
  state.SetLabel(std::string(metric) +
                 (state.range(2) ? " health" : " health-off"));
}

void BM_PickWithCallTracker(benchmark::State& state) {
  const int metric = static_cast<int>(state.range(1));
  aperture_lb::AperturePicker* picker =
      PickerFor(state.range(0), metric, state.range(2) != 0);
  Label(state, metric);
  FixedMetrics metrics;
  FixedTrailers trailers;
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
        {absl::OkStatus(), &trailers, &metrics});
    benchmark::DoNotOptimize(complete->subchannel.get());
  }
}
// Pick() alone: the choice and the tracker's placement in the arena, no
// Start()/Finish() (the tracker is destroyed unstarted).
void BM_PickOnly(benchmark::State& state) {
  const int metric = static_cast<int>(state.range(1));
  aperture_lb::AperturePicker* picker =
      PickerFor(state.range(0), metric, state.range(2) != 0);
  Label(state, metric);
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
    benchmark::DoNotOptimize(complete->subchannel.get());
  }
}
BENCHMARK(BM_PickOnly)
    ->ArgsProduct({{12, 100, 1000}, {0, 1, 2, kOrcaWithSkew}, {1, 0}})
    ->ArgNames({"endpoints", "metric", "health"})
    ->Threads(1);
BENCHMARK(BM_PickWithCallTracker)
    ->ArgsProduct({{12, 100, 1000}, {0, 1, 2, kOrcaWithSkew}, {1, 0}})
    ->ArgNames({"endpoints", "metric", "health"})
    ->Threads(1);
BENCHMARK(BM_PickWithCallTracker)
    ->ArgsProduct({{12, 100, 1000}, {0, 1, 2, kOrcaWithSkew}, {1, 0}})
    ->ArgNames({"endpoints", "metric", "health"})
    ->Threads(2);

}  // namespace

BENCHMARK_MAIN();
