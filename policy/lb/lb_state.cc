#include "policy/lb/lb_state.h"

#include <stdlib.h>
#include <string.h>

namespace aperture_lb {

void StatePublisher::Publish(std::shared_ptr<const PublishedState> state) {
  {
    absl::MutexLock lock(&mu_);
    state_.swap(state);
  }
  // `state` now holds the previous one: released here, outside the lock.
}

int StatePublisher::Snapshot(ap_ring_state* out) {
  std::shared_ptr<const PublishedState> state;
  {
    absl::MutexLock lock(&mu_);
    state = state_;
  }
  PublishedState empty;
  const PublishedState& s = state != nullptr ? *state : empty;
  out->target = strdup(target_.c_str());
  out->mode = strdup(s.mode.c_str());
  out->coordinate_source = strdup(s.coordinate_source.c_str());
  out->last_status = strdup(s.last_status.c_str());
  out->peer_target = strdup(s.peer_target.c_str());
  if (out->target == nullptr || out->mode == nullptr ||
      out->coordinate_source == nullptr || out->last_status == nullptr ||
      out->peer_target == nullptr) {
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
  out->endpoint_count = s.endpoints.size();
  out->endpoints = nullptr;
  if (!s.endpoints.empty()) {
    out->endpoints = static_cast<ap_endpoint_state*>(
        calloc(s.endpoints.size(), sizeof(ap_endpoint_state)));
    if (out->endpoints == nullptr) {
      out->endpoint_count = 0;
      ap_ring_state_clear(out);
      return AP_ENOMEM;
    }
  }
  for (size_t i = 0; i < s.endpoints.size(); ++i) {
    const PublishedEndpoint& e = s.endpoints[i];
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
