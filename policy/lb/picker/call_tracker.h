// Call tracking: counts a call in flight on its endpoint from the pick to
// its end, and its failure, and tells the endpoint's health (ap_health.h)
// when a call starts, how it ended and how long a successful one took;
// under the peakEwma metric it also times the call from Start(), under orca
// it reads the server's reported CPU utilization (ORCA, through gRPC's
// BackendMetricAccessor) into the endpoint's load (ap_load.h), and, when
// asked to sample rates, one call per endpoint every 100 ms also decodes the
// raw trailer for the rate the server reports (ap_orca.h: gRPC 1.51 does
// not parse rps_fractional). Allocated in the call's arena by the picker.
//
// Atomic read-modify-writes on the endpoint's shared line per call: two,
// the start (constructor, in Pick(): the pick count and the call in flight
// in one add) and the end (Finish(), or the destructor for a call that
// never reported one). The call in flight is what keeps the endpoint's
// counters alive (endpoint_counters.h), so the tracker holds a plain
// pointer and no reference. Before: five (picks + 1 in Pick(), a
// RefCountedPtr copy, outstanding + 1 in Start(), - 1 in Finish(), the
// reference released in the destructor). The health's stores (ap_health.h)
// are plain and skipped when the value does not change.
#ifndef APERTURE_LB_PICKER_CALL_TRACKER_H
#define APERTURE_LB_PICKER_CALL_TRACKER_H

#include "policy/core/pick/ap_load.h"
#include "policy/lb/picker/endpoint_counters.h"
#include "src/core/lib/load_balancing/lb_policy.h"

namespace aperture_lb {

// Lives in the call's arena: the channel destroys it through
// std::unique_ptr, so operator delete frees nothing (the arena owns the
// memory). The constructor starts the call on `counters` (the caller holds
// an owner reference then: the picker); Start() runs right after the pick;
// Finish() on whatever thread ends the call; a call that never reported
// its end (not started: gRPC dropped the pick; or cancelled) ends when the
// tracker is destroyed. After its end the tracker does not touch
// `counters` again: the end may have freed them.
class CallTracker
    : public grpc_core::LoadBalancingPolicy::SubchannelCallTrackerInterface {
 public:
  // `sample_rates`: under orca, sample the reported rate (the skew
  // balance's input; policy/lb/skew/skew_balance.h).
  CallTracker(EndpointCounters* counters, const ap_health_config& health,
              ap_pick_metric metric = AP_PICK_OUTSTANDING,
              bool sample_rates = false);
  ~CallTracker() override;

  static void operator delete(void*) {}

  void Start() override;
  void Finish(FinishArgs args) override;

  // Whether a call's status counts toward ejection: the transport or the
  // server failing (UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED,
  // INTERNAL, UNKNOWN), not an answer the application gave.
  static bool CountsAsFailure(const absl::Status& status);

 private:
  // Alive until this tracker's end: its call is in flight on it.
  EndpointCounters* const counters_;
  // A copy: the tracker may outlive the picker and its config.
  const ap_health_config health_;
  // Health switched off (ejectAfterFailures and stuckCallMs 0): no health
  // call and no health clock at all.
  const bool health_on_;
  const ap_pick_metric metric_;
  const bool sample_rates_;
  // No call was in flight on the endpoint before this one (its pick).
  const bool idle_before_;
  bool started_ = false;
  bool sample_latency_ = false;  // this call is timed for the latency EWMA
  bool finished_ = false;  // ended: counters_ must not be touched
  int64_t start_ns_ = 0;  // peakEwma only
  // The health clock at Start(), when it was read: for an idle endpoint's
  // progress time, and for one call in AP_HEALTH_LATENCY_SAMPLE's latency
  // (ap_health.h); -1 when not read.
  int64_t start_ms_ = -1;
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_PICKER_CALL_TRACKER_H
