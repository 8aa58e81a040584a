// What a picker needs around it when it is driven directly, without a
// channel: a subchannel it can hand back and a call arena for its tracker.
#ifndef APERTURE_TESTS_LB_PICKER_FAKES_H
#define APERTURE_TESTS_LB_PICKER_FAKES_H

#include <stddef.h>

#include <memory>

#include "src/core/lib/load_balancing/lb_policy.h"
#include "src/core/lib/load_balancing/subchannel_interface.h"

namespace aperture_test {

// Stands in for a connected subchannel: the picker only hands it back.
class IdleSubchannel : public grpc_core::SubchannelInterface {
 public:
  void WatchConnectivityState(
      std::unique_ptr<ConnectivityStateWatcherInterface>) override {}
  void CancelConnectivityStateWatch(
      ConnectivityStateWatcherInterface*) override {}
  void RequestConnection() override {}
  void ResetBackoff() override {}
  void AddDataWatcher(std::unique_ptr<DataWatcherInterface>) override {}
};

// The arena of one call at a time (the call tracker lives in it).
class ScratchCallState : public grpc_core::LoadBalancingPolicy::CallState {
 public:
  void* Alloc(size_t size) override {
    return size <= sizeof(buf_) ? buf_ : nullptr;
  }

 private:
  alignas(64) char buf_[256];
};

}  // namespace aperture_test

#endif  // APERTURE_TESTS_LB_PICKER_FAKES_H
