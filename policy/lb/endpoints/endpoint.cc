#include "policy/lb/endpoints/endpoint.h"

#include <memory>
#include <utility>

namespace aperture_lb {

class Endpoint::Watcher
    : public grpc_core::SubchannelInterface::ConnectivityStateWatcherInterface {
 public:
  explicit Watcher(grpc_core::RefCountedPtr<Endpoint> endpoint)
      : endpoint_(std::move(endpoint)) {}
  void OnConnectivityStateChange(grpc_connectivity_state new_state,
                                 absl::Status status) override {
    endpoint_->OnStateChangeLocked(new_state, std::move(status));
  }
  grpc_pollset_set* interested_parties() override {
    return endpoint_->policy_->interested_parties();
  }

 private:
  grpc_core::RefCountedPtr<Endpoint> endpoint_;
};

Endpoint::Endpoint(
    grpc_core::RefCountedPtr<grpc_core::LoadBalancingPolicy> policy,
    EndpointObserver* observer, std::string address,
    grpc_core::RefCountedPtr<grpc_core::SubchannelInterface> subchannel,
    ap_health_group* health_group)
    : policy_(std::move(policy)),
      observer_(observer),
      address_(std::move(address)),
      subchannel_(std::move(subchannel)),
      counters_(grpc_core::MakeRefCounted<EndpointCounters>(health_group)) {
  ap_skew_member_state_init(&skew_);
}

void Endpoint::StartWatchLocked() {
  auto watcher = std::make_unique<Watcher>(Ref());
  watcher_ = watcher.get();
  subchannel_->WatchConnectivityState(std::move(watcher));
}

void Endpoint::ShutdownLocked() {
  if (shut_down_) return;
  shut_down_ = true;
  if (watcher_ != nullptr) {
    subchannel_->CancelConnectivityStateWatch(watcher_);
    watcher_ = nullptr;
  }
}

void Endpoint::OnStateChangeLocked(grpc_connectivity_state state,
                                   absl::Status status) {
  if (shut_down_) return;
  grpc_connectivity_state old_state = state_;
  bool old_failed = failed_;
  state_ = state;
  if (state == GRPC_CHANNEL_READY) {
    failed_ = false;
    // A new connection answered the HTTP/2 handshake: whatever ejected the
    // member (a frozen process, a dead path) let it through, so it starts
    // afresh instead of waiting out its ejection (ap_health_reset).
    if (old_state != GRPC_CHANNEL_READY) {
      ap_health_reset(counters_->health, ap_health_now_ms());
    }
  } else if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
    failed_ = true;
    last_failure_ = status;
  }
  observer_->OnEndpointStateChangeLocked(this, old_state, old_failed);
}

void ConnectIdleEndpoints(const EndpointMap& endpoints) {
  for (const auto& kv : endpoints) {
    if (kv.second->state() == GRPC_CHANNEL_IDLE) {
      kv.second->subchannel()->RequestConnection();
    }
  }
}

}  // namespace aperture_lb
