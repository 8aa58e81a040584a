#include "policy/lb/lb_timer.h"

#include <utility>

#include "src/core/lib/gprpp/debug_location.h"
#include "src/core/lib/gprpp/time.h"
#include "src/core/lib/iomgr/exec_ctx.h"

namespace aperture_lb {

uint64_t MonotonicNowMs() {
  // The ExecCtx caches "now"; a timer callback must see the real time or it
  // could find its deadline not yet reached and re-arm the same deadline.
  grpc_core::ExecCtx::Get()->InvalidateNow();
  return grpc_core::Timestamp::Now().milliseconds_after_process_epoch();
}

SerializedTimer::SerializedTimer(
    std::shared_ptr<grpc_core::WorkSerializer> serializer,
    uint64_t deadline_ms, std::function<void()> on_fire)
    : serializer_(std::move(serializer)),
      deadline_ms_(deadline_ms),
      on_fire_(std::move(on_fire)) {
  GRPC_CLOSURE_INIT(&on_timer_, OnTimer, this, nullptr);
  Ref().release();  // held by the pending timer callback
  grpc_timer_init(&timer_,
                  grpc_core::Timestamp::FromMillisecondsAfterProcessEpoch(
                      static_cast<int64_t>(deadline_ms)),
                  &on_timer_);
}

void SerializedTimer::Orphan() {
  if (pending_) {
    pending_ = false;
    grpc_timer_cancel(&timer_);
  }
  Unref();
}

void SerializedTimer::OnTimer(void* arg, grpc_error_handle error) {
  auto* self = static_cast<SerializedTimer*>(arg);
  self->serializer_->Run([self, error]() { self->OnTimerLocked(error); },
                         DEBUG_LOCATION);
}

void SerializedTimer::OnTimerLocked(grpc_error_handle error) {
  if (error.ok() && pending_) {
    pending_ = false;
    // Moved out first: the callback may orphan this timer (replacing it).
    std::function<void()> on_fire = std::move(on_fire_);
    on_fire();
  }
  Unref();
}

void PeriodicTimer::ConfigureLocked(uint64_t interval_ms,
                                    std::function<void()> on_fire) {
  if (interval_ms == 0) {
    timer_.reset();
    on_fire_ = nullptr;
    interval_ms_ = 0;
    return;
  }
  if (timer_ != nullptr && interval_ms_ == interval_ms) return;
  interval_ms_ = interval_ms;
  on_fire_ = std::move(on_fire);
  StartLocked();
}

void PeriodicTimer::StartLocked() {
  timer_ = grpc_core::MakeOrphanable<SerializedTimer>(
      serializer_, MonotonicNowMs() + interval_ms_, [this]() {
        timer_.reset();
        if (on_fire_ == nullptr) return;
        StartLocked();  // first: on_fire_ may stop or reconfigure
        std::function<void()> on_fire = on_fire_;
        on_fire();
      });
}

}  // namespace aperture_lb
