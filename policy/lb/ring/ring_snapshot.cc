#include "policy/lb/ring/ring_snapshot.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "policy/core/ap_hash.h"
#include "policy/core/ring/ap_order.h"
#include "policy/lb/config/config_fields.h"
#include "policy/lb/ring/stable_inputs.h"

namespace aperture_lb {

bool RingSnapshot::IndexOf(std::string_view address, uint32_t* index) const {
  auto it = index_of_.find(address);
  if (it == index_of_.end()) return false;
  *index = it->second;
  return true;
}

bool RingSnapshot::IsDraining(std::string_view address) const {
  uint32_t index = 0;
  return IndexOf(address, &index) && members_[index].draining;
}

std::string RingStatusNote(const RingSnapshot& ring) {
  const Coordinate& coordinate = ring.coordinate();
  std::string note;
  if (!coordinate.known) {
    note = absl::StrCat(
        "no process coordinate (config, peer target, channel args, API, "
        "environment, host name): "
        "using random aperture. ",
        coordinate.note);
  } else if (!coordinate.note.empty()) {
    note = coordinate.note;
  }
  if (ring.draining_count() > 0) {
    absl::StrAppend(&note, note.empty() ? "" : " ", ring.draining_count(),
                    " endpoint(s) draining: gone from the resolver, kept "
                    "unpickable for removalGraceMs");
  }
  return note;
}

namespace {

uint64_t HashString(const std::string& s, uint64_t seed) {
  return ap_hash64(s.data(), s.size(), seed);
}

}  // namespace

uint64_t RingInputKey(const std::vector<EffectiveMember>& members,
                      const ApertureSettings& settings,
                      const Coordinate& coordinate,
                      uint64_t fallback_random_seed) {
  // Members: one hash each, sorted, so the resolver's order does not count
  // (the snapshot orders them itself).
  std::vector<uint64_t> each;
  each.reserve(members.size());
  for (const EffectiveMember& m : members) {
    uint64_t h = HashString(m.address, 11);
    h = ap_mix64(h ^ ap_hash64(&m.weight, sizeof(m.weight), 12));
    h = ap_mix64(h ^ (m.draining ? 0x5bd1e995u : 0x27d4eb2fu));
    h = ap_mix64(h ^ HashString(m.server_address.ToString(), 13));
    each.push_back(h);
  }
  std::sort(each.begin(), each.end());
  uint64_t key = ap_hash64(each.data(), each.size() * sizeof(uint64_t), 14);
  // The settings the build reads: the config fields that shape the ring
  // (RingRole::kSetting in config/config_fields.cc), set or not.
  for (const ConfigField& field : ConfigFields()) {
    if (field.ring != RingRole::kSetting) continue;
    const std::optional<uint64_t> value = field.access.load(settings);
    const uint64_t words[2] = {value.has_value() ? 1u : 0u, value.value_or(0)};
    key = ap_mix64(key ^ ap_hash64(words, sizeof(words), 15));
  }
  const uint64_t inputs[6] = {
      fallback_random_seed,
      coordinate.known ? 1u : 0u,
      coordinate.peer_index,
      coordinate.peer_count,
      static_cast<uint64_t>(coordinate.source),
      coordinate.stale ? 1u : 0u};
  key = ap_mix64(key ^ ap_hash64(inputs, sizeof(inputs), 15));
  key = ap_mix64(key ^ HashString(coordinate.note, 16));
  if (coordinate.peers != nullptr) {
    uint64_t peers = ap_mix64(coordinate.peers->size() + 17);
    for (const std::string& peer : *coordinate.peers) {
      peers = ap_mix64(peers ^ HashString(peer, 18));
    }
    key = ap_mix64(key ^ peers);
  }
  return key;
}

absl::StatusOr<std::unique_ptr<const RingSnapshot>> BuildRingSnapshot(
    std::vector<EffectiveMember> members, const ApertureSettings& settings,
    const Coordinate& coordinate, uint64_t fallback_random_seed) {
  const size_t n = members.size();
  if (n == 0) {
    return absl::UnavailableError(
        "aperture: no endpoint left in the membership");
  }
  const uint64_t input_key =
      RingInputKey(members, settings, coordinate, fallback_random_seed);
  // The ring order depends on the addresses only, not on the resolver's.
  std::vector<const char*> pointers(n);
  for (size_t i = 0; i < n; ++i) pointers[i] = members[i].address.c_str();
  std::vector<size_t> order(n);
  ap_error err;
  if (ap_order_endpoints(pointers.data(), n, order.data(), &err) != AP_OK) {
    return absl::UnavailableError(
        absl::StrCat("aperture: cannot order endpoints: ", err.message));
  }
  std::unique_ptr<RingSnapshot> s(new RingSnapshot());
  s->input_key_ = input_key;
  s->fingerprint_ = ap_order_fingerprint(pointers.data(), order.data(), n);
  s->members_.reserve(n);
  std::vector<double> weights(n);
  for (size_t k = 0; k < n; ++k) {
    s->members_.push_back(std::move(members[order[k]]));
    weights[k] = s->members_[k].weight;
    s->draining_count_ += s->members_[k].draining ? 1 : 0;
  }
  s->index_of_.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    s->index_of_.emplace(s->members_[k].address, static_cast<uint32_t>(k));
  }

  ap_subset_params params;
  if (ap_subset_params_for_client(
          settings.mode, coordinate.known ? coordinate.peer_index : 0,
          coordinate.known ? coordinate.peer_count : 0, settings.min_aperture,
          settings.has_random_seed ? settings.random_seed
                                   : fallback_random_seed,
          &params, &err) != AP_OK) {
    return absl::UnavailableError(
        absl::StrCat("aperture: cannot compute the aperture: ", err.message));
  }
  ap_ring* ring = nullptr;
  if (ap_ring_create(weights.data(), n, &ring, &err) != AP_OK) {
    return absl::UnavailableError(
        absl::StrCat("aperture: cannot build the ring: ", err.message));
  }
  s->ring_.reset(ring);
  // Stable mode's one extra input: the whole service's plan, built per
  // rebuild from the endpoints' and peers' keys by BuildStableInputs()
  // (without a coordinate the core falls back to random and needs none).
  StableInputs stable;
  uint64_t peer_keys_hash = 0;
  if (params.mode == AP_MODE_STABLE && params.peer_count > 0) {
    auto built = BuildStableInputs(s->members_, weights, coordinate,
                                   params.min_aperture);
    if (!built.ok()) return built.status();
    stable = std::move(*built);
    params.stable_plan = stable.plan.get();
    s->stable_peers_by_address_ = stable.peers_by_address;
    s->stable_plan_built_ = true;
    peer_keys_hash = ap_hash64(stable.peer_keys.data(),
                               stable.peer_keys.size() * sizeof(uint64_t), 3);
  }
  ap_aperture* aperture = nullptr;
  if (ap_aperture_compute(ring, &params, &aperture, &err) != AP_OK) {
    return absl::UnavailableError(
        absl::StrCat("aperture: cannot compute the aperture: ", err.message));
  }
  s->aperture_.reset(aperture);
  s->coordinate_ = coordinate;

  uint64_t key = s->fingerprint_;
  for (double w : weights) key = ap_mix64(key ^ ap_hash64(&w, sizeof(w), 1));
  uint64_t p[5] = {static_cast<uint64_t>(params.mode), params.peer_index,
                   params.peer_count, params.min_aperture, params.random_seed};
  s->key_ = ap_mix64(key ^ ap_hash64(p, sizeof(p), 2));
  // Stable membership also follows who the peers are.
  if (peer_keys_hash != 0) s->key_ = ap_mix64(s->key_ ^ peer_keys_hash);

  s->min_ready_ = settings.has_min_ready
                      ? std::min<uint32_t>(settings.min_ready,
                                           static_cast<uint32_t>(n))
                      : ap_aperture_logical(aperture);
  if (s->min_ready_ == 0) s->min_ready_ = 1;
  return std::unique_ptr<const RingSnapshot>(std::move(s));
}

}  // namespace aperture_lb
