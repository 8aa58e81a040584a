#include "policy/lb/picker/call_tracker.h"

namespace aperture_lb {

CallTracker::~CallTracker() {
  if (started_ && !finished_) ap_load_call_end(&counters_->load);
}

void CallTracker::Start() {
  started_ = true;
  if (metric_ == AP_PICK_PEAK_EWMA) start_ns_ = ap_load_now_ns();
  start_ms_ = ap_health_now_ms();  // coarse: a few ns
  const int64_t before = ap_load_call_start(&counters_->load);
  if (before <= 0) ap_health_on_start(counters_->health, before, start_ms_);
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
  ap_load_state* load = &counters_->load;
  switch (metric_) {
    case AP_PICK_PEAK_EWMA:
      // Every end is a latency sample, failures included (as Finagle).
      ap_load_call_finish(load, start_ns_, ap_load_now_ns());
      break;
    case AP_PICK_ORCA: {
      // gRPC parses the endpoint-load-metrics-bin trailer on demand; a
      // server that sent none (or cpu_utilization absent: -1) records
      // nothing, and its last report goes stale after 5 s.
      const grpc_core::BackendMetricData* data =
          args.backend_metric_accessor != nullptr
              ? args.backend_metric_accessor->GetBackendMetricData()
              : nullptr;
      if (data != nullptr && data->cpu_utilization >= 0) {
        ap_load_record_utilization(load, data->cpu_utilization,
                                   ap_load_coarse_now_ns(), nullptr);
      }
      ap_load_call_end(load);  // no latency sample
      break;
    }
    default:
      ap_load_call_end(load);
      break;
  }
  if (!args.status.ok()) {
    counters_->failures.fetch_add(1, std::memory_order_relaxed);
  }
  const int64_t now_ms = ap_health_now_ms();
  // Successful calls only: a failure's latency is its deadline, not the
  // member's speed.
  if (args.status.ok()) ap_health_record_latency(counters_->health, now_ms - start_ms_);
  ap_health_on_finish(counters_->health, CountsAsFailure(args.status), &health_, now_ms);
}

}  // namespace aperture_lb
