#include "policy/lb/ring/membership.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "policy/lb/grpc_seam/grpc_seam.h"

namespace aperture_lb {

void UniqueAddresses(const grpc_core::ServerAddressList& list,
                     std::vector<std::string>* names,
                     std::vector<grpc_core::ServerAddress>* addresses,
                     const void* owner) {
  std::set<std::string> seen;
  for (const grpc_core::ServerAddress& address : list) {
    auto text = AddressText(address);
    if (!text.ok()) {
      APERTURE_TRACE("[aperture %p] skipping an unprintable address: %s",
                     owner, text.status().ToString().c_str());
      continue;
    }
    if (!seen.insert(*text).second) continue;
    names->push_back(std::move(*text));
    addresses->push_back(address);
  }
}


absl::Status Membership::EnsureCreated() {
  if (core_ != nullptr) return absl::OkStatus();
  ap_membership_params params;
  ap_membership_params_init(&params);
  params.removal_grace_ms = removal_grace_ms_;
  params.coalesce_ms = coalesce_ms_;
  ap_error err;
  ap_membership* created = nullptr;
  if (ap_membership_create(&params, &created, &err) != AP_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("aperture: membership: ", err.message));
  }
  core_.reset(created);
  return absl::OkStatus();
}

absl::Status Membership::Configure(uint64_t removal_grace_ms,
                                   uint64_t coalesce_ms) {
  if (core_ != nullptr && removal_grace_ms == removal_grace_ms_ &&
      coalesce_ms == coalesce_ms_) {
    return absl::OkStatus();
  }
  Reset();
  removal_grace_ms_ = removal_grace_ms;
  coalesce_ms_ = coalesce_ms;
  return EnsureCreated();
}

void Membership::Reset() {
  core_.reset();
  server_addresses_.clear();
  latest_offer_.clear();
}

absl::StatusOr<unsigned> Membership::Offer(
    const std::vector<std::string>& names,
    const std::vector<grpc_core::ServerAddress>& addresses,
    const std::vector<double>& weights, uint64_t now_ms) {
  absl::Status created = EnsureCreated();
  if (!created.ok()) return created;
  if (addresses.size() != names.size() || weights.size() != names.size()) {
    return absl::InternalError("aperture: membership: list sizes differ");
  }
  std::vector<const char*> pointers(names.size());
  for (size_t i = 0; i < names.size(); ++i) pointers[i] = names[i].c_str();
  unsigned changes = 0;
  ap_error err;
  if (ap_membership_update(core_.get(), pointers.data(), weights.data(),
                           names.size(), now_ms, &changes, &err) != AP_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("aperture: membership: ", err.message));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = server_addresses_.find(names[i]);
    if (it != server_addresses_.end()) {
      it->second = addresses[i];
    } else {
      server_addresses_.emplace(names[i], addresses[i]);
    }
  }
  latest_offer_ = names;
  PruneAddresses();
  return changes;
}

absl::StatusOr<unsigned> Membership::Tick(uint64_t now_ms) {
  if (core_ == nullptr) return 0u;
  unsigned changes = 0;
  ap_error err;
  if (ap_membership_tick(core_.get(), now_ms, &changes, &err) != AP_OK) {
    return absl::InternalError(
        absl::StrCat("aperture: membership: ", err.message));
  }
  if (changes != 0) PruneAddresses();
  return changes;
}

uint64_t Membership::NextDeadline() const {
  return ap_membership_next_deadline(core_.get());
}

std::vector<EffectiveMember> Membership::Members() const {
  std::vector<EffectiveMember> out;
  const size_t n = ap_membership_count(core_.get());
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    ap_membership_entry entry;
    if (ap_membership_get(core_.get(), i, &entry, nullptr) != AP_OK) continue;
    auto it = server_addresses_.find(entry.address);
    if (it == server_addresses_.end()) continue;  // cannot happen: pruned last
    out.push_back(EffectiveMember{entry.address, it->second, entry.weight,
                                  entry.draining != 0});
  }
  return out;
}

// Keeps the ServerAddress of current members and of the latest offer (which
// is what a held update will apply).
void Membership::PruneAddresses() {
  std::set<std::string> keep(latest_offer_.begin(), latest_offer_.end());
  const size_t n = ap_membership_count(core_.get());
  for (size_t i = 0; i < n; ++i) {
    ap_membership_entry entry;
    if (ap_membership_get(core_.get(), i, &entry, nullptr) == AP_OK) {
      keep.insert(entry.address);
    }
  }
  for (auto it = server_addresses_.begin(); it != server_addresses_.end();) {
    if (keep.count(it->first) == 0) {
      it = server_addresses_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace aperture_lb
