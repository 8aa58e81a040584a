#include "policy/lb/lb_endpoint.h"

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
    grpc_core::RefCountedPtr<grpc_core::SubchannelInterface> subchannel)
    : policy_(std::move(policy)),
      observer_(observer),
      address_(std::move(address)),
      subchannel_(std::move(subchannel)),
      counters_(grpc_core::MakeRefCounted<EndpointCounters>()) {}

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
  } else if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
    failed_ = true;
    last_failure_ = status;
  }
  observer_->OnEndpointStateChangeLocked(this, old_state, old_failed);
}

void UsableMask::Reset(const RingSnapshot& ring) {
  usable_.assign(ring.size(), 1);
  for (size_t i = 0; i < ring.size(); ++i) {
    if (ring.draining(i)) usable_[i] = 0;  // the widening covers it
  }
  cleared_.clear();
  writes_ += ring.size();
}

const uint8_t* UsableMask::Mark(const RingSnapshot& ring,
                                const EndpointMap& endpoints) {
  for (uint32_t i : cleared_) usable_[i] = ring.draining(i) ? 0 : 1;
  writes_ += cleared_.size();
  cleared_.clear();
  for (const auto& kv : endpoints) {
    uint32_t index = 0;
    if (!kv.second->failed() || !ring.IndexOf(kv.first, &index)) continue;
    usable_[index] = 0;
    cleared_.push_back(index);
  }
  writes_ += cleared_.size();
  return usable_.data();
}

void ConnectIdleEndpoints(const EndpointMap& endpoints) {
  for (const auto& kv : endpoints) {
    if (kv.second->state() == GRPC_CHANNEL_IDLE) {
      kv.second->subchannel()->RequestConnection();
    }
  }
}

ApertureCensus TakeCensus(const RingSnapshot& ring, const ap_aperture* members,
                          const EndpointMap& endpoints) {
  ApertureCensus c;
  for (size_t k = 0; k < ap_aperture_count(members); ++k) {
    const ap_member* m = ap_aperture_member(members, k);
    if (ring.draining(m->index)) continue;  // keeps its subchannel, unpicked
    auto it = endpoints.find(ring.address(m->index));
    if (it == endpoints.end()) continue;
    const Endpoint* e = it->second.get();
    const bool ready = e->state() == GRPC_CHANNEL_READY;
    ++c.total;
    c.affinity.push_back({e->address(), ap_ring_weight(ring.ring(), m->index),
                          ready ? static_cast<int>(c.ready.size()) : -1});
    if (ready) {
      c.ready.push_back({e->subchannel_ref(), e->counters(), m->pick_weight});
    }
    if (e->failed()) {
      c.last_failed = e;
    } else {
      ++c.not_failed;
      if (e->state() == GRPC_CHANNEL_IDLE) ++c.idle;
    }
  }
  return c;
}

}  // namespace aperture_lb
