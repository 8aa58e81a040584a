// Per-endpoint call counters, shared by the policy, its pickers, the call
// trackers (which may outlive both) and the status snapshots.
#ifndef APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H
#define APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H

#include <stdint.h>

#include <atomic>

#include "policy/core/ap_health.h"
#include "src/core/lib/gprpp/ref_counted.h"

namespace aperture_lb {

// Cache-line aligned: threads picking different endpoints do not share a
// line. Relaxed atomics: readers (the pick, the status) want a recent
// value, not an ordering.
class alignas(64) EndpointCounters
    : public grpc_core::RefCounted<EndpointCounters> {
 public:
  std::atomic<int64_t> outstanding{0};  // calls started and not finished
  std::atomic<uint64_t> picks{0};
  std::atomic<uint64_t> failures{0};    // calls that ended with an error
  // Gray-failure health (ap_health.h); null only when out of memory, which
  // every ap_health function takes as "healthy".
  ap_health* const health = ap_health_create();

  ~EndpointCounters() { ap_health_destroy(health); }
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H
