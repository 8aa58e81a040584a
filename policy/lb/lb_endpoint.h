// One aperture member with its subchannel, and the watcher that feeds the
// subchannel's connectivity changes back to the policy.
#ifndef APERTURE_LB_ENDPOINT_H
#define APERTURE_LB_ENDPOINT_H

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include <grpc/impl/codegen/connectivity_state.h>

#include "policy/core/ap_aperture.h"
#include "policy/lb/lb_affinity_picker.h"
#include "policy/lb/lb_picker.h"
#include "policy/lb/lb_ring_snapshot.h"
#include "src/core/lib/gprpp/ref_counted.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"
#include "src/core/lib/load_balancing/lb_policy.h"
#include "src/core/lib/load_balancing/subchannel_interface.h"

namespace aperture_lb {

class Endpoint;

// What the policy does when one of its endpoints changes state. Runs in the
// policy's work serializer.
class EndpointObserver {
 public:
  virtual void OnEndpointStateChangeLocked(Endpoint* endpoint,
                                           grpc_connectivity_state old_state,
                                           bool old_failed) = 0;

 protected:
  ~EndpointObserver() = default;
};

// Shared by the policy's endpoint map and the connectivity watcher; keeps
// the policy alive while it exists. Not thread-safe: every method runs in
// the policy's work serializer.
class Endpoint : public grpc_core::RefCounted<Endpoint> {
 public:
  // `policy` is the observer's LB policy (kept alive by this endpoint).
  Endpoint(grpc_core::RefCountedPtr<grpc_core::LoadBalancingPolicy> policy,
           EndpointObserver* observer, std::string address,
           grpc_core::RefCountedPtr<grpc_core::SubchannelInterface> subchannel);

  // Starts watching the subchannel; ShutdownLocked() stops it (idempotent).
  void StartWatchLocked();
  void ShutdownLocked();

  const std::string& address() const { return address_; }
  grpc_core::SubchannelInterface* subchannel() const {
    return subchannel_.get();
  }
  const grpc_core::RefCountedPtr<grpc_core::SubchannelInterface>&
  subchannel_ref() const {
    return subchannel_;
  }
  const grpc_core::RefCountedPtr<EndpointCounters>& counters() const {
    return counters_;
  }
  grpc_connectivity_state state() const { return state_; }
  // TRANSIENT_FAILURE seen since the last READY.
  bool failed() const { return failed_; }
  const absl::Status& last_failure() const { return last_failure_; }

 private:
  class Watcher;

  void OnStateChangeLocked(grpc_connectivity_state state, absl::Status status);

  grpc_core::RefCountedPtr<grpc_core::LoadBalancingPolicy> policy_;
  EndpointObserver* const observer_;
  const std::string address_;
  grpc_core::RefCountedPtr<grpc_core::SubchannelInterface> subchannel_;
  grpc_core::RefCountedPtr<EndpointCounters> counters_;
  grpc_core::SubchannelInterface::ConnectivityStateWatcherInterface* watcher_ =
      nullptr;
  grpc_connectivity_state state_ = GRPC_CHANNEL_IDLE;
  bool failed_ = false;
  absl::Status last_failure_;
  bool shut_down_ = false;
};

// The policy's endpoints, keyed by address ("host:port").
using EndpointMap = std::map<std::string, grpc_core::RefCountedPtr<Endpoint>>;

// The aperture's endpoints as the next picker sees them. Members without a
// subchannel and draining members are left out.
struct ApertureCensus {
  std::vector<AperturePicker::Slot> ready;  // READY members, aperture order
  std::vector<AffinityMember> affinity;     // every counted member
  size_t total = 0;                         // counted members
  size_t not_failed = 0;                    // of those, not failed
  size_t idle = 0;                          // of those, IDLE
  const Endpoint* last_failed = nullptr;    // the last failed one, if any
};

// The ready[] array ap_aperture_widen() takes: one byte per ring endpoint,
// 0 for a draining member or a failed endpoint. Reset() fills it once per
// rebuild (O(N)); Mark() then only touches the endpoints with a subchannel
// (O(aperture)), so a member's connectivity change costs no O(N) pass.
class UsableMask {
 public:
  // Every member of `ring` usable but the draining ones.
  void Reset(const RingSnapshot& ring);
  // Restores the endpoints the last Mark() cleared, clears the failed ones
  // of `endpoints` (members of the ring Reset() saw) and returns the array
  // (ring.size() bytes, valid until the next call).
  const uint8_t* Mark(const RingSnapshot& ring, const EndpointMap& endpoints);
  // Bytes written by Reset() and Mark() so far (for tests).
  uint64_t writes() const { return writes_; }

 private:
  std::vector<uint8_t> usable_;
  std::vector<uint32_t> cleared_;  // failed endpoints cleared by Mark()
  uint64_t writes_ = 0;
};

// Asks every IDLE endpoint to connect.
void ConnectIdleEndpoints(const EndpointMap& endpoints);

// Counts the endpoints of `members` (an aperture over `ring`).
ApertureCensus TakeCensus(const RingSnapshot& ring, const ap_aperture* members,
                          const EndpointMap& endpoints);

}  // namespace aperture_lb

#endif  // APERTURE_LB_ENDPOINT_H
