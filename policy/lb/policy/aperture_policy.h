// The "aperture" LoadBalancingPolicy for gRPC 1.51.1 (C++ shim over the C
// core): builds the ring and the aperture, keeps one subchannel per member,
// widens on failures, publishes pickers and registry snapshots.
#ifndef APERTURE_LB_POLICY_APERTURE_POLICY_H
#define APERTURE_LB_POLICY_APERTURE_POLICY_H

#include "src/core/lib/load_balancing/lb_policy_registry.h"

namespace aperture_lb {

// Adds the "aperture" policy factory to an LB-policy registry being built.
void RegisterAperturePolicy(
    grpc_core::LoadBalancingPolicyRegistry::Builder* registry);

}  // namespace aperture_lb

#endif  // APERTURE_LB_POLICY_APERTURE_POLICY_H
