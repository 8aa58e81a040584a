#include "policy/lb/lb_register.h"

#include <atomic>
#include <mutex>

#include "policy/lb/lb_policy.h"
#include "policy/lb/lb_trace.h"
#include "src/core/lib/config/core_configuration.h"

namespace aperture_lb {
namespace {

// CoreConfiguration keeps the built configuration in a private static
// atomic (config_) and asserts in RegisterBuilder() when it is set. Naming a
// private member is allowed in an explicit template instantiation, which is
// how we read it without aborting.
struct ConfigSlot {
  using type = std::atomic<grpc_core::CoreConfiguration*>*;
  friend type Get(ConfigSlot);
};
template <typename Tag, typename Tag::type Member>
struct PrivateMemberAccess {
  friend typename Tag::type Get(Tag) { return Member; }
};
template struct PrivateMemberAccess<ConfigSlot,
                                    &grpc_core::CoreConfiguration::config_>;

std::mutex g_register_mu;
std::atomic<bool> g_registered{false};

}  // namespace

bool CoreConfigurationBuilt() {
  return Get(ConfigSlot())->load(std::memory_order_acquire) != nullptr;
}

bool IsRegistered() { return g_registered.load(std::memory_order_acquire); }

int RegisterOnce(ap_error* err) {
  std::lock_guard<std::mutex> lock(g_register_mu);
  if (g_registered.load(std::memory_order_relaxed)) {
    ap_error_clear(err);
    return AP_OK;
  }
  if (CoreConfigurationBuilt()) {
    return ap_error_set(
        err, AP_ESTATE,
        "too late to register the aperture LB policy: gRPC already built its "
        "core configuration (a channel or server was created first); "
        "register before creating any channel or server");
  }
  grpc_core::CoreConfiguration::RegisterBuilder(RegisterAperturePolicy);
  ApplyTraceEnvironment();
  g_registered.store(true, std::memory_order_release);
  APERTURE_TRACE("aperture LB policy registered");
  ap_error_clear(err);
  return AP_OK;
}

}  // namespace aperture_lb
