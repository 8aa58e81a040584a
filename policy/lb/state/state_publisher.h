// Holds the latest published state of one policy instance for the status
// service (through the registry), beside the live counters that change
// without a new published state.
#ifndef APERTURE_LB_STATE_STATE_PUBLISHER_H
#define APERTURE_LB_STATE_STATE_PUBLISHER_H

#include <stdint.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"

#include "policy/lb/state/published_state.h"
#include "policy/registry/ap_registry.h"

namespace aperture_lb {

// Counters that change without a new published state: one atomic per entry
// of policy/registry/ap_ring_counters.def, which says what each counts. The
// policy adds to them; Snapshot() copies them into ap_ring_state's fields of
// the same names.
struct LiveCounters {
#define AP_RING_COUNTER(name, kind, metric, help, text) \
  std::atomic<uint64_t> name{0};
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
};

// Holds the latest published state of one instance. Publish() runs in the
// policy's work serializer; Snapshot() runs on any thread (the registry
// calls it); the mutex only guards swapping the pointer.
class StatePublisher {
 public:
  explicit StatePublisher(std::string target) : target_(std::move(target)) {}

  void Publish(std::shared_ptr<const PublishedState> state);
  LiveCounters& counters() { return counters_; }

  // The registry's snapshot callback (ap_snapshot_fn): AP_SNAPSHOT_SKIP when
  // the target does not pass out->query's filter, otherwise a deep copy into
  // `out` (zeroed by the caller except `query`), malloc'd for the registry,
  // holding only the page of endpoints out->query asks for (all when NULL).
  int Snapshot(ap_ring_state* out);

 private:
  const std::string target_;
  absl::Mutex mu_;
  std::shared_ptr<const PublishedState> state_ ABSL_GUARDED_BY(mu_);
  LiveCounters counters_;
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_STATE_STATE_PUBLISHER_H
