#include "policy/lb/ring/stable_inputs.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace aperture_lb {

std::vector<uint64_t> StableEndpointKeys(
    const std::vector<EffectiveMember>& ring_members) {
  std::vector<uint64_t> keys;
  keys.reserve(ring_members.size());
  for (const EffectiveMember& m : ring_members) {
    keys.push_back(ap_stable_key(m.address.c_str()));
  }
  return keys;
}

std::vector<uint64_t> StablePeerKeys(const Coordinate& coordinate,
                                     bool* by_address) {
  if (by_address != nullptr) *by_address = false;
  std::vector<uint64_t> keys;
  if (!coordinate.known) return keys;
  const size_t count = coordinate.peer_count;
  keys.reserve(count);
  // A list of another size cannot be the one the coordinate came from.
  if (coordinate.peers != nullptr && coordinate.peers->size() == count) {
    for (const std::string& peer : *coordinate.peers) {
      keys.push_back(ap_stable_key(peer.c_str()));
    }
    if (by_address != nullptr) *by_address = true;
    return keys;
  }
  for (size_t i = 0; i < count; ++i) keys.push_back(ap_stable_ordinal_key(i));
  return keys;
}

absl::StatusOr<StableInputs> BuildStableInputs(
    const std::vector<EffectiveMember>& ring_members,
    const std::vector<double>& weights, const Coordinate& coordinate,
    uint32_t min_aperture) {
  StableInputs in;
  if (!coordinate.known || weights.size() != ring_members.size()) {
    return absl::UnavailableError(
        "aperture: stable mode needs a coordinate and one weight per "
        "endpoint");
  }
  in.endpoint_keys = StableEndpointKeys(ring_members);
  in.peer_keys = StablePeerKeys(coordinate, &in.peers_by_address);
  ap_stable_plan* plan = nullptr;
  ap_error err;
  if (ap_stable_plan_create(in.endpoint_keys.data(), weights.data(),
                            in.endpoint_keys.size(), in.peer_keys.data(),
                            in.peer_keys.size(), min_aperture, &plan,
                            &err) != AP_OK) {
    return absl::UnavailableError(
        absl::StrCat("aperture: cannot build the stable plan: ", err.message));
  }
  in.plan.reset(plan);
  return in;
}

}  // namespace aperture_lb
