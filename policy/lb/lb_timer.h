// A one-shot timer whose callback runs in the policy's WorkSerializer, the
// way gRPC 1.51.1's own policies schedule theirs (outlier_detection's
// EjectionTimer): grpc_timer_init + a closure that hops into the serializer.
#ifndef APERTURE_LB_TIMER_H
#define APERTURE_LB_TIMER_H

#include <stdint.h>

#include <functional>
#include <memory>

#include "src/core/lib/gprpp/orphanable.h"
#include "src/core/lib/gprpp/work_serializer.h"
#include "src/core/lib/iomgr/closure.h"
#include "src/core/lib/iomgr/error.h"
#include "src/core/lib/iomgr/timer.h"

namespace aperture_lb {

// The monotonic clock the policy feeds to ap_membership: milliseconds since
// gRPC's process epoch (the clock grpc_timer deadlines use). Needs an
// ExecCtx on the thread (policy callbacks have one).
uint64_t MonotonicNowMs();

class SerializedTimer : public grpc_core::InternallyRefCounted<SerializedTimer> {
 public:
  // Runs `on_fire` in `serializer` once, at or after `deadline_ms`
  // (MonotonicNowMs() clock), unless orphaned first. `on_fire` owns whatever
  // it captures (e.g. a ref to the policy) until the timer is gone.
  // Create and orphan it in the serializer.
  SerializedTimer(std::shared_ptr<grpc_core::WorkSerializer> serializer,
                  uint64_t deadline_ms, std::function<void()> on_fire);

  // Cancels the timer; `on_fire` will not run.
  void Orphan() override;

  uint64_t deadline_ms() const { return deadline_ms_; }

 private:
  static void OnTimer(void* arg, grpc_error_handle error);
  void OnTimerLocked(grpc_error_handle error);

  std::shared_ptr<grpc_core::WorkSerializer> serializer_;
  const uint64_t deadline_ms_;
  std::function<void()> on_fire_;
  grpc_timer timer_;
  grpc_closure on_timer_;
  bool pending_ = true;  // only touched in the serializer
};

// Runs a callback every interval in the serializer (e.g. the policy's
// periodic re-resolution). Every method runs in the serializer.
class PeriodicTimer {
 public:
  explicit PeriodicTimer(std::shared_ptr<grpc_core::WorkSerializer> serializer)
      : serializer_(std::move(serializer)) {}

  // Runs `on_fire` every `interval_ms` from now on; 0 stops. The interval
  // already running keeps its timer and callback; a changed one starts
  // over. `on_fire` may hold a ref to its owner: StopLocked() drops it.
  void ConfigureLocked(uint64_t interval_ms, std::function<void()> on_fire);
  void StopLocked() { ConfigureLocked(0, nullptr); }

 private:
  void StartLocked();

  std::shared_ptr<grpc_core::WorkSerializer> serializer_;
  uint64_t interval_ms_ = 0;
  std::function<void()> on_fire_;
  grpc_core::OrphanablePtr<SerializedTimer> timer_;
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_TIMER_H
