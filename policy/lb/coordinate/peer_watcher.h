// Peer discovery: one watcher per distinct peer target in the process,
// shared (refcounted) by every channel whose config or environment names
// it. A watcher resolves the target with gRPC's own resolver registry in its
// own WorkSerializer, asks again every refresh period (DNS does not push),
// and keeps the latest peer list in the ring order backends use
// (ap_order.h), so that every client computes the same positions.
#ifndef APERTURE_LB_COORDINATE_PEER_WATCHER_H
#define APERTURE_LB_COORDINATE_PEER_WATCHER_H

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace aperture_lb {

// One answer of a peer target.
struct PeerList {
  bool answered = false;  // false until the resolver's first answer
  absl::Status status;    // the last answer's error (OK when it had a list)
  // Entries ("host:port") in ring order, and their fingerprint; empty / 0
  // when the last answer was an error.
  std::vector<std::string> ordered;
  uint64_t fingerprint = 0;
  uint64_t answers = 0;  // answers received so far
};

class PeerWatcher;

// A channel's use of a watcher. Destroying it unsubscribes; the last
// subscription of a target shuts its watcher down.
class PeerSubscription {
 public:
  ~PeerSubscription();
  PeerSubscription(const PeerSubscription&) = delete;
  PeerSubscription& operator=(const PeerSubscription&) = delete;

  const std::string& target() const { return target_; }
  // The latest peer list (never null). Thread-safe.
  std::shared_ptr<const PeerList> Latest() const;

 private:
  friend std::unique_ptr<PeerSubscription> SubscribePeers(
      const std::string&, uint64_t, std::function<void()>);
  PeerSubscription(std::shared_ptr<PeerWatcher> watcher, std::string target,
                   uint64_t id)
      : watcher_(std::move(watcher)), target_(std::move(target)), id_(id) {}

  std::shared_ptr<PeerWatcher> watcher_;
  const std::string target_;
  const uint64_t id_;
};

// Subscribes to `target` (re-resolved every `refresh_ms`; a shared watcher
// uses its subscribers' shortest period). `on_change` runs in the watcher's
// serializer, without locks held, each time the list or its error changes;
// it must be quick (hop to the caller's own serializer). A target that
// gRPC cannot resolve gives a subscription whose list carries the error.
// Needs gRPC initialized. Thread-safe.
std::unique_ptr<PeerSubscription> SubscribePeers(const std::string& target,
                                                 uint64_t refresh_ms,
                                                 std::function<void()> on_change);

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_PEER_WATCHER_H
