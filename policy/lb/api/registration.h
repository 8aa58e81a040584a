// Registration of the "aperture" policy with gRPC's core configuration.
//
// gRPC builds its configuration once, on the first channel, server or
// lookup, by running every registered builder; registering a builder after
// that asserts (aborts). To leave no check-then-register window, the library
// installs one build hook when it is loaded, and the hook decides, while
// gRPC builds, whether the policy goes in: it does when RegisterOnce() ran
// before that moment. RegisterOnce() itself never calls into gRPC's
// registration, so no thread order can make it abort.
#ifndef APERTURE_LB_API_REGISTRATION_H
#define APERTURE_LB_API_REGISTRATION_H

#include "policy/core/ap_error.h"

namespace aperture_lb {

// Adds the build hook to gRPC's list of configuration builders. Called once
// when the library is loaded; a no-op (the hook stays out) when gRPC had
// already built its configuration. Thread-safe; never aborts.
void InstallBuildHook();

// Asks for the policy to be in gRPC's configuration. AP_OK when it is or
// will be; AP_ESTATE (no abort) when the configuration was built without it.
// Thread-safe, idempotent, race-free against channel creation on any thread.
int RegisterOnce(ap_error* err);

// True when the policy is in gRPC's built configuration or, before it is
// built, will be.
bool IsRegistered();

}  // namespace aperture_lb

#endif  // APERTURE_LB_API_REGISTRATION_H
