#include "policy/lb/api/registration.h"

#include <mutex>
#include <string>

#include "policy/lb/config/config.h"
#include "policy/lb/grpc_seam/grpc_seam.h"
#include "policy/lb/policy/aperture_policy.h"

namespace aperture_lb {
namespace {

// Guards the four flags; the build hook takes it while gRPC builds, so a
// registration is either before the decision (and included) or after it
// (and told the truth).
std::mutex g_mu;
bool g_hook_installed = false;  // our hook is in gRPC's builder list
bool g_requested = false;       // RegisterOnce() asked for the policy
bool g_decided = false;         // a configuration build ran the hook
bool g_included = false;        // ... and it added the policy

// Runs inside every configuration build (concurrent builds are possible;
// the first one decides for all, so they agree).
void BuildHook(grpc_core::LoadBalancingPolicyRegistry::Builder* registry) {
  bool include;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_decided) {
      g_decided = true;
      g_included = g_requested;
    }
    include = g_included;
  }
  if (include) RegisterAperturePolicy(registry);
}

bool PolicyInBuiltConfiguration() {
  return BuiltConfigurationHasPolicy(std::string(kPolicyName).c_str());
}

}  // namespace

void InstallBuildHook() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_hook_installed || CoreConfigurationBuilt()) return;
  AddPolicyRegistryBuilder<BuildHook>();
  // A build that started before the push may finish without the hook; the
  // answers below then come from the built configuration itself.
  g_hook_installed = true;
}

bool IsRegistered() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (CoreConfigurationBuilt()) return PolicyInBuiltConfiguration();
  if (g_decided) return g_included;
  return g_hook_installed && g_requested;
}

int RegisterOnce(ap_error* err) {
  std::lock_guard<std::mutex> lock(g_mu);
  bool ok;
  if (CoreConfigurationBuilt()) {
    ok = PolicyInBuiltConfiguration();
  } else if (g_decided) {
    ok = g_included;  // a build is finishing
  } else {
    ok = g_hook_installed;
    if (ok && !g_requested) {
      g_requested = true;
      ApplyTraceEnvironment();
      APERTURE_TRACE("aperture LB policy registered");
    }
  }
  if (!ok) {
    return ap_error_set(
        err, AP_ESTATE,
        "too late to register the aperture LB policy: gRPC already built its "
        "core configuration (a channel or server was created first); "
        "register before creating any channel or server");
  }
  ap_error_clear(err);
  return AP_OK;
}

}  // namespace aperture_lb
