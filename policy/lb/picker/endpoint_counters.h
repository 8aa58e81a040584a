// Per-endpoint call counters and load (ap_load.h), shared by the policy,
// its pickers, the call trackers (which may outlive both) and the status
// snapshots.
//
// Ownership. Two kinds of holder keep an EndpointCounters alive:
//   - owners: the endpoint, every picker slot and every status snapshot
//     that lists it, through RefCountedPtr<EndpointCounters> (the owner
//     count below, changed only when those are built or dropped);
//   - calls in flight: a call tracker (call_tracker.h) holds a plain
//     pointer from BeginCall() (in Pick(), while the picker's owner
//     reference is held) to its one EndCall()/FinishCall(), and its call
//     is counted in flight by ap_load in between: that count is its
//     reference, so a call costs no reference-count operation of its own.
// The object is freed once, when the last owner has let go AND no call is
// in flight: the last Unref() calls ap_load_release(), which frees at once
// when nothing is in flight; otherwise the call end that brings the calls
// in flight to 0 frees it (ap_load.h, Lifetime: each side learns from its
// own atomic add whether it is the last, so nothing touches the object
// after a decision that was not its own).
//
// Cost per call on the shared line (the calls in flight): two atomic
// read-modify-writes, the start in Pick() (which is also the pick count)
// and the end. Before, a call made five: picks + 1, the tracker's
// reference + 1, outstanding + 1 and - 1, the reference - 1.
#ifndef APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H
#define APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H

#include <stdint.h>

#include <atomic>

#include "policy/core/pick/ap_health.h"
#include "policy/core/pick/ap_load.h"
#include "policy/core/skew/ap_orca.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"

namespace aperture_lb {

// Cache-line aligned: threads picking different endpoints do not share a
// line; what the pick reads (health, load) is on the first line, then the
// sampled ORCA rate, the failure and owner counts, and the health state's
// own two lines. Relaxed atomics where
// readers (the pick, the status) want a recent value, not an ordering.
class alignas(64) EndpointCounters {
 public:
  // One owner: the RefCountedPtr that MakeRefCounted() returns. `group`:
  // the health group of the endpoint's aperture (ap_health_group.h: the
  // bound on members out and the peers' silences); null: alone.
  explicit EndpointCounters(ap_health_group* group = nullptr)
      : health(ap_health_init_at(health_memory_, sizeof health_memory_, group)) {
    ap_load_init(&load);
    ap_orca_sample_init(&orca);
    live_.fetch_add(1, std::memory_order_relaxed);
  }
  EndpointCounters(const EndpointCounters&) = delete;
  EndpointCounters& operator=(const EndpointCounters&) = delete;

  // Owner references, as RefCountedPtr calls them. The last Unref() frees
  // the object, or leaves that to the end of the last call in flight.
  void IncrementRefCount() { owners_.fetch_add(1, std::memory_order_relaxed); }
  grpc_core::RefCountedPtr<EndpointCounters> Ref() {
    IncrementRefCount();
    return grpc_core::RefCountedPtr<EndpointCounters>(this);
  }
  void Unref() {
    // acq_rel: every owner's picks (their starts) happen before the
    // release, as ap_load_release() requires.
    if (owners_.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
        ap_load_release(&load)) {
      delete this;
    }
  }

  // A call picked onto this endpoint: counted as a pick and in flight
  // (one atomic add). Returns the calls in flight before it. Only by a
  // holder of an owner reference (the picker).
  int64_t BeginCall() { return ap_load_call_start(&load); }
  // The call ended; `this` may be gone when it returns. Exactly once per
  // BeginCall(), after the call's last write into the object.
  void EndCall() {
    if (ap_load_call_end(&load)) delete this;
  }
  // As EndCall(), recording the call's latency (start_ns .. now_ns) into
  // the peak EWMA first.
  void FinishCall(int64_t start_ns, int64_t now_ns) {
    if (ap_load_call_finish(&load, start_ns, now_ns)) delete this;
  }

  // Calls picked (BeginCall) since the endpoint exists: the status's
  // `picks`. A pick that gRPC never starts is counted too, as it was
  // picked (its tracker ends it when gRPC drops it).
  uint64_t Picks() const { return ap_load_calls_started(&load); }
  // Calls picked and not ended (never negative): the status's
  // `outstanding`. gRPC starts a call right after its pick, in the same
  // critical section, so this is the calls started and not finished.
  int64_t Outstanding() const { return ap_load_outstanding(&load); }

  // Gray-failure health (ap_health.h), held in this object (never null).
  ap_health* const health;
  // Calls in flight and picks, the peak EWMA of latency and the smoothed
  // reported utilization: only through the ap_load functions (atomic
  // inside) and the call functions above.
  ap_load_state load;
  // The server's last sampled ORCA rate (rps_fractional), one call per
  // interval decoding it (ap_orca.h): what the skew balance reads.
  alignas(64) ap_orca_sample orca;
  alignas(64) std::atomic<uint64_t> failures{0};  // calls that ended with an error

 private:
  ~EndpointCounters() {
    ap_health_fini(health);
    live_.fetch_sub(1, std::memory_order_relaxed);
  }

  std::atomic<intptr_t> owners_{1};
  // The health's own lines, right after this object's: the call tracker
  // reads them after the first line (ap_health_init_at).
  alignas(64) unsigned char health_memory_[AP_HEALTH_FOOTPRINT];
  // Objects alive in the process, for tests' leak checks
  // (LiveEndpointCounters() in test_hooks.h).
  static inline std::atomic<int64_t> live_{0};
  friend int64_t LiveEndpointCounters();
};

// What the status service shows of an endpoint's calls: one reader per
// entry of policy/registry/ap_endpoint_counters.def, named after it (the
// publisher calls endpoint_status::NAME, so an entry without its reader
// does not compile).
namespace endpoint_status {
inline uint64_t outstanding(const EndpointCounters& c) {
  return static_cast<uint64_t>(c.Outstanding());
}
inline uint64_t picks(const EndpointCounters& c) { return c.Picks(); }
inline uint64_t failures(const EndpointCounters& c) {
  return c.failures.load(std::memory_order_relaxed);
}
}  // namespace endpoint_status

}  // namespace aperture_lb

#endif  // APERTURE_LB_PICKER_ENDPOINT_COUNTERS_H
