// gRPC 1.51.1 specifics behind grpc_seam.h; its header comment says what
// each part depends on and what changes for another version.
#include "policy/lb/grpc_seam/grpc_seam.h"

#include <stdlib.h>

#include <atomic>
#include <type_traits>
#include <utility>

#include <grpc/grpc.h>
#include <grpc/impl/codegen/grpc_types.h>

#include "src/core/ext/filters/client_channel/client_channel.h"
#include "src/core/lib/address_utils/sockaddr_utils.h"
#include "src/core/lib/gprpp/debug_location.h"
#include "src/core/lib/gprpp/time.h"
#include "src/core/lib/iomgr/exec_ctx.h"
#include "src/core/lib/iomgr/pollset_set.h"
#include "src/core/lib/resolver/resolver.h"
#include "src/core/lib/transport/connectivity_state.h"

namespace aperture_lb {
namespace {

// Private-member access (header item 2): naming a private member is allowed
// in an explicit template instantiation; the friend function it defines
// hands out the member pointer.
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

}  // namespace

bool CoreConfigurationBuilt() {
  return Get(ConfigSlot())->load(std::memory_order_acquire) != nullptr;
}

void AddConfigurationBuilder(
    void (*builder)(grpc_core::CoreConfiguration::Builder*)) {
  auto* node = new BuilderNode();
  node->builder = builder;
  std::atomic<BuilderNode*>* head = Get(BuildersSlot());
  node->next = head->load(std::memory_order_relaxed);
  while (!head->compare_exchange_weak(node->next, node,
                                      std::memory_order_acq_rel,
                                      std::memory_order_relaxed)) {
  }
}

bool BuiltConfigurationHasPolicy(const char* name) {
  return grpc_core::CoreConfiguration::Get()
      .lb_policy_registry()
      .LoadBalancingPolicyExists(name, nullptr);
}

// ---- Tracing ---------------------------------------------------------------

grpc_core::TraceFlag g_aperture_trace(false, "aperture");

void ApplyTraceEnvironment() {
  const char* env = getenv("GRPC_TRACE");
  if (env == nullptr) return;
  // Same grammar as gRPC: comma-separated names, "-name" disables.
  std::string list(env);
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    if (name == "aperture" || name == "all") {
      grpc_tracer_set_enabled("aperture", 1);
    } else if (name == "-aperture" || name == "-all") {
      grpc_tracer_set_enabled("aperture", 0);
    }
    start = end + 1;
  }
}

// ---- Time and timers -------------------------------------------------------

void RunInGrpcContext(absl::FunctionRef<void()> fn) {
  grpc_core::ExecCtx exec_ctx;
  fn();
}

uint64_t MonotonicNowMs() {
  // The ExecCtx caches "now"; a timer callback must see the real time or it
  // could find its deadline not yet reached and re-arm the same deadline.
  grpc_core::ExecCtx::Get()->InvalidateNow();
  return grpc_core::Timestamp::Now().milliseconds_after_process_epoch();
}

SerializedTimer::SerializedTimer(
    std::shared_ptr<grpc_core::WorkSerializer> serializer,
    uint64_t deadline_ms, std::function<void()> on_fire)
    : serializer_(std::move(serializer)),
      deadline_ms_(deadline_ms),
      on_fire_(std::move(on_fire)) {
  GRPC_CLOSURE_INIT(&on_timer_, OnTimer, this, nullptr);
  Ref().release();  // held by the pending timer callback
  grpc_timer_init(&timer_,
                  grpc_core::Timestamp::FromMillisecondsAfterProcessEpoch(
                      static_cast<int64_t>(deadline_ms)),
                  &on_timer_);
}

void SerializedTimer::Orphan() {
  if (pending_) {
    pending_ = false;
    grpc_timer_cancel(&timer_);
  }
  Unref();
}

void SerializedTimer::OnTimer(void* arg, grpc_error_handle error) {
  auto* self = static_cast<SerializedTimer*>(arg);
  self->serializer_->Run([self, error]() { self->OnTimerLocked(error); },
                         DEBUG_LOCATION);
}

void SerializedTimer::OnTimerLocked(grpc_error_handle error) {
  if (error.ok() && pending_) {
    pending_ = false;
    // Moved out first: the callback may orphan this timer (replacing it).
    std::function<void()> on_fire = std::move(on_fire_);
    on_fire();
  }
  Unref();
}

void PeriodicTimer::ConfigureLocked(uint64_t interval_ms,
                                    std::function<void()> on_fire) {
  if (interval_ms == 0) {
    timer_.reset();
    on_fire_ = nullptr;
    interval_ms_ = 0;
    return;
  }
  if (timer_ != nullptr && interval_ms_ == interval_ms) return;
  interval_ms_ = interval_ms;
  on_fire_ = std::move(on_fire);
  StartLocked();
}

void PeriodicTimer::StartLocked() {
  timer_ = grpc_core::MakeOrphanable<SerializedTimer>(
      serializer_, MonotonicNowMs() + interval_ms_, [this]() {
        timer_.reset();
        if (on_fire_ == nullptr) return;
        StartLocked();  // first: on_fire_ may stop or reconfigure
        std::function<void()> on_fire = on_fire_;
        on_fire();
      });
}

// ---- Resolvers and addresses ----------------------------------------------

bool IsResolvableTarget(const std::string& target) {
  return grpc_core::CoreConfiguration::Get().resolver_registry().IsValidTarget(
      target);
}

class TargetResolver::Handler : public grpc_core::Resolver::ResultHandler {
 public:
  explicit Handler(OnResult on_result) : on_result_(std::move(on_result)) {}
  void ReportResult(grpc_core::Resolver::Result result) override {
    on_result_(std::move(result.addresses), result.resolution_note);
  }

 private:
  OnResult on_result_;
};

std::unique_ptr<TargetResolver> TargetResolver::Create(
    const std::string& target, uint64_t min_interval_ms,
    std::shared_ptr<grpc_core::WorkSerializer> serializer,
    OnResult on_result) {
  // The DNS resolver would otherwise hold a re-resolution back for 30 s;
  // the service config in TXT records is no business of a peer list.
  grpc_core::ChannelArgs args =
      grpc_core::ChannelArgs()
          .Set(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS,
               static_cast<int>(min_interval_ms))
          .Set(GRPC_ARG_SERVICE_CONFIG_DISABLE_RESOLUTION, true);
  std::unique_ptr<TargetResolver> out(new TargetResolver());
  out->pollset_set_ = grpc_pollset_set_create();
  out->resolver_ =
      grpc_core::CoreConfiguration::Get().resolver_registry().CreateResolver(
          target, args, out->pollset_set_, std::move(serializer),
          std::make_unique<Handler>(std::move(on_result)));
  if (out->resolver_ == nullptr) return nullptr;
  return out;
}

TargetResolver::~TargetResolver() {
  resolver_.reset();  // before the pollset_set it uses
  if (pollset_set_ != nullptr) grpc_pollset_set_destroy(pollset_set_);
}

void TargetResolver::StartLocked() { resolver_->StartLocked(); }

void TargetResolver::RequestReresolutionLocked() {
  resolver_->RequestReresolutionLocked();
}

absl::StatusOr<std::string> AddressText(
    const grpc_core::ServerAddress& address) {
  return grpc_sockaddr_to_string(&address.address(), false);
}

// ---- Address attributes ------------------------------------------------

absl::optional<uint32_t> ResolverWeight(
    const grpc_core::ServerAddress& address) {
  const auto* weight =
      static_cast<const grpc_core::ServerAddressWeightAttribute*>(
          address.GetAttribute(grpc_core::ServerAddressWeightAttribute::
                                   kServerAddressWeightAttributeKey));
  if (weight == nullptr) return absl::nullopt;
  return weight->weight();
}

// ---- Names kept in internal headers ---------------------------------------

const char* StateText(grpc_connectivity_state state) {
  // gRPC's function aborts on a value outside the enum.
  if (state < GRPC_CHANNEL_IDLE || state > GRPC_CHANNEL_SHUTDOWN) {
    return "UNKNOWN";
  }
  return grpc_core::ConnectivityStateName(state);
}

absl::optional<absl::string_view> ChannelTargetUri(
    const grpc_core::ChannelArgs& args) {
  return args.GetString(GRPC_ARG_SERVER_URI);
}

}  // namespace aperture_lb
