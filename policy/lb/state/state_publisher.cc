#include "policy/lb/state/state_publisher.h"

#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <utility>

#include "policy/core/skew/ap_orca.h"
#include "policy/lb/test_hooks.h"

namespace aperture_lb {
namespace {

std::atomic<uint64_t> g_publishes{0};
std::atomic<uint64_t> g_published_entries{0};

}  // namespace

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
  snprintf(out->pick_metric, sizeof(out->pick_metric), "%s",
           ap_pick_metric_name(s.pick_metric));
  out->offset = s.offset;
  out->width = s.width;
  out->min_aperture = s.min_aperture;
  out->logical_aperture = s.logical_aperture;
  out->physical_aperture = s.physical_aperture;
  out->widened = s.widened;
  out->draining = s.draining;
  snprintf(out->fingerprint, sizeof(out->fingerprint), "%s",
           s.fingerprint.c_str());
#define AP_RING_COUNTER(name, kind, metric, help, text) \
  out->name = counters_.name.load();
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
  snprintf(out->peer_keys, sizeof(out->peer_keys), "%s",
           s.ring != nullptr ? s.ring->stable_peer_keys() : "");
  snprintf(out->skew_reason, sizeof(out->skew_reason), "%s",
           ap_skew_reason_name(s.skew.reason));
  out->skew_own_rate = s.skew.own_rate;
  out->skew_others_rate = s.skew.others_rate;
  out->skew_ratio = s.skew.ratio;
  out->skew_multiplier = s.skew.multiplier;
  out->affinity_sessions = s.sessions != nullptr ? s.sessions->Held() : 0;
  if (!s.config_warnings.empty()) {
    out->config_warnings = static_cast<char**>(
        calloc(s.config_warnings.size(), sizeof(char*)));
    if (out->config_warnings == nullptr) {
      ap_ring_state_clear(out);
      return AP_ENOMEM;
    }
    for (const std::string& w : s.config_warnings) {
      char* copy = strdup(w.c_str());
      if (copy == nullptr) {
        ap_ring_state_clear(out);
        return AP_ENOMEM;
      }
      out->config_warnings[out->config_warning_count++] = copy;
    }
  }
  out->max_ejection_percent = s.health.max_ejection_percent;
  out->members_out = ap_health_group_members_out(s.health_group.get());
  out->max_members_out = ap_health_max_members_out(
      ap_health_group_members(s.health_group.get()), s.health.max_ejection_percent);
  const int64_t ppm = ap_health_group_peer_failure_ppm(s.health_group.get());
  out->peer_failure_share = ppm >= 0 ? static_cast<double>(ppm) / 1e6 : -1;
  // Only the page the request asks for is copied.
  size_t first = 0, count = 0;
  ap_snapshot_query_page(out->query, s.endpoint_count(), &first, &count);
  out->endpoint_count = s.endpoint_count();
  out->first_endpoint = first;
  out->copied_endpoints = 0;
  out->endpoints = nullptr;
  if (count > 0) {
    out->endpoints = ap_endpoint_states_alloc(count);
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
    o->utilization = -1;
    o->latency_ewma_ms = -1;
    o->weight_factor = e.weight_factor;
    o->own_rate = e.own_rate;
    o->reported_rps = -1;
    if (e.counters != nullptr) {
      // The call counts of ap_endpoint_counters.def, each by its reader.
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) \
  o->name = endpoint_status::name(*e.counters);
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
      const int64_t outstanding = e.counters->Outstanding();
      // Each is recorded only under its own metric (call_tracker.cc).
      double v = 0;
      if (s.pick_metric == AP_PICK_ORCA &&
          ap_load_utilization(&e.counters->load, ap_load_coarse_now_ns(),
                              &v)) {
        o->utilization = v;
      }
      if (s.pick_metric == AP_PICK_ORCA &&
          ap_orca_sample_rps(&e.counters->orca, ap_load_coarse_now_ns(), &v)) {
        o->reported_rps = v;
      }
      if (s.pick_metric == AP_PICK_PEAK_EWMA &&
          ap_load_latency_ns(&e.counters->load, &v)) {
        o->latency_ewma_ms = v / 1e6;
      }
      o->health = static_cast<int>(ap_health_check(
          e.counters->health, outstanding, &s.health, ap_health_now_ms()));
      o->ejections = ap_health_ejections(e.counters->health);
      o->ejection_reason = ap_health_ejection_reason(e.counters->health);
      o->stuck_after_ms =
          ap_health_stuck_threshold_ms(e.counters->health, &s.health);
    }
  }
  return AP_OK;
}

}  // namespace aperture_lb
