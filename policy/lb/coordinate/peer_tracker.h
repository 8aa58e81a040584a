// A policy instance's view of peer discovery: subscribes to the peer target
// its config or environment names (peer_watcher.h), finds this process in
// the list (peer_self.h), keeps the last good coordinate through faults,
// and asks its policy to rebuild the aperture at once, in the policy's own
// WorkSerializer, when the coordinate inputs change: a new peer list or
// aperture_set_coordinate(). Rebuilds are debounced by updateCoalesceMs.
#ifndef APERTURE_LB_COORDINATE_PEER_TRACKER_H
#define APERTURE_LB_COORDINATE_PEER_TRACKER_H

#include <stdint.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "policy/lb/coordinate/coordinate.h"
#include "policy/lb/coordinate/peer_self.h"
#include "policy/lb/coordinate/peer_settings.h"
#include "policy/lb/coordinate/peer_watcher.h"
#include "src/core/lib/gprpp/orphanable.h"
#include "src/core/lib/gprpp/ref_counted.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"
#include "src/core/lib/gprpp/work_serializer.h"
#include "src/core/lib/load_balancing/lb_policy.h"

namespace aperture_lb {

class SerializedTimer;

// How long a new channel waits for its peer target's first answer before
// it builds its first ring with the fallback coordinate.
constexpr uint64_t kFirstAnswerWaitMs = 1000;

class PeerTracker : public grpc_core::RefCounted<PeerTracker> {
 public:
  // `rebuild` runs in `serializer` when the coordinate inputs changed (the
  // policy rebuilds its aperture). The tracker holds `owner` until
  // ShutdownLocked so that its hops never outlive the policy.
  PeerTracker(std::shared_ptr<grpc_core::WorkSerializer> serializer,
              grpc_core::RefCountedPtr<grpc_core::LoadBalancingPolicy> owner,
              std::function<void(const char* reason)> rebuild);
  ~PeerTracker() override;

  // All below run in the serializer.
  // Applies a (new) config: subscribes, re-subscribes or unsubscribes
  // (`peers`, else the environment's APERTURE_PEER_*). A static
  // peerIndex/peerCount in the config (`static_coordinate`) turns discovery
  // off. Changes are debounced by `coalesce_ms` (updateCoalesceMs).
  void ConfigureLocked(const PeerConfig& peers, bool static_coordinate,
                       uint64_t coalesce_ms);
  // The offer admitted by the last (debounced) change.
  const PeerOffer& offer() const { return admitted_; }
  // True while the policy should hold its first ring: a peer target is
  // watched and has not answered yet, for at most kFirstAnswerWaitMs
  // (then the fallback applies). Starts the wait on the first call; the
  // answer, or the end of the wait, calls `rebuild`.
  bool HoldFirstRingLocked();
  // The coordinate to build with now (ResolveCoordinate() over the
  // config's own coordinate, the channel's `args` and the admitted offer);
  // records it as applied and counts the changes.
  Coordinate ResolveLocked(const StaticCoordinate& config,
                           const grpc_core::ChannelArgs& args);
  // For the status: the watched target ("" = none), the fingerprint of the
  // peer list behind the admitted coordinate ("" = none), and how often the
  // applied coordinate changed.
  const std::string& target() const { return target_; }
  std::string PeerFingerprint() const;
  uint64_t coordinate_changes() const { return coordinate_changes_; }
  void ShutdownLocked();

 private:
  void OnInputsChangedLocked();
  void OnDebounceTimerLocked();
  void AdmitLocked();

  std::shared_ptr<grpc_core::WorkSerializer> serializer_;
  grpc_core::RefCountedPtr<grpc_core::LoadBalancingPolicy> owner_;
  std::function<void(const char*)> rebuild_;
  uint64_t listener_id_ = 0;
  std::unique_ptr<PeerSubscription> subscription_;
  std::string target_;
  bool from_config_ = false;
  uint64_t refresh_ms_ = 0;
  std::string self_text_;
  PeerSelf self_;
  std::set<std::string> interfaces_;  // when no peerSelf is given
  std::string env_note_;
  uint64_t coalesce_ms_ = 0;
  bool have_last_good_ = false;
  uint32_t good_index_ = 0, good_count_ = 0;
  uint64_t good_fingerprint_ = 0;
  // The list behind the last good coordinate (its entries key the peers in
  // stable mode); kept, like the coordinate, through faults.
  std::shared_ptr<const std::vector<std::string>> good_peers_;
  PeerOffer admitted_;
  uint64_t last_rebuild_ms_ = 0;
  bool ever_rebuilt_ = false;
  grpc_core::OrphanablePtr<SerializedTimer> debounce_timer_;
  grpc_core::OrphanablePtr<SerializedTimer> first_answer_timer_;
  bool first_wait_over_ = false;
  bool applied_once_ = false;
  bool applied_known_ = false;
  uint32_t applied_index_ = 0, applied_count_ = 0;
  uint64_t coordinate_changes_ = 0;
  bool shutdown_ = false;
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_PEER_TRACKER_H
