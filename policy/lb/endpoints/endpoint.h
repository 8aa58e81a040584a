// One aperture member with its subchannel, and the watcher that feeds the
// subchannel's connectivity changes back to the policy.
#ifndef APERTURE_LB_ENDPOINTS_ENDPOINT_H
#define APERTURE_LB_ENDPOINTS_ENDPOINT_H

#include <map>
#include <string>

#include "absl/status/status.h"

#include <grpc/impl/codegen/connectivity_state.h>

#include "policy/core/skew/ap_skew.h"
#include "policy/lb/picker/endpoint_counters.h"
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
  // `policy` is the observer's LB policy (kept alive by this endpoint);
  // `health_group` the policy's (its counters' health joins it).
  Endpoint(grpc_core::RefCountedPtr<grpc_core::LoadBalancingPolicy> policy,
           EndpointObserver* observer, std::string address,
           grpc_core::RefCountedPtr<grpc_core::SubchannelInterface> subchannel,
           ap_health_group* health_group = nullptr);

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
  // The skew balance's state of this endpoint: this client's rate to it and
  // its pick-weight factor (ap_skew.h; policy/lb/skew/skew_balance.h). Kept
  // while the endpoint is a member, reset with it.
  ap_skew_member_state* skew() { return &skew_; }
  const ap_skew_member_state* skew() const { return &skew_; }

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
  ap_skew_member_state skew_;
  bool shut_down_ = false;
};

// The policy's endpoints, keyed by address ("host:port").
using EndpointMap = std::map<std::string, grpc_core::RefCountedPtr<Endpoint>>;

// Asks every IDLE endpoint to connect.
void ConnectIdleEndpoints(const EndpointMap& endpoints);

}  // namespace aperture_lb

#endif  // APERTURE_LB_ENDPOINTS_ENDPOINT_H
