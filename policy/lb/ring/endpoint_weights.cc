#include "policy/lb/ring/endpoint_weights.h"

#include <algorithm>

#include "policy/core/ap_number.h"
#include "policy/lb/grpc_seam/grpc_seam.h"

namespace aperture_lb {

double EndpointWeight(const std::string& address,
                      absl::optional<uint32_t> resolver_weight,
                      const std::map<std::string, double>& configured) {
  auto it = configured.find(address);
  if (it != configured.end()) return it->second;
  // 0 cannot come from EDS (gRPC rejects it); from another resolver it
  // would take the endpoint off the ring, which removing it does better.
  if (resolver_weight.has_value() && *resolver_weight > 0) {
    return std::min(static_cast<double>(*resolver_weight), AP_MAX_WEIGHT);
  }
  return 1.0;
}

std::vector<double> EndpointWeights(
    const std::vector<std::string>& names,
    const std::vector<grpc_core::ServerAddress>& addresses,
    const std::map<std::string, double>& configured) {
  std::vector<double> weights(names.size(), 1.0);
  for (size_t i = 0; i < names.size() && i < addresses.size(); ++i) {
    weights[i] =
        EndpointWeight(names[i], ResolverWeight(addresses[i]), configured);
  }
  return weights;
}

}  // namespace aperture_lb
