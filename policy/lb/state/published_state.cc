#include "policy/lb/state/published_state.h"

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <utility>

#include "policy/core/ring/ap_order.h"
#include "policy/core/ring/ap_ring.h"

namespace aperture_lb {
namespace {

// ap_connectivity mirrors grpc_connectivity_state value for value.
static_assert(static_cast<int>(AP_CONN_IDLE) == static_cast<int>(GRPC_CHANNEL_IDLE), "ap_connectivity");
static_assert(static_cast<int>(AP_CONN_CONNECTING) == static_cast<int>(GRPC_CHANNEL_CONNECTING), "ap_connectivity");
static_assert(static_cast<int>(AP_CONN_READY) == static_cast<int>(GRPC_CHANNEL_READY), "ap_connectivity");
static_assert(static_cast<int>(AP_CONN_TRANSIENT_FAILURE) == static_cast<int>(GRPC_CHANNEL_TRANSIENT_FAILURE),
              "ap_connectivity");
static_assert(static_cast<int>(AP_CONN_SHUTDOWN) == static_cast<int>(GRPC_CHANNEL_SHUTDOWN), "ap_connectivity");

int ToApConnectivity(grpc_connectivity_state state) {
  return static_cast<int>(state);
}

// What the ring alone says of endpoint i (not in the aperture, no subchannel).
PublishedEndpoint StaticEndpoint(const RingSnapshot& ring, size_t i) {
  PublishedEndpoint e;
  e.address = ring.address(i);
  e.ring_index = static_cast<uint32_t>(i);
  e.endpoint_weight = ap_ring_weight(ring.ring(), i);
  e.draining = ring.draining(i);
  return e;
}

}  // namespace

std::shared_ptr<PublishedState> DescribePolicy(const PolicyView& view) {
  auto state = std::make_shared<PublishedState>();
  state->last_status = *view.last_status;
  state->coordinate_source = view.coordinate->source;
  if (view.settings != nullptr) state->health = view.settings->health;
  state->sessions = view.sessions;
  if (view.skew != nullptr) state->skew = *view.skew;
  state->health_group = ShareHealthGroup(view.health_group);
  state->peer_index = view.coordinate->peer_index;
  state->peer_count =
      view.coordinate->known ? view.coordinate->peer_count : 0;
  if (view.settings != nullptr) {
    state->mode = ap_mode_name(view.settings->mode);
    state->min_aperture = view.settings->min_aperture;
    state->pick_metric = view.settings->pick_metric;
    state->config_warnings = view.settings->config_warnings;
  }
  const RingSnapshot* ring = view.ring.get();
  const ap_aperture* members = view.members;
  if (members == nullptr || ring == nullptr) return state;
  state->mode = ap_mode_name(ap_aperture_mode(members));
  state->offset = ap_aperture_offset(members);
  state->width = ap_aperture_width(members);
  state->logical_aperture = ap_aperture_logical(members);
  state->physical_aperture =
      static_cast<uint32_t>(ap_aperture_count(ring->aperture()));
  state->widened = static_cast<uint32_t>(ap_aperture_widened_count(members));
  state->draining = static_cast<uint32_t>(ring->draining_count());
  char hex[17];
  ap_fingerprint_format(ring->fingerprint(), hex);
  state->fingerprint = hex;
  state->ring = view.ring;
  // Live entries: the members in effect, then any subchannel outside them.
  const size_t count = ap_aperture_count(members);
  state->live.reserve(count + view.endpoints->size());
  for (size_t k = 0; k < count; ++k) {
    const ap_member* m = ap_aperture_member(members, k);
    PublishedEndpoint e = StaticEndpoint(*ring, m->index);
    e.intersection = m->intersection;
    e.pick_weight = m->pick_weight;
    e.in_aperture = true;
    e.widened = m->widened != 0;
    state->live.push_back(std::move(e));
  }
  for (const auto& kv : *view.endpoints) {
    uint32_t index = 0;
    if (!ring->IndexOf(kv.first, &index)) continue;
    if (ap_aperture_find(members, index, nullptr)) continue;
    state->live.push_back(StaticEndpoint(*ring, index));
  }
  std::sort(state->live.begin(), state->live.end(),
            [](const PublishedEndpoint& a, const PublishedEndpoint& b) {
              return a.ring_index < b.ring_index;
            });
  for (PublishedEndpoint& e : state->live) {
    auto it = view.endpoints->find(e.address);
    if (it != view.endpoints->end()) {
      e.connectivity = ToApConnectivity(it->second->state());
      e.counters = it->second->counters();
      const Endpoint& endpoint = *it->second;
      e.weight_factor = ap_skew_member_factor(endpoint.skew());
      e.own_rate = ap_skew_member_rate(endpoint.skew());
    }
  }
  return state;
}

PublishedEndpoint PublishedState::endpoint(size_t i) const {
  auto it = std::lower_bound(
      live.begin(), live.end(), i,
      [](const PublishedEndpoint& e, size_t index) { return e.ring_index < index; });
  if (it != live.end() && it->ring_index == i) return *it;
  return StaticEndpoint(*ring, i);
}

}  // namespace aperture_lb
