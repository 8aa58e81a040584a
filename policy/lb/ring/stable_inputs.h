// Stable mode's inputs, gathered for the core (ap_stable.h): the key of
// every endpoint (its address as the resolver gave it) in ring order, the
// key of every peer in peer-index order, and the one plan of the service
// built from them. The shim only gathers keys here; membership and shares
// are the core's.
#ifndef APERTURE_LB_RING_STABLE_INPUTS_H
#define APERTURE_LB_RING_STABLE_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "policy/core/stable/ap_stable.h"
#include "policy/lb/coordinate/coordinate.h"
#include "policy/lb/ring/membership.h"

namespace aperture_lb {

struct StablePlanDeleter {
  void operator()(ap_stable_plan* p) const { ap_stable_plan_destroy(p); }
};
using StablePlanPtr = std::unique_ptr<ap_stable_plan, StablePlanDeleter>;

// What BuildStableInputs() gathers: the keys the plan was built from (the
// peer keys also enter the snapshot key) and the plan, which goes to
// ap_subset_params.stable_plan and must outlive the compute call.
struct StableInputs {
  std::vector<uint64_t> endpoint_keys;  // ring order
  std::vector<uint64_t> peer_keys;      // peer-index order
  // True when the peers are keyed by their peer-list entries, false when
  // by their ordinals (no peer list behind the coordinate).
  bool peers_by_address = false;
  StablePlanPtr plan;
};

// The keys of the endpoint addresses, in the given (ring) order.
std::vector<uint64_t> StableEndpointKeys(
    const std::vector<EffectiveMember>& ring_members);

// The keys of the coordinate's peers: ap_stable_key() of each entry of the
// peer list behind it when it has one of peer_count entries, else
// ap_stable_ordinal_key() of each peer index. Sets *by_address (when not
// null) to which. Empty when the coordinate is unknown.
std::vector<uint64_t> StablePeerKeys(const Coordinate& coordinate,
                                     bool* by_address);

// Gathers the keys and builds the service's plan for `ring_members` (ring
// order) with their `weights`, at `coordinate` (known), for
// `min_aperture`. Errors are UNAVAILABLE and start with "aperture: ".
absl::StatusOr<StableInputs> BuildStableInputs(
    const std::vector<EffectiveMember>& ring_members,
    const std::vector<double>& weights, const Coordinate& coordinate,
    uint32_t min_aperture);

}  // namespace aperture_lb

#endif  // APERTURE_LB_RING_STABLE_INPUTS_H
