// What the status service sees of one policy instance: an immutable state
// published by the policy after every change, plus live atomic counters.
#ifndef APERTURE_LB_STATE_PUBLISHED_STATE_H
#define APERTURE_LB_STATE_PUBLISHED_STATE_H

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "policy/core/skew/ap_skew.h"
#include "policy/lb/affinity/affinity_router.h"
#include "policy/lb/core_ptr.h"
#include "policy/lb/config/config.h"
#include "policy/lb/coordinate/coordinate.h"
#include "policy/lb/endpoints/endpoint.h"
#include "policy/lb/picker/endpoint_counters.h"
#include "policy/lb/ring/ring_snapshot.h"
#include "policy/registry/ap_registry.h"

namespace aperture_lb {

// A skew decision that says the balance does not run.
inline ap_skew_decision OffSkewDecision() {
  ap_skew_decision d{};
  d.reason = AP_SKEW_OFF;
  d.others_rate = -1;
  d.ratio = -1;
  d.multiplier = 1;
  return d;
}

struct PublishedEndpoint {
  std::string address;
  uint32_t ring_index = 0;
  double endpoint_weight = 1;
  double intersection = 0;
  double pick_weight = 0;
  bool in_aperture = false;
  bool widened = false;
  bool draining = false;  // in its removal grace, never picked
  int connectivity = -1;  // ap_connectivity, -1 without a subchannel
  grpc_core::RefCountedPtr<EndpointCounters> counters;  // null if none
  // The skew balance's (Endpoint::skew()): its weight factor and this
  // client's rate to it (-1 not measured).
  double weight_factor = 1;
  double own_rate = -1;
};

struct PublishedState {
  std::string mode = "continuous";
  ap_pick_metric pick_metric = AP_PICK_OUTSTANDING;
  ap_coordinate_source coordinate_source = AP_COORDINATE_NONE;
  uint32_t peer_index = 0;
  uint32_t peer_count = 0;
  double offset = 0;
  double width = 0;
  uint32_t min_aperture = 0;
  uint32_t logical_aperture = 0;
  uint32_t physical_aperture = 0;
  uint32_t widened = 0;
  uint32_t draining = 0;
  std::string fingerprint;
  std::string last_status;
  std::vector<std::string> config_warnings;  // ignored config fields
  // Every ring endpoint, in ring order, is ring->members()[i] plus, for
  // the few with live data (aperture members, endpoints with a
  // subchannel), its entry in `live`. The ring is shared with the policy,
  // built once per rebuild: a publish copies O(aperture) entries, never N.
  std::shared_ptr<const RingSnapshot> ring;  // null without a ring
  std::vector<PublishedEndpoint> live;       // ascending ring_index
  size_t endpoint_count() const { return ring != nullptr ? ring->size() : 0; }
  // The endpoint at ring index i < endpoint_count(). O(log aperture).
  PublishedEndpoint endpoint(size_t i) const;
  grpc_core::RefCountedPtr<SessionStore> sessions;  // sticky affinity only
  // Peer discovery (peer_tracker.h): the watched target ("" = none), the
  // fingerprint of the peer list behind the coordinate ("" = none), and how
  // often the applied coordinate changed.
  std::string peer_target;
  std::string peer_fingerprint;
  uint64_t coordinate_changes = 0;
  // The skew balance's last decision (skew/skew_balance.h; reason "off"
  // when it does not run).
  ap_skew_decision skew = OffSkewDecision();
  // The health settings, to tell a stuck member from a busy one.
  ap_health_config health = ApertureSettings::DefaultHealthConfig();
  // The members' health group (ap_health_group.h): members out, read live.
  HealthGroupPtr health_group;
};

// What the policy knows when it publishes; pointers are borrowed for the
// call to DescribePolicy() only.
struct PolicyView {
  const ApertureSettings* settings = nullptr;  // null before the first update
  std::shared_ptr<const RingSnapshot> ring;    // null without a ring
  const ap_aperture* members = nullptr;  // the aperture in effect (widened)
  const Coordinate* coordinate = nullptr;
  const EndpointMap* endpoints = nullptr;
  const std::string* last_status = nullptr;
  grpc_core::RefCountedPtr<SessionStore> sessions;  // sticky affinity only
  const ap_skew_decision* skew = nullptr;  // null when it does not run
  ap_health_group* health_group = nullptr;  // the members' (a reference is taken)
};

// The state the status service shows for `view`: shares view.ring and
// copies the live data of the aperture members and the subchannels only.
std::shared_ptr<PublishedState> DescribePolicy(const PolicyView& view);

}  // namespace aperture_lb

#endif  // APERTURE_LB_STATE_PUBLISHED_STATE_H
