// Per-endpoint call counters and load (ap_load.h), shared by the policy,
// its pickers, the call trackers (which may outlive both) and the status
// snapshots.
#ifndef APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H
#define APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H

#include <stdint.h>

#include <atomic>

#include "policy/core/ap_health.h"
#include "policy/core/ap_load.h"
#include "src/core/lib/gprpp/ref_counted.h"

namespace aperture_lb {

// Cache-line aligned: threads picking different endpoints do not share a
// line. Relaxed atomics: readers (the pick, the status) want a recent
// value, not an ordering.
class alignas(64) EndpointCounters
    : public grpc_core::RefCounted<EndpointCounters> {
 public:
  EndpointCounters() { ap_load_init(&load); }

  // Calls started and not finished (never negative).
  int64_t Outstanding() const { return ap_load_outstanding(&load); }

  // Calls in flight, the peak EWMA of latency and the smoothed reported
  // utilization: only through the ap_load functions (atomic inside).
  ap_load_state load;
  std::atomic<uint64_t> picks{0};
  std::atomic<uint64_t> failures{0};    // calls that ended with an error
  // Gray-failure health (ap_health.h); null only when out of memory, which
  // every ap_health function takes as "healthy".
  ap_health* const health = ap_health_create();

  ~EndpointCounters() { ap_health_destroy(health); }
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H
