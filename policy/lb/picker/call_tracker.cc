#include "policy/lb/picker/call_tracker.h"

namespace aperture_lb {

CallTracker::~CallTracker() {
  if (started_ && !finished_) {
    counters_->outstanding.fetch_sub(1, std::memory_order_relaxed);
  }
}

void CallTracker::Start() {
  started_ = true;
  counters_->outstanding.fetch_add(1, std::memory_order_relaxed);
}

void CallTracker::Finish(FinishArgs args) {
  if (!started_ || finished_) return;
  finished_ = true;
  counters_->outstanding.fetch_sub(1, std::memory_order_relaxed);
  if (!args.status.ok()) {
    counters_->failures.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace aperture_lb
