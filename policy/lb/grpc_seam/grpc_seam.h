// The gRPC seam: the only place in policy/lb that uses gRPC C-core beyond
// the LB-policy API, and the only version-specific code (grpc_seam.cc).
//
// ---- The LB-policy API: what every other room may use ---------------------
//
// A room of policy/lb (every folder but this one) includes, of gRPC's
// internal source tree (src/...), only the headers on the "api:" lines
// below, and gets anything else of gRPC through this header. Public headers
// are not internals and are not listed: <grpc/...> (among them
// <grpc/impl/codegen/connectivity_state.h>, the grpc_connectivity_state
// enum; GRPC_ARG_* names; gpr_log) and absl. //tests/lb/grpc_seam:
// seam_wall_test reads the "api:" lines of this file and fails, naming the
// file and line, when a room includes another src/ header or names what is
// kept here (ExecCtx, timers and closures, CoreConfiguration, trace flags,
// resolvers, pollset functions, sockaddr printing, a "grpc.*" channel-arg name
// spelled as a string: kSeamNames in tests/lb/grpc_seam/seam_wall.cc).
// Comments do not count. The build backs it: rooms depend on
// //policy/lb/grpc_seam:lb_policy_api, and //bazel:grpc_internal is visible
// only to this package and to tests.
//
// api: src/core/lib/load_balancing/lb_policy.h
//   LoadBalancingPolicy with its Args, Config, ChannelControlHelper,
//   SubchannelPicker, QueuePicker, PickResult and call state: the policy.
// api: src/core/lib/load_balancing/lb_policy_factory.h
//   LoadBalancingPolicyFactory: creates the policy and parses its config.
// api: src/core/lib/load_balancing/lb_policy_registry.h
//   LoadBalancingPolicyRegistry::Builder, where the factory is registered
//   (AddPolicyRegistryBuilder below hands it over, not CoreConfiguration).
// api: src/core/lib/load_balancing/subchannel_interface.h
//   SubchannelInterface and its connectivity watcher: one per member.
// api: src/core/lib/resolver/server_address.h
//   ServerAddress(List): the addresses a resolver update carries.
// api: src/core/lib/channel/channel_args.h
//   ChannelArgs: the policy's args, read and passed on to subchannels.
// api: src/core/lib/json/json.h
//   Json: the parsed loadBalancingConfig the factory reads.
// api: src/core/lib/gprpp/ref_counted.h
//   RefCounted: the base of pickers, configs and the policy's helpers.
// api: src/core/lib/gprpp/ref_counted_ptr.h
//   RefCountedPtr, MakeRefCounted: how the API above passes those objects.
// api: src/core/lib/gprpp/orphanable.h
//   OrphanablePtr, MakeOrphanable: how the factory returns the policy.
// api: src/core/lib/gprpp/debug_location.h
//   DEBUG_LOCATION, which Ref() and WorkSerializer::Run() take.
// api: src/core/lib/gprpp/work_serializer.h
//   WorkSerializer: the policy's work_serializer(), where all its state
//   changes run.
//
// ---- What is behind the seam, and what is version-specific ---------------
//
// Written against gRPC 1.51.1 as Debian 12 builds it (libgrpc.so.29, with
// the internal headers of the same source, see bazel/setup.sh). What is
// version- or build-specific, and what to check for another version:
//
// 1. NDEBUG. Debian builds libgrpc without NDEBUG, and gRPC's internal
//    classes change layout with it (RefCount keeps a trace_ member only
//    without NDEBUG). A shim compiled with NDEBUG links cleanly and crashes
//    inside refcounted gRPC objects. Bazel's -c opt defines NDEBUG, so every
//    shim target undoes it with -UNDEBUG (SHIM_COPTS in shim_copts.bzl, the
//    only place that sets it), and this header refuses to compile under
//    NDEBUG. For another gRPC build: match how that library was compiled.
// 2. Registration (grpc_seam.cc, CoreConfigurationBuilt and
//    AddConfigurationBuilder). CoreConfiguration keeps the built
//    configuration (config_) and the builder list (builders_) in private
//    static atomics; RegisterBuilder() asserts once the configuration is
//    built, which a channel on another thread can do at any moment. The
//    seam reads config_ and pushes onto builders_ without the assertion,
//    reaching both through explicit template instantiation (naming a
//    private member is allowed there). This depends on the two members'
//    names and types and on the builder node's layout {builder, next}: for
//    another version, re-read src/core/lib/config/core_configuration.h and
//    adjust, or fall back to RegisterBuilder() before grpc_init().
// 3. Tracing: a grpc_core::TraceFlag registered at load time; gRPC parses
//    GRPC_TRACE in grpc_init(), so a library loaded later re-applies it.
// 4. Time and timers: grpc_timer_init/grpc_timer_cancel with a closure, an
//    ExecCtx for the clock and for threads gRPC did not start, the way
//    1.51's own policies schedule (its outlier_detection EjectionTimer).
//    Newer gRPC replaces these with the EventEngine: only SerializedTimer,
//    MonotonicNowMs and RunInGrpcContext change.
// 5. Resolvers: peer discovery runs a resolver from gRPC's registry
//    (CoreConfiguration::resolver_registry, Resolver::ResultHandler, a
//    pollset_set), and prints addresses with grpc_sockaddr_to_string.
// 6. Names kept in internal headers: ConnectivityStateName
//    (src/core/lib/transport/connectivity_state.h) and GRPC_ARG_SERVER_URI,
//    the channel arg that carries the target (client_channel.h). Check that
//    both still exist under these names.
// 7. Address attributes: the weight a resolver attaches to an address
//    (ServerAddressWeightAttribute in server_address.h, which 1.51's xDS
//    sets from EDS and its ring_hash reads). Newer gRPC moves it to a
//    channel arg of the endpoint (GRPC_ARG_ADDRESS_WEIGHT): only
//    ResolverWeight changes.
#ifndef APERTURE_LB_GRPC_SEAM_GRPC_SEAM_H
#define APERTURE_LB_GRPC_SEAM_GRPC_SEAM_H

#ifdef NDEBUG
#error "the aperture shim must be built without NDEBUG (-UNDEBUG): see above"
#endif

#include <stdint.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

#include <grpc/impl/codegen/connectivity_state.h>
#include <grpc/support/log.h>

#include "src/core/lib/channel/channel_args.h"
#include "src/core/lib/config/core_configuration.h"
#include "src/core/lib/debug/trace.h"
#include "src/core/lib/gprpp/orphanable.h"
#include "src/core/lib/gprpp/work_serializer.h"
#include "src/core/lib/iomgr/closure.h"
#include "src/core/lib/iomgr/error.h"
#include "src/core/lib/iomgr/timer.h"
#include "src/core/lib/load_balancing/lb_policy_registry.h"
#include "src/core/lib/resolver/server_address.h"

struct grpc_pollset_set;
namespace grpc_core {
class Resolver;
}  // namespace grpc_core

namespace aperture_lb {

// ---- Registration (item 2 above) ----------------------------------------

// True when gRPC has built its core configuration (first channel, server
// or configuration lookup), after which builders can no longer be added.
bool CoreConfigurationBuilt();

// Adds `builder` to gRPC's list of configuration builders with the same
// lock-free push CoreConfiguration::RegisterBuilder() does, minus its
// assertion: a build that started before the push may finish without it.
// Never aborts. The node is never freed (gRPC keeps its builders for the
// process lifetime too).
void AddConfigurationBuilder(
    void (*builder)(grpc_core::CoreConfiguration::Builder*));

// AddConfigurationBuilder for a builder that registers LB policies: Hook is
// handed the LB-policy registry's builder alone, so the rooms register the
// policy without naming CoreConfiguration.
template <void (*Hook)(grpc_core::LoadBalancingPolicyRegistry::Builder*)>
void AddPolicyRegistryBuilder() {
  AddConfigurationBuilder([](grpc_core::CoreConfiguration::Builder* builder) {
    Hook(builder->lb_policy_registry());
  });
}

// True when the built configuration has an LB policy named `name`. Only
// once CoreConfigurationBuilt() (otherwise it would build it).
bool BuiltConfigurationHasPolicy(const char* name);

// ---- Tracing (item 3) ----------------------------------------------------

// The "aperture" trace flag: GRPC_TRACE=aperture (or "all") makes the policy
// log its decisions (coordinate, aperture, widening, pickers) at INFO level.
// Registered with gRPC's tracer list when the library is loaded, so
// grpc_init() applies GRPC_TRACE to it like to any built-in flag.
extern grpc_core::TraceFlag g_aperture_trace;

// Applies GRPC_TRACE to the flag again: needed when the library was loaded
// after grpc_init() already parsed the variable.
void ApplyTraceEnvironment();

#define APERTURE_TRACE(...)                                       \
  do {                                                            \
    if (GRPC_TRACE_FLAG_ENABLED(aperture_lb::g_aperture_trace)) { \
      gpr_log(GPR_INFO, __VA_ARGS__);                             \
    }                                                             \
  } while (0)

// ---- Time and timers (item 4) -------------------------------------------

// Runs `fn` on this thread inside gRPC's per-thread execution context (an
// ExecCtx), which work serializers, timers, resolvers and the clock need on
// a thread gRPC did not start (e.g. a C API caller's). What `fn` leaves
// queued on that context runs before this returns. May be nested.
void RunInGrpcContext(absl::FunctionRef<void()> fn);

// The monotonic clock the policy feeds to ap_membership: milliseconds since
// gRPC's process epoch (the clock grpc_timer deadlines use). Needs an
// ExecCtx on the thread (policy callbacks have one).
uint64_t MonotonicNowMs();

// A one-shot timer whose callback runs in a WorkSerializer.
class SerializedTimer
    : public grpc_core::InternallyRefCounted<SerializedTimer> {
 public:
  // Runs `on_fire` in `serializer` once, at or after `deadline_ms`
  // (MonotonicNowMs() clock), unless orphaned first. `on_fire` owns whatever
  // it captures (e.g. a ref to the policy) until the timer is gone.
  // Create and orphan it in the serializer.
  SerializedTimer(std::shared_ptr<grpc_core::WorkSerializer> serializer,
                  uint64_t deadline_ms, std::function<void()> on_fire);

  // Cancels the timer; `on_fire` will not run.
  void Orphan() override;

  uint64_t deadline_ms() const { return deadline_ms_; }

 private:
  static void OnTimer(void* arg, grpc_error_handle error);
  void OnTimerLocked(grpc_error_handle error);

  std::shared_ptr<grpc_core::WorkSerializer> serializer_;
  const uint64_t deadline_ms_;
  std::function<void()> on_fire_;
  grpc_timer timer_;
  grpc_closure on_timer_;
  bool pending_ = true;  // only touched in the serializer
};

// Runs a callback every interval in the serializer (e.g. the policy's
// periodic re-resolution). Every method runs in the serializer.
class PeriodicTimer {
 public:
  explicit PeriodicTimer(std::shared_ptr<grpc_core::WorkSerializer> serializer)
      : serializer_(std::move(serializer)) {}

  // Runs `on_fire` every `interval_ms` from now on; 0 stops. The interval
  // already running keeps its timer and callback; a changed one starts
  // over. `on_fire` may hold a ref to its owner: StopLocked() drops it.
  void ConfigureLocked(uint64_t interval_ms, std::function<void()> on_fire);
  void StopLocked() { ConfigureLocked(0, nullptr); }

 private:
  void StartLocked();

  std::shared_ptr<grpc_core::WorkSerializer> serializer_;
  uint64_t interval_ms_ = 0;
  std::function<void()> on_fire_;
  grpc_core::OrphanablePtr<SerializedTimer> timer_;
};

// ---- Resolvers and addresses (item 5) -----------------------------------

// True when a resolver in gRPC's registry accepts `target`.
bool IsResolvableTarget(const std::string& target);

// One gRPC resolver for a target, run in a WorkSerializer: peer discovery's
// source of peer lists. Create, start, re-resolve and destroy it in that
// serializer.
class TargetResolver {
 public:
  // An answer: the addresses, or the resolver's error; the resolver's note
  // (why a list is empty) beside it.
  using OnResult = std::function<void(
      absl::StatusOr<grpc_core::ServerAddressList> addresses,
      const std::string& note)>;

  // Null when no resolver accepts `target`. `min_interval_ms` bounds how
  // often a DNS resolver asks again; service configs from TXT records are
  // not fetched. `on_result` runs in `serializer`.
  static std::unique_ptr<TargetResolver> Create(
      const std::string& target, uint64_t min_interval_ms,
      std::shared_ptr<grpc_core::WorkSerializer> serializer,
      OnResult on_result);
  ~TargetResolver();

  void StartLocked();
  void RequestReresolutionLocked();

 private:
  class Handler;
  TargetResolver() = default;

  grpc_pollset_set* pollset_set_ = nullptr;
  grpc_core::OrphanablePtr<grpc_core::Resolver> resolver_;
};

// "host:port" (IPv6 as "[addr]:port") of a resolved address, as gRPC prints
// it; an error for an address family it cannot print.
absl::StatusOr<std::string> AddressText(
    const grpc_core::ServerAddress& address);

// ---- Address attributes (item 7) -----------------------------------------

// The weight the resolver gave `address` (under xDS: the EDS endpoint's
// load_balancing_weight times its locality's weight, as gRPC 1.51's
// xds_cluster_resolver computes it); nullopt when it gave none.
absl::optional<uint32_t> ResolverWeight(
    const grpc_core::ServerAddress& address);

// ---- Names kept in internal headers (item 6) -------------------------------

// gRPC's own name of a connectivity state ("IDLE", "CONNECTING", "READY",
// "TRANSIENT_FAILURE", "SHUTDOWN"), the one its traces print; "UNKNOWN"
// for a value outside the enum.
const char* StateText(grpc_connectivity_state state);

// The channel's target URI, which the client channel passes to its LB
// policy in the channel args; nullopt when the args lack it. A view into
// `args`.
absl::optional<absl::string_view> ChannelTargetUri(
    const grpc_core::ChannelArgs& args);

}  // namespace aperture_lb

#endif  // APERTURE_LB_GRPC_SEAM_GRPC_SEAM_H
