#include "policy/lb/picker/call_tracker.h"

#include "policy/core/skew/ap_orca.h"
#include "policy/lb/test_hooks.h"

namespace aperture_lb {

CallTracker::CallTracker(EndpointCounters* counters,
                         const ap_health_config& health, ap_pick_metric metric,
                         bool sample_rates)
    : counters_(counters),
      health_(health),
      health_on_(ap_health_config_active(&health) != 0),
      metric_(metric),
      sample_rates_(sample_rates),
      // The pick's one atomic add; the health clock waits for Start(), so
      // a pick reads no clock for it.
      idle_before_(counters_->BeginCall() <= 0) {}

CallTracker::~CallTracker() {
  if (!finished_) counters_->EndCall();
}

void CallTracker::Start() {
  started_ = true;
  if (metric_ == AP_PICK_PEAK_EWMA) start_ns_ = ap_load_now_ns();
  if (!health_on_) return;
  // The health clock (coarse: a few ns) only when something needs it: an
  // idle endpoint starts its stuck clock (ap_health.h), and one call in
  // AP_HEALTH_LATENCY_SAMPLE is timed for the latency EWMA: the endpoint's
  // every so many picks (its own count, read from the line the pick just
  // wrote: no clock, no shared state).
  sample_latency_ = counters_->Picks() % AP_HEALTH_LATENCY_SAMPLE == 0;
  if (idle_before_ || sample_latency_) {
    start_ms_ = ap_health_now_ms();
    if (idle_before_) ap_health_on_start(counters_->health, 0, start_ms_);
  }
}

bool CallTracker::CountsAsFailure(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
      return true;
    default:
      return false;
  }
}

void CallTracker::Finish(FinishArgs args) {
  if (!started_ || finished_) return;
  finished_ = true;
  // Everything this call records goes in before its end: the end may free
  // the counters (endpoint_counters.h).
  if (metric_ == AP_PICK_ORCA) {
    // gRPC parses the endpoint-load-metrics-bin trailer on demand; a
    // server that sent none (or cpu_utilization absent: -1) records
    // nothing, and its last report goes stale after 5 s.
    const grpc_core::BackendMetricData* data =
        args.backend_metric_accessor != nullptr
            ? args.backend_metric_accessor->GetBackendMetricData()
            : nullptr;
    const int64_t now_ns = data != nullptr || sample_rates_
                               ? ap_load_coarse_now_ns()
                               : 0;
    if (data != nullptr && data->cpu_utilization >= 0) {
      ap_load_record_utilization(&counters_->load, data->cpu_utilization,
                                 now_ns, nullptr);
    }
    // One call per endpoint and interval reads the raw trailer (gRPC hands
    // out a view of its bytes for this known key, no copy) for the rate;
    // the others pay one atomic load.
    if (sample_rates_ && args.trailing_metadata != nullptr &&
        ap_orca_sample_claim(&counters_->orca, now_ns,
                             AP_ORCA_SAMPLE_INTERVAL_NS)) {
      std::string buffer;
      const absl::optional<absl::string_view> bytes =
          args.trailing_metadata->Lookup("endpoint-load-metrics-bin", &buffer);
      ap_orca_report report;
      if (bytes.has_value() &&
          ap_orca_decode(reinterpret_cast<const uint8_t*>(bytes->data()),
                         bytes->size(), &report, nullptr) == AP_OK) {
        ap_orca_sample_record(&counters_->orca, &report, now_ns, nullptr);
      }
    }
  }
  if (!args.status.ok()) {
    counters_->failures.fetch_add(1, std::memory_order_relaxed);
  }
  if (health_on_) {
    // ok() is inline; code() is a call into absl's shared library.
    const bool failed = !args.status.ok() && CountsAsFailure(args.status);
    // Successful calls only: a failure's latency is its deadline, not the
    // member's speed.
    const bool sample = sample_latency_ && args.status.ok();
    // This call is still counted: others in flight take this end as their
    // progress, which needs the time. An end that leaves the endpoint idle
    // does not: the next call's start stamps it.
    if (failed || sample || counters_->Outstanding() > 1) {
      const int64_t now_ms = ap_health_now_ms();
      if (sample) ap_health_record_latency(counters_->health, now_ms - start_ms_);
      ap_health_on_finish(counters_->health, failed, &health_, now_ms);
    } else {
      ap_health_on_idle_success(counters_->health);
    }
  }
  if (metric_ == AP_PICK_PEAK_EWMA) {
    // Every end is a latency sample, failures included (as Finagle).
    counters_->FinishCall(start_ns_, ap_load_now_ns());
  } else {
    counters_->EndCall();  // no latency sample
  }
}

int64_t LiveEndpointCounters() {
  return EndpointCounters::live_.load(std::memory_order_relaxed);
}

}  // namespace aperture_lb
