#include "policy/lb/lb_state.h"

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <utility>

#include "policy/core/ap_order.h"
#include "policy/core/ap_ring.h"

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

std::atomic<uint64_t> g_publishes{0};
std::atomic<uint64_t> g_published_entries{0};

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
  state->sessions = view.sessions;
  state->peer_index = view.coordinate->peer_index;
  state->peer_count =
      view.coordinate->known ? view.coordinate->peer_count : 0;
  if (view.settings != nullptr) {
    state->mode = ap_mode_name(view.settings->mode);
    state->min_aperture = view.settings->min_aperture;
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

PublishWork PublishWorkSoFar() {
  return PublishWork{g_publishes.load(), g_published_entries.load()};
}

void StatePublisher::Publish(std::shared_ptr<const PublishedState> state) {
  g_publishes.fetch_add(1, std::memory_order_relaxed);
  if (state != nullptr) {
    g_published_entries.fetch_add(state->live.size(),
                                  std::memory_order_relaxed);
  }
  {
    absl::MutexLock lock(&mu_);
    state_.swap(state);
  }
  // `state` now holds the previous one: released here, outside the lock.
}

int StatePublisher::Snapshot(ap_ring_state* out) {
  // The filter first: a channel the request does not ask for copies nothing.
  if (!ap_snapshot_query_matches(out->query, target_.c_str())) return AP_SNAPSHOT_SKIP;
  std::shared_ptr<const PublishedState> state;
  {
    absl::MutexLock lock(&mu_);
    state = state_;
  }
  PublishedState empty;
  const PublishedState& s = state != nullptr ? *state : empty;
  out->target = strdup(target_.c_str());
  out->mode = strdup(s.mode.c_str());
  out->coordinate_source = s.coordinate_source;
  out->last_status = strdup(s.last_status.c_str());
  out->peer_target = strdup(s.peer_target.c_str());
  if (out->target == nullptr || out->mode == nullptr ||
      out->last_status == nullptr || out->peer_target == nullptr) {
    ap_ring_state_clear(out);
    return AP_ENOMEM;
  }
  out->peer_index = s.peer_index;
  out->peer_count = s.peer_count;
  snprintf(out->peer_fingerprint, sizeof(out->peer_fingerprint), "%s",
           s.peer_fingerprint.c_str());
  out->coordinate_changes = s.coordinate_changes;
  out->offset = s.offset;
  out->width = s.width;
  out->min_aperture = s.min_aperture;
  out->logical_aperture = s.logical_aperture;
  out->physical_aperture = s.physical_aperture;
  out->widened = s.widened;
  out->draining = s.draining;
  snprintf(out->fingerprint, sizeof(out->fingerprint), "%s",
           s.fingerprint.c_str());
  out->resolver_updates = counters_.resolver_updates.load();
  out->rebuilds = counters_.rebuilds.load();
  out->subchannels_created = counters_.subchannels_created.load();
  out->subchannels_destroyed = counters_.subchannels_destroyed.load();
  out->widenings = counters_.widenings.load();
  out->affinity_sessions = s.sessions != nullptr ? s.sessions->LiveSize() : 0;
  // Only the page the request asks for is copied.
  size_t first = 0, count = 0;
  ap_snapshot_query_page(out->query, s.endpoint_count(), &first, &count);
  out->endpoint_count = s.endpoint_count();
  out->first_endpoint = first;
  out->copied_endpoints = 0;
  out->endpoints = nullptr;
  if (count > 0) {
    out->endpoints = static_cast<ap_endpoint_state*>(
        calloc(count, sizeof(ap_endpoint_state)));
    if (out->endpoints == nullptr) {
      ap_ring_state_clear(out);
      return AP_ENOMEM;
    }
    out->copied_endpoints = count;
  }
  for (size_t i = 0; i < count; ++i) {
    const PublishedEndpoint e = s.endpoint(first + i);
    ap_endpoint_state* o = &out->endpoints[i];
    o->address = strdup(e.address.c_str());
    if (o->address == nullptr) {
      ap_ring_state_clear(out);
      return AP_ENOMEM;
    }
    o->ring_index = e.ring_index;
    o->endpoint_weight = e.endpoint_weight;
    o->intersection = e.intersection;
    o->pick_weight = e.pick_weight;
    o->in_aperture = e.in_aperture ? 1 : 0;
    o->widened = e.widened ? 1 : 0;
    o->draining = e.draining ? 1 : 0;
    o->connectivity = e.connectivity;
    if (e.counters != nullptr) {
      int64_t outstanding = e.counters->outstanding.load();
      o->outstanding = outstanding > 0 ? static_cast<uint64_t>(outstanding) : 0;
      o->picks = e.counters->picks.load();
      o->failures = e.counters->failures.load();
    }
  }
  return AP_OK;
}

}  // namespace aperture_lb
