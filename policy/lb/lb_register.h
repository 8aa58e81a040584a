// Registration of the "aperture" policy with gRPC's core configuration.
#ifndef APERTURE_LB_REGISTER_H
#define APERTURE_LB_REGISTER_H

#include "policy/core/ap_error.h"

namespace aperture_lb {

// Registers the policy once per process. AP_ESTATE (no abort) when gRPC has
// already built its configuration. Thread-safe; idempotent.
int RegisterOnce(ap_error* err);

// True after a successful RegisterOnce().
bool IsRegistered();

// True when gRPC has built its core configuration (first channel, server
// or configuration lookup), after which builders can no longer be added.
bool CoreConfigurationBuilt();

}  // namespace aperture_lb

#endif  // APERTURE_LB_REGISTER_H
