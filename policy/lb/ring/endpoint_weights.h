// The weight each address of a resolver update enters the ring with: the
// config's `weights` map, the weight the resolver attached (EDS under
// xDS), or 1.
#ifndef APERTURE_LB_RING_ENDPOINT_WEIGHTS_H
#define APERTURE_LB_RING_ENDPOINT_WEIGHTS_H

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "absl/types/optional.h"

#include "src/core/lib/resolver/server_address.h"

namespace aperture_lb {

// The weight of `address`:
//   - its entry in `configured` (the config's `weights`) when it has one:
//     the config overrides the resolver, so an operator can pin one
//     address (a canary, a smaller machine) whatever the control plane
//     says;
//   - else `resolver_weight` when the resolver gave one above 0, capped at
//     AP_MAX_WEIGHT (the most the ring takes; EDS weights are uint32);
//   - else 1.
// A pure function of its inputs, so every client given the same EDS data
// and config builds the same ring.
double EndpointWeight(const std::string& address,
                      absl::optional<uint32_t> resolver_weight,
                      const std::map<std::string, double>& configured);

// EndpointWeight() of each of `names` (the text of `addresses[i]`), the
// resolver's weight read from its address (ResolverWeight()).
std::vector<double> EndpointWeights(
    const std::vector<std::string>& names,
    const std::vector<grpc_core::ServerAddress>& addresses,
    const std::map<std::string, double>& configured);

}  // namespace aperture_lb

#endif  // APERTURE_LB_RING_ENDPOINT_WEIGHTS_H
