// One applied membership, frozen: the members in the agreed ring order, the
// ring over their weights, the base aperture (before any widening), the
// coordinate it was computed for and an address -> ring index map. Built
// only by BuildRingSnapshot(), a pure function of its arguments, once per
// rebuild; immutable afterwards, so the policy shares it by reference with
// the state publisher (a connectivity change copies nothing of size N);
// frees its core objects itself.
#ifndef APERTURE_LB_RING_RING_SNAPSHOT_H
#define APERTURE_LB_RING_RING_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"

#include "policy/lb/config/config.h"
#include "policy/lb/coordinate/coordinate.h"
#include "policy/lb/core_ptr.h"
#include "policy/lb/ring/membership.h"

namespace aperture_lb {

class RingSnapshot {
 public:
  RingSnapshot(const RingSnapshot&) = delete;
  RingSnapshot& operator=(const RingSnapshot&) = delete;

  // members()[i] is ring index i (draining members keep their slot).
  const std::vector<EffectiveMember>& members() const { return members_; }
  size_t size() const { return members_.size(); }
  const std::string& address(size_t i) const { return members_[i].address; }
  bool draining(size_t i) const { return members_[i].draining; }
  size_t draining_count() const { return draining_count_; }
  // True when `address` is a member in its removal grace. O(1).
  bool IsDraining(std::string_view address) const;
  // Sets *index to the ring index of `address` and returns true; false
  // when it is not a member. O(1).
  bool IndexOf(std::string_view address, uint32_t* index) const;

  const ap_ring* ring() const { return ring_.get(); }
  const ap_aperture* aperture() const { return aperture_.get(); }
  const Coordinate& coordinate() const { return coordinate_; }
  // Fingerprint of the ordered address list (ap_order_fingerprint).
  uint64_t fingerprint() const { return fingerprint_; }
  // Changes whenever the ring or the aperture would: the fingerprint, the
  // weights and the subset parameters.
  uint64_t key() const { return key_; }
  // READY members the first READY picker waits for, and the widening floor:
  // the config's minReady (at most the member count) or the logical
  // aperture; at least 1.
  uint32_t min_ready() const { return min_ready_; }
  // Stable mode: true when the plan keyed the peers by their peer-list
  // entries, false when by their ordinals (or in another mode).
  bool stable_peers_by_address() const { return stable_peers_by_address_; }
  // How the stable plan keyed the peers: "address" (their peer-list
  // entries), "ordinal" (their indices), or "" when no plan was built
  // (another mode, or no coordinate).
  const char* stable_peer_keys() const {
    if (!stable_plan_built_) return "";
    return stable_peers_by_address_ ? "address" : "ordinal";
  }
  // RingInputKey() of the arguments this snapshot was built from: equal
  // keys mean a new build would give the same snapshot.
  uint64_t input_key() const { return input_key_; }

 private:
  friend absl::StatusOr<std::unique_ptr<const RingSnapshot>> BuildRingSnapshot(
      std::vector<EffectiveMember> members, const ApertureSettings& settings,
      const Coordinate& coordinate, uint64_t fallback_random_seed);
  RingSnapshot() = default;

  std::vector<EffectiveMember> members_;
  // Keys view members_[i].address, which never moves after the build.
  std::unordered_map<std::string_view, uint32_t> index_of_;
  size_t draining_count_ = 0;
  RingPtr ring_;
  AperturePtr aperture_;
  Coordinate coordinate_;
  uint64_t fingerprint_ = 0;
  uint64_t key_ = 0;
  uint32_t min_ready_ = 1;
  bool stable_peers_by_address_ = false;
  bool stable_plan_built_ = false;
  uint64_t input_key_ = 0;
};

// A 64-bit key of everything BuildRingSnapshot() reads: each member's
// address, weight, draining flag and resolver entry (ServerAddress, with
// its attributes), whatever their order; the settings it uses, which are
// the config fields the field table marks RingRole::kSetting (mode,
// minAperture, minReady, randomSeed: config/config_fields.h); the
// coordinate (index, count, source, note, staleness, the peer list's
// entries); and `fallback_random_seed`. O(N + peers) hashing, no allocation of size N
// beyond one vector of hashes; computed before a build so that an
// unchanged update builds nothing.
uint64_t RingInputKey(const std::vector<EffectiveMember>& members,
                      const ApertureSettings& settings,
                      const Coordinate& coordinate,
                      uint64_t fallback_random_seed);

// Orders `members` (in any order, no duplicate addresses) by address with
// the core's agreed order, builds the ring from their weights and computes
// the aperture for `settings` (mode, minAperture, randomSeed, minReady) at
// `coordinate` (random placement when !coordinate.known). Stable mode
// builds the service's plan once here from the members' addresses and the
// coordinate's peers (stable_inputs.h). Random mode uses
// `fallback_random_seed` when the config gives no seed. Errors (empty list,
// bad weight, coordinate out of range, ...) are UNAVAILABLE with a message
// that starts with "aperture: " and says which step failed.
absl::StatusOr<std::unique_ptr<const RingSnapshot>> BuildRingSnapshot(
    std::vector<EffectiveMember> members, const ApertureSettings& settings,
    const Coordinate& coordinate, uint64_t fallback_random_seed);

// What the status service's last_status says about a freshly applied ring:
// the missing coordinate (random aperture) or the coordinate's note, and
// the draining members; "" when there is nothing to report.
std::string RingStatusNote(const RingSnapshot& ring);

}  // namespace aperture_lb

#endif  // APERTURE_LB_RING_RING_SNAPSHOT_H
