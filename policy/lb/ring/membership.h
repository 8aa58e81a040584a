// The policy's side of debounced membership: owns the core's ap_membership
// (removal grace, coalescing) and remembers the gRPC ServerAddress of every
// address it may still need (draining members, held updates).
#ifndef APERTURE_LB_RING_MEMBERSHIP_H
#define APERTURE_LB_RING_MEMBERSHIP_H

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "policy/core/membership/ap_membership.h"
#include "policy/lb/core_ptr.h"
#include "src/core/lib/resolver/server_address.h"

namespace aperture_lb {

// One effective ring member.
struct EffectiveMember {
  std::string address;  // "host:port"
  grpc_core::ServerAddress server_address;
  double weight;
  bool draining;  // gone from the resolver, within its grace: not pickable
};

// The resolver's list as "host:port" strings without duplicates (first
// occurrence kept), with the matching ServerAddress; unprintable addresses
// are skipped (traced for `owner`).
void UniqueAddresses(const grpc_core::ServerAddressList& list,
                     std::vector<std::string>* names,
                     std::vector<grpc_core::ServerAddress>* addresses,
                     const void* owner);

// Not thread-safe: used from the policy's WorkSerializer only.
class Membership {
 public:
  Membership() = default;
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  // Sets the durations (config removalGraceMs, updateCoalesceMs). A change
  // of either starts over with an empty membership (nothing draining or
  // held), so the next Offer() applies at once.
  absl::Status Configure(uint64_t removal_grace_ms, uint64_t coalesce_ms);

  // Offers the resolver's list (names[i] is the text of addresses[i], no
  // duplicates) with the configured weights at now_ms; returns the
  // AP_MEMBERSHIP_* change bits.
  absl::StatusOr<unsigned> Offer(
      const std::vector<std::string>& names,
      const std::vector<grpc_core::ServerAddress>& addresses,
      const std::vector<double>& weights, uint64_t now_ms);

  // Applies what is due at now_ms; returns the change bits.
  absl::StatusOr<unsigned> Tick(uint64_t now_ms);

  // Forgets every member and held update (e.g. the resolver's list became
  // empty and the policy dropped all its endpoints).
  void Reset();

  // When Tick() has work next; AP_MEMBERSHIP_NO_DEADLINE when nothing is due.
  uint64_t NextDeadline() const;

  // The effective members (draining included), in the core's order.
  std::vector<EffectiveMember> Members() const;

 private:
  absl::Status EnsureCreated();
  void PruneAddresses();

  MembershipPtr core_;
  uint64_t removal_grace_ms_ = 0;
  uint64_t coalesce_ms_ = 0;
  // Latest ServerAddress per address, for members and the latest offer.
  std::map<std::string, grpc_core::ServerAddress> server_addresses_;
  std::vector<std::string> latest_offer_;
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_RING_MEMBERSHIP_H
