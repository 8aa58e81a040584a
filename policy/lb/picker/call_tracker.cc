#include "policy/lb/picker/call_tracker.h"

namespace aperture_lb {

CallTracker::~CallTracker() {
  if (started_ && !finished_) {
    counters_->outstanding.fetch_sub(1, std::memory_order_relaxed);
  }
}

void CallTracker::Start() {
  started_ = true;
  const int64_t before =
      counters_->outstanding.fetch_add(1, std::memory_order_relaxed);
  ap_health_on_start(counters_->health, before, ap_health_now_ms());
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
  counters_->outstanding.fetch_sub(1, std::memory_order_relaxed);
  if (!args.status.ok()) {
    counters_->failures.fetch_add(1, std::memory_order_relaxed);
  }
  ap_health_on_finish(counters_->health, CountsAsFailure(args.status), &health_,
                      ap_health_now_ms());
}

}  // namespace aperture_lb
