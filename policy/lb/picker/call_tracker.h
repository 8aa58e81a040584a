// Call tracking: counts a call in flight on its endpoint from Start() to
// Finish(), and its failure, and tells the endpoint's health (ap_health.h)
// when a call starts, how it ended and how long a successful one took; under the peakEwma metric it also
// times the call, under orca it reads the server's reported CPU utilization
// (ORCA, through gRPC's BackendMetricAccessor) into the endpoint's load
// (ap_load.h). Allocated in the call's arena by the picker.
#ifndef APERTURE_LB_PICKER_CALL_TRACKER_H
#define APERTURE_LB_PICKER_CALL_TRACKER_H

#include "policy/core/ap_load.h"
#include "policy/lb/picker/endpoint_counters.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"
#include "src/core/lib/load_balancing/lb_policy.h"

namespace aperture_lb {

// Lives in the call's arena: the channel destroys it through
// std::unique_ptr, so operator delete frees nothing (the arena owns the
// memory). Start() runs right after the pick; Finish() on whatever thread
// ends the call; a call that started but never reported its end leaves
// when the tracker is destroyed.
class CallTracker
    : public grpc_core::LoadBalancingPolicy::SubchannelCallTrackerInterface {
 public:
  CallTracker(grpc_core::RefCountedPtr<EndpointCounters> counters,
              const ap_health_config& health,
              ap_pick_metric metric = AP_PICK_OUTSTANDING)
      : counters_(std::move(counters)), health_(health), metric_(metric) {}
  ~CallTracker() override;

  static void operator delete(void*) {}

  void Start() override;
  void Finish(FinishArgs args) override;

  // Whether a call's status counts toward ejection: the transport or the
  // server failing (UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED,
  // INTERNAL, UNKNOWN), not an answer the application gave.
  static bool CountsAsFailure(const absl::Status& status);

 private:
  grpc_core::RefCountedPtr<EndpointCounters> counters_;
  // A copy: the tracker may outlive the picker and its config.
  const ap_health_config health_;
  const ap_pick_metric metric_;
  bool started_ = false;
  bool finished_ = false;
  int64_t start_ns_ = 0;  // peakEwma only
  int64_t start_ms_ = 0;  // the health clock: the latency EWMA (ap_health.h)
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_PICKER_CALL_TRACKER_H
