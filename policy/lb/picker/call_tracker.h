// Call tracking: counts a call in flight on its endpoint from Start() to
// Finish(), and its failure; under the peakEwma metric it also times the
// call, under orca it reads the server's reported CPU utilization (ORCA,
// through gRPC's BackendMetricAccessor) into the endpoint's load
// (ap_load.h). Allocated in the call's arena by the picker.
#ifndef APERTURE_LB_PICKER_CALL_TRACKER_H
#define APERTURE_LB_PICKER_CALL_TRACKER_H

#include <stdint.h>

#include "policy/core/ap_load.h"
#include "policy/lb/picker/endpoint_counters.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"
#include "src/core/lib/load_balancing/lb_policy.h"

namespace aperture_lb {

// Lives in the call's arena: the channel destroys it through
// std::unique_ptr, so operator delete frees nothing (the arena owns the
// memory). Start() runs right after the pick; Finish() on whatever thread
// ends the call; a call that started but never reported its end leaves
// when the tracker is destroyed (no latency sample then).
class CallTracker
    : public grpc_core::LoadBalancingPolicy::SubchannelCallTrackerInterface {
 public:
  CallTracker(grpc_core::RefCountedPtr<EndpointCounters> counters,
              ap_pick_metric metric = AP_PICK_OUTSTANDING)
      : counters_(std::move(counters)), metric_(metric) {}
  ~CallTracker() override;

  static void operator delete(void*) {}

  void Start() override;
  void Finish(FinishArgs args) override;

 private:
  grpc_core::RefCountedPtr<EndpointCounters> counters_;
  const ap_pick_metric metric_;
  bool started_ = false;
  bool finished_ = false;
  int64_t start_ns_ = 0;  // peakEwma only
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_PICKER_CALL_TRACKER_H
