// A stand-in for a policy instance in the registry: it owns a ring state and
// publishes deep copies of it through a real snapshot callback, the way the
// LB policy does. Used until (and besides) the end-to-end channel tests.
#ifndef TESTS_STATUS_FAKE_INSTANCE_H
#define TESTS_STATUS_FAKE_INSTANCE_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include "policy/registry/ap_registry.h"
}

class RegisteredInstance {
 public:
  // `endpoints` endpoints "10.<i/256>.<i%256>.1:443", endpoint i in the
  // aperture when i < 4, connectivity cycling through the states.
  RegisteredInstance(const std::string &target, size_t endpoints) : target_(target), n_(endpoints) {
    ap_error err;
    if (ap_registry_add(&RegisteredInstance::Snapshot, this, &entry_, &err) != AP_OK) abort();
  }
  ~RegisteredInstance() { ap_registry_remove(entry_); }
  RegisteredInstance(const RegisteredInstance &) = delete;
  RegisteredInstance &operator=(const RegisteredInstance &) = delete;

  // Changes the published state (as a rebuild would).
  void SetRebuilds(uint64_t r) {
    std::lock_guard<std::mutex> lock(mu_);
    rebuilds_ = r;
  }

  // Reports how a stable plan keyed the peers ("address", "ordinal").
  void SetPeerKeys(const std::string &keys) {
    std::lock_guard<std::mutex> lock(mu_);
    peer_keys_ = keys;
  }

  // Reports a coordinate found through a peer target.
  void SetPeers(const std::string &target, const std::string &fingerprint, uint64_t changes) {
    std::lock_guard<std::mutex> lock(mu_);
    peer_target_ = target;
    peer_fingerprint_ = fingerprint;
    coordinate_changes_ = changes;
  }

  // Reports a pick metric; under "orca" endpoints 0..2 report a
  // utilization of 0.25 * i and the others none, under "peakEwma" endpoint
  // i < 4 has a latency average of 1.5 * (i + 1) ms and the others none.
  void SetPickMetric(const std::string &metric) {
    std::lock_guard<std::mutex> lock(mu_);
    pick_metric_ = metric;
  }

  // Reports config warnings (the fields its config had and ignored).
  void SetConfigWarnings(const std::vector<std::string> &warnings) {
    std::lock_guard<std::mutex> lock(mu_);
    config_warnings_ = warnings;
  }

  // Puts `text` in last_status and after every endpoint's address, as a
  // resolver's or an application's strings would arrive.
  void SetText(const std::string &text) {
    std::lock_guard<std::mutex> lock(mu_);
    text_ = text;
  }

  // Reports the skew balance running with `reason`: own rate 800 calls/s,
  // others 100, ratio 8, width x4; endpoint i < 4 with weight factor
  // 0.5 * (i + 1), reported rate 100 * i (endpoint 0: none) and own rate
  // 200 (endpoint 3: not measured).
  void SetSkew(const std::string &reason) {
    std::lock_guard<std::mutex> lock(mu_);
    skew_reason_ = reason;
  }

  static std::string Address(size_t i) {
    char buf[48];
    snprintf(buf, sizeof buf, "10.%zu.%zu.1:443", i / 256, i % 256);
    return buf;
  }

 private:
  static int Snapshot(void *ctx, ap_ring_state *out) {
    auto *self = static_cast<RegisteredInstance *>(ctx);
    if (!ap_snapshot_query_matches(out->query, self->target_.c_str())) return AP_SNAPSHOT_SKIP;
    std::lock_guard<std::mutex> lock(self->mu_);
    out->target = strdup(self->target_.c_str());
    out->mode = strdup("continuous");
    out->coordinate_source =
        self->peer_target_.empty() ? AP_COORDINATE_API : AP_COORDINATE_PEER_TARGET;
    out->peer_target = strdup(self->peer_target_.c_str());
    snprintf(out->peer_fingerprint, sizeof out->peer_fingerprint, "%s",
             self->peer_fingerprint_.c_str());
    out->coordinate_changes = self->coordinate_changes_;
    snprintf(out->pick_metric, sizeof out->pick_metric, "%s", self->pick_metric_.c_str());
    snprintf(out->peer_keys, sizeof out->peer_keys, "%s", self->peer_keys_.c_str());
    const bool skew = !self->skew_reason_.empty();
    snprintf(out->skew_reason, sizeof out->skew_reason, "%s",
             skew ? self->skew_reason_.c_str() : "off");
    out->skew_own_rate = skew ? 800 : 0;
    out->skew_others_rate = skew ? 100 : -1;
    out->skew_ratio = skew ? 8 : -1;
    out->skew_multiplier = skew ? 4 : 1;
    out->snapshot_builds = 17;
    if (!self->config_warnings_.empty()) {
      out->config_warnings =
          static_cast<char **>(calloc(self->config_warnings_.size(), sizeof(char *)));
      if (out->config_warnings == nullptr) return AP_ENOMEM;
      for (const std::string &w : self->config_warnings_) {
        out->config_warnings[out->config_warning_count++] = strdup(w.c_str());
      }
    }
    out->last_status = strdup(self->text_.c_str());
    out->peer_index = 2;
    out->peer_count = 5;
    out->offset = 0.4;
    out->width = 0.2;
    out->min_aperture = 3;
    out->logical_aperture = 4;
    out->physical_aperture = 5;
    out->widened = 1;
    out->draining = 1;
    snprintf(out->fingerprint, sizeof out->fingerprint, "%016llx",
             static_cast<unsigned long long>(0xabc0000 + self->n_));
    out->resolver_updates = 7;
    out->rebuilds = self->rebuilds_;
    out->subchannels_created = 9;
    out->subchannels_destroyed = 2;
    out->widenings = 11;
    out->affinity_sessions = 13;
    out->max_ejection_percent = 50;
    out->members_out = 1;
    out->max_members_out = 2;
    out->peer_failure_share = 0.25;
    out->endpoint_count = self->n_;
    size_t first = 0, count = 0;
    ap_snapshot_query_page(out->query, self->n_, &first, &count);
    out->first_endpoint = first;
    if (count > 0) {
      out->endpoints = ap_endpoint_states_alloc(count);
      if (out->endpoints == nullptr) return AP_ENOMEM;
      out->copied_endpoints = count;
      for (size_t i = first; i < first + count; i++) {
        ap_endpoint_state &e = out->endpoints[i - first];
        e.address = strdup((Address(i) + self->text_).c_str());
        e.ring_index = static_cast<uint32_t>(i);
        e.endpoint_weight = 1.0;
        e.intersection = i < 4 ? 0.5 : 0.0;
        e.pick_weight = i < 4 ? 0.25 : 0.0;
        e.in_aperture = i < 4;
        e.widened = i == 3;
        e.draining = i == 2;
        e.connectivity = i < 4 ? static_cast<int>(i % 4) : -1;
        e.outstanding = i;
        e.picks = 100 + i;
        e.failures = i % 3;
        e.health = i == 3 ? 1 : 0;  // endpoint 3 ejected
        e.ejections = i == 3 ? 2 : 0;
        e.utilization = self->pick_metric_ == "orca" && i < 3 ? 0.25 * i : -1;
        e.latency_ewma_ms = self->pick_metric_ == "peakEwma" && i < 4 ? 1.5 * (i + 1) : -1;
        e.weight_factor = skew && i < 4 ? 0.5 * (i + 1) : 1;
        e.reported_rps = skew && i < 4 && i > 0 ? 100.0 * i : -1;
        e.own_rate = skew && i < 3 ? 200 : -1;
      }
    }
    return AP_OK;
  }

  std::mutex mu_;
  std::string target_;
  size_t n_;
  uint64_t rebuilds_ = 1;
  std::string pick_metric_;  // "" = none reported
  std::string peer_target_, peer_fingerprint_;
  uint64_t coordinate_changes_ = 0;
  std::string peer_keys_;
  std::vector<std::string> config_warnings_;
  std::string text_;
  std::string skew_reason_;  // "" = the balance does not run
  ap_registry_entry *entry_ = nullptr;
};

#endif  // TESTS_STATUS_FAKE_INSTANCE_H
