#include "policy/lb/lb_register.h"

#include <atomic>
#include <mutex>
#include <type_traits>

#include "policy/lb/lb_policy.h"
#include "policy/lb/lb_trace.h"
#include "src/core/lib/config/core_configuration.h"
#include "src/core/lib/load_balancing/lb_policy_registry.h"

namespace aperture_lb {
namespace {

// CoreConfiguration keeps the built configuration (config_) and the list of
// builders (builders_) in private static atomics. Naming a private member is
// allowed in an explicit template instantiation, which is how we reach them:
// config_ to tell whether it is built, builders_ to add our hook with the
// same lock-free push RegisterBuilder() does, minus its assertion (which
// would abort if a channel on another thread built the configuration
// meanwhile).
struct ConfigSlot {
  friend auto Get(ConfigSlot);
};
struct BuildersSlot {
  friend auto Get(BuildersSlot);
};
template <typename Tag, auto Member>
struct PrivateMemberAccess {
  friend auto Get(Tag) { return Member; }
};
template struct PrivateMemberAccess<ConfigSlot,
                                    &grpc_core::CoreConfiguration::config_>;
template struct PrivateMemberAccess<BuildersSlot,
                                    &grpc_core::CoreConfiguration::builders_>;

// gRPC's node type for one builder (a private name, reached by type).
using BuilderNode =
    std::remove_pointer_t<decltype(Get(BuildersSlot())->load())>;

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
void BuildHook(grpc_core::CoreConfiguration::Builder* builder) {
  bool include;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_decided) {
      g_decided = true;
      g_included = g_requested;
    }
    include = g_included;
  }
  if (include) RegisterAperturePolicy(builder);
}

// Only once the configuration is built (else Get() would build it).
bool PolicyInBuiltConfiguration() {
  return grpc_core::CoreConfiguration::Get()
      .lb_policy_registry()
      .LoadBalancingPolicyExists("aperture", nullptr);
}

}  // namespace

bool CoreConfigurationBuilt() {
  return Get(ConfigSlot())->load(std::memory_order_acquire) != nullptr;
}

void InstallBuildHook() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_hook_installed || CoreConfigurationBuilt()) return;
  auto* node = new BuilderNode();
  node->builder = BuildHook;
  std::atomic<BuilderNode*>* head = Get(BuildersSlot());
  node->next = head->load(std::memory_order_relaxed);
  while (!head->compare_exchange_weak(node->next, node,
                                      std::memory_order_acq_rel,
                                      std::memory_order_relaxed)) {
  }
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
