#include "policy/lb/lb_policy.h"

#include <inttypes.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <grpc/impl/codegen/connectivity_state.h>

#include "policy/core/ap_aperture.h"
#include "policy/core/ap_hash.h"
#include "policy/core/ap_order.h"
#include "policy/core/ap_pick.h"
#include "policy/core/ap_ring.h"
#include "policy/lb/affinity_picker.h"
#include "policy/lb/lb_config.h"
#include "policy/lb/lb_coordinate.h"
#include "policy/lb/lb_membership.h"
#include "policy/lb/lb_picker.h"
#include "policy/lb/lb_state.h"
#include "policy/lb/lb_timer.h"
#include "policy/lb/lb_trace.h"
#include "policy/lb/peer_tracker.h"
#include "policy/registry/ap_registry.h"
#include "src/core/lib/address_utils/sockaddr_utils.h"
#include "src/core/lib/gprpp/debug_location.h"
#include "src/core/lib/gprpp/orphanable.h"
#include "src/core/lib/gprpp/ref_counted.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"
#include "src/core/lib/load_balancing/lb_policy.h"
#include "src/core/lib/load_balancing/lb_policy_factory.h"
#include "src/core/lib/load_balancing/lb_policy_registry.h"
#include "src/core/lib/load_balancing/subchannel_interface.h"
#include "src/core/lib/resolver/server_address.h"
#include "src/core/lib/transport/connectivity_state.h"

// Same name the client channel uses for the target URI channel arg.
#define APERTURE_ARG_SERVER_URI "grpc.server_uri"

namespace aperture_lb {
namespace {

using grpc_core::ChannelArgs;
using grpc_core::Json;
using grpc_core::LoadBalancingPolicy;
using grpc_core::RefCountedPtr;
using grpc_core::ServerAddress;
using grpc_core::SubchannelInterface;

// Seed of random mode when the config gives none: fixed for the process so
// that re-resolutions keep the same random subset.
uint64_t ProcessRandomSeed() {
  static const uint64_t seed = [] {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ap_mix64(static_cast<uint64_t>(ts.tv_nsec) ^
                    (static_cast<uint64_t>(ts.tv_sec) << 20) ^
                    (static_cast<uint64_t>(getpid()) << 40));
  }();
  return seed;
}

int ToApConnectivity(grpc_connectivity_state state) {
  return static_cast<int>(state);  // ap_connectivity mirrors the enum
}

class AperturePolicy : public LoadBalancingPolicy {
 public:
  explicit AperturePolicy(Args args);
  ~AperturePolicy() override;

  absl::string_view name() const override { return kPolicyName; }
  absl::Status UpdateLocked(UpdateArgs args) override;
  void ExitIdleLocked() override;
  void ResetBackoffLocked() override;

 private:
  class Endpoint;
  class Watcher;

  void ShutdownLocked() override;

  const ap_aperture* current() const {
    return widened_ != nullptr ? widened_ : base_;
  }
  void ClearRingLocked();
  void DropAllEndpointsLocked();
  absl::Status EnterTransientFailureLocked(absl::Status status,
                                           bool drop_endpoints);
  void OnEndpointStateChangeLocked(Endpoint* endpoint,
                                   grpc_connectivity_state old_state,
                                   bool old_failed);
  absl::Status ApplyMembershipLocked(const char* reason);
  void ScheduleMembershipTimerLocked();
  void OnMembershipTimerLocked();
  void ScheduleReresolutionTimerLocked();
  void OnReresolutionTimerLocked();
  bool IsDrainingLocked(const std::string& address) const;
  void RecomputeApertureLocked(const char* reason);
  void SyncSubchannelsLocked();
  void UpdatePickerLocked();
  void PublishStateLocked();
  // Peer discovery or the C API changed the coordinate (peer_tracker.h).
  void OnCoordinateInputsChangedLocked(const char* reason);

  static int SnapshotCallback(void* ctx, ap_ring_state* out) {
    return static_cast<StatePublisher*>(ctx)->Snapshot(out);
  }

  std::string target_;
  std::unique_ptr<StatePublisher> publisher_;
  ap_registry_entry* registry_entry_ = nullptr;

  RefCountedPtr<ApertureLbConfig> config_;
  ChannelArgs args_;
  // Ring order: addresses_[i] is ring index i.
  std::vector<std::string> addresses_;
  std::vector<ServerAddress> server_addresses_;
  std::vector<double> weights_;
  std::vector<uint8_t> draining_;  // 1: in its removal grace, not pickable
  uint64_t fingerprint_ = 0;
  uint64_t ring_key_ = 0;  // detects rebuilds
  ap_ring* ring_ = nullptr;
  ap_aperture* base_ = nullptr;
  ap_aperture* widened_ = nullptr;  // null when no widening is needed
  uint32_t min_ready_ = 1;
  Coordinate coordinate_;
  std::string last_status_;
  AffinityState affinity_;  // request affinity (affinity_picker.h)
  grpc_core::RefCountedPtr<PeerTracker> peers_;  // peer discovery

  std::map<std::string, RefCountedPtr<Endpoint>> endpoints_;
  // Debounced membership: the resolver's lists go through it; the timer
  // fires at its next deadline (grace expiry, end of a coalescing window).
  Membership membership_;
  grpc_core::OrphanablePtr<SerializedTimer> membership_timer_;
  // Periodic re-resolution (reresolutionIntervalMs), and the interval the
  // running timer was started with.
  grpc_core::OrphanablePtr<SerializedTimer> reresolution_timer_;
  uint64_t reresolution_interval_ms_ = 0;
  bool active_ = false;      // connections requested
  bool ever_ready_ = false;  // a READY picker was published
  bool syncing_ = false;
  bool shutdown_ = false;
};

// One aperture member with its subchannel. Shared by the policy's map and
// the connectivity watcher; keeps the policy alive while it exists.
class AperturePolicy::Endpoint : public grpc_core::RefCounted<Endpoint> {
 public:
  Endpoint(AperturePolicy* policy, std::string address,
           RefCountedPtr<SubchannelInterface> subchannel)
      : policy_(policy),
        policy_ref_(policy->Ref(DEBUG_LOCATION, "Endpoint")),
        address_(std::move(address)),
        subchannel_(std::move(subchannel)),
        counters_(grpc_core::MakeRefCounted<EndpointCounters>()) {}

  void StartWatchLocked();
  void ShutdownLocked() {
    if (shut_down_) return;
    shut_down_ = true;
    if (watcher_ != nullptr) {
      subchannel_->CancelConnectivityStateWatch(watcher_);
      watcher_ = nullptr;
    }
  }
  void OnStateChangeLocked(grpc_connectivity_state state, absl::Status status) {
    if (shut_down_) return;
    grpc_connectivity_state old_state = state_;
    bool old_failed = failed_;
    state_ = state;
    if (state == GRPC_CHANNEL_READY) {
      failed_ = false;
    } else if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
      failed_ = true;
      last_failure_ = status;
    }
    policy_->OnEndpointStateChangeLocked(this, old_state, old_failed);
  }

  AperturePolicy* policy() const { return policy_; }
  const std::string& address() const { return address_; }
  SubchannelInterface* subchannel() const { return subchannel_.get(); }
  const RefCountedPtr<SubchannelInterface>& subchannel_ref() const {
    return subchannel_;
  }
  const RefCountedPtr<EndpointCounters>& counters() const { return counters_; }
  grpc_connectivity_state state() const { return state_; }
  bool failed() const { return failed_; }
  const absl::Status& last_failure() const { return last_failure_; }

 private:
  AperturePolicy* const policy_;
  RefCountedPtr<LoadBalancingPolicy> policy_ref_;
  const std::string address_;
  RefCountedPtr<SubchannelInterface> subchannel_;
  RefCountedPtr<EndpointCounters> counters_;
  SubchannelInterface::ConnectivityStateWatcherInterface* watcher_ = nullptr;
  grpc_connectivity_state state_ = GRPC_CHANNEL_IDLE;
  bool failed_ = false;  // TRANSIENT_FAILURE seen since the last READY
  absl::Status last_failure_;
  bool shut_down_ = false;
};

class AperturePolicy::Watcher
    : public SubchannelInterface::ConnectivityStateWatcherInterface {
 public:
  explicit Watcher(RefCountedPtr<Endpoint> endpoint)
      : endpoint_(std::move(endpoint)) {}
  void OnConnectivityStateChange(grpc_connectivity_state new_state,
                                 absl::Status status) override {
    endpoint_->OnStateChangeLocked(new_state, std::move(status));
  }
  grpc_pollset_set* interested_parties() override {
    return endpoint_->policy()->interested_parties();
  }

 private:
  RefCountedPtr<Endpoint> endpoint_;
};

void AperturePolicy::Endpoint::StartWatchLocked() {
  auto watcher = std::make_unique<Watcher>(Ref());
  watcher_ = watcher.get();
  subchannel_->WatchConnectivityState(std::move(watcher));
}

AperturePolicy::AperturePolicy(Args args) : LoadBalancingPolicy(std::move(args)) {
  auto uri = channel_args().GetString(APERTURE_ARG_SERVER_URI);
  target_ = uri.has_value()
                ? std::string(*uri)
                : std::string(channel_control_helper()->GetAuthority());
  publisher_ = std::make_unique<StatePublisher>(target_);
  publisher_->Publish(std::make_shared<PublishedState>());
  ap_error err;
  if (ap_registry_add(&AperturePolicy::SnapshotCallback, publisher_.get(),
                      &registry_entry_, &err) != AP_OK) {
    gpr_log(GPR_ERROR,
            "[aperture %p] not visible to the status service: %s", this,
            err.message);
    registry_entry_ = nullptr;
  }
  APERTURE_TRACE("[aperture %p] created for target %s", this, target_.c_str());
  peers_ = grpc_core::MakeRefCounted<PeerTracker>(
      work_serializer(), Ref(DEBUG_LOCATION, "PeerTracker"),
      [this](const char* reason) { OnCoordinateInputsChangedLocked(reason); });
}

void AperturePolicy::OnCoordinateInputsChangedLocked(const char* reason) {
  if (shutdown_ || config_ == nullptr) return;
  // Before the first ring: only when the first one was held for the peers.
  if (ring_ == nullptr && membership_.Members().empty()) return;
  ApplyMembershipLocked(reason).IgnoreError();
}

AperturePolicy::~AperturePolicy() {
  APERTURE_TRACE("[aperture %p] destroyed", this);
  ClearRingLocked();
}

void AperturePolicy::ShutdownLocked() {
  APERTURE_TRACE("[aperture %p] shutting down", this);
  shutdown_ = true;
  peers_->ShutdownLocked();
  membership_timer_.reset();
  reresolution_timer_.reset();
  ap_registry_remove(registry_entry_);
  registry_entry_ = nullptr;
  DropAllEndpointsLocked();
}

void AperturePolicy::ClearRingLocked() {
  ap_aperture_destroy(widened_);
  widened_ = nullptr;
  ap_aperture_destroy(base_);
  base_ = nullptr;
  ap_ring_destroy(ring_);
  ring_ = nullptr;
  addresses_.clear();
  server_addresses_.clear();
  weights_.clear();
  draining_.clear();
}

void AperturePolicy::DropAllEndpointsLocked() {
  for (auto& kv : endpoints_) {
    kv.second->ShutdownLocked();
    publisher_->counters().subchannels_destroyed.fetch_add(1);
  }
  endpoints_.clear();
}

absl::Status AperturePolicy::EnterTransientFailureLocked(absl::Status status,
                                                         bool drop_endpoints) {
  APERTURE_TRACE("[aperture %p] TRANSIENT_FAILURE: %s", this,
                 status.ToString().c_str());
  if (drop_endpoints) {
    DropAllEndpointsLocked();
    ClearRingLocked();
    membership_.Reset();
    membership_timer_.reset();
  }
  last_status_ = std::string(status.message());
  ever_ready_ = false;
  PublishStateLocked();
  channel_control_helper()->UpdateState(
      GRPC_CHANNEL_TRANSIENT_FAILURE, status,
      std::make_unique<TransientFailurePicker>(status));
  channel_control_helper()->RequestReresolution();
  return status;
}

absl::Status AperturePolicy::UpdateLocked(UpdateArgs args) {
  if (shutdown_) return absl::OkStatus();
  publisher_->counters().resolver_updates.fetch_add(1);
  // The registry only hands this policy configs its factory parsed.
  config_.reset(static_cast<ApertureLbConfig*>(args.config.release()));
  args_ = std::move(args.args);
  const ApertureSettings& settings = config_->settings();
  if (settings.eager_connect) active_ = true;
  affinity_.Configure(settings.affinity);
  peers_->ConfigureLocked(settings);
  ScheduleReresolutionTimerLocked();

  if (!args.addresses.ok()) {
    std::string msg = absl::StrCat("aperture: resolver error: ",
                                   args.addresses.status().ToString());
    if (ring_ != nullptr) {
      // gRPC's convention: keep serving the last good address list.
      last_status_ = absl::StrCat(msg, " (keeping the previous address list)");
      APERTURE_TRACE("[aperture %p] %s", this, last_status_.c_str());
      PublishStateLocked();
      return args.addresses.status();
    }
    return EnterTransientFailureLocked(absl::UnavailableError(msg), true);
  }

  // Addresses as "host:port" strings, without duplicates.
  std::vector<std::string> names;
  std::vector<ServerAddress> found;
  std::set<std::string> seen;
  for (const ServerAddress& address : *args.addresses) {
    auto text = grpc_sockaddr_to_string(&address.address(), false);
    if (!text.ok()) {
      APERTURE_TRACE("[aperture %p] skipping an unprintable address: %s", this,
                     text.status().ToString().c_str());
      continue;
    }
    if (!seen.insert(*text).second) continue;
    names.push_back(std::move(*text));
    found.push_back(address);
  }
  if (names.empty()) {
    std::string msg = "aperture: empty address list from the resolver";
    if (!args.resolution_note.empty()) {
      absl::StrAppend(&msg, " (", args.resolution_note, ")");
    }
    return EnterTransientFailureLocked(absl::UnavailableError(msg), true);
  }

  // Through the debounced membership: a removal may wait for its grace, an
  // update may be held for the coalescing window.
  absl::Status configured = membership_.Configure(
      settings.removal_grace_ms, settings.update_coalesce_ms);
  if (!configured.ok()) {
    return EnterTransientFailureLocked(
        absl::UnavailableError(configured.message()), true);
  }
  std::vector<double> offered_weights(names.size(), 1.0);
  for (size_t i = 0; i < names.size(); ++i) {
    auto w = settings.weights.find(names[i]);
    if (w != settings.weights.end()) offered_weights[i] = w->second;
  }
  auto changes =
      membership_.Offer(names, found, offered_weights, MonotonicNowMs());
  if (!changes.ok()) {
    return EnterTransientFailureLocked(
        absl::UnavailableError(changes.status().message()), true);
  }
  if (*changes & AP_MEMBERSHIP_HELD) {
    APERTURE_TRACE("[aperture %p] address update held until %" PRIu64
                   " ms (updateCoalesceMs)",
                   this, membership_.NextDeadline());
  }
  if (ring_ == nullptr && peers_->HoldFirstRingLocked()) {
    // The peer target has not answered yet: queue calls briefly rather
    // than connect to a fallback subset (peer_tracker.h).
    APERTURE_TRACE("[aperture %p] first ring held for the peer target", this);
    channel_control_helper()->UpdateState(
        GRPC_CHANNEL_CONNECTING, absl::OkStatus(),
        std::make_unique<QueuePicker>(Ref(DEBUG_LOCATION, "QueuePicker")));
    ScheduleMembershipTimerLocked();
    return absl::OkStatus();
  }
  absl::Status applied = ApplyMembershipLocked("resolver update");
  ScheduleMembershipTimerLocked();
  return applied;
}

void AperturePolicy::ScheduleMembershipTimerLocked() {
  const uint64_t deadline = membership_.NextDeadline();
  if (shutdown_ || deadline == AP_MEMBERSHIP_NO_DEADLINE) {
    membership_timer_.reset();
    return;
  }
  if (membership_timer_ != nullptr &&
      membership_timer_->deadline_ms() == deadline) {
    return;
  }
  membership_timer_ = grpc_core::MakeOrphanable<SerializedTimer>(
      work_serializer(), deadline,
      [self = Ref(DEBUG_LOCATION, "MembershipTimer")]() {
        static_cast<AperturePolicy*>(self.get())->OnMembershipTimerLocked();
      });
}

void AperturePolicy::OnMembershipTimerLocked() {
  membership_timer_.reset();
  if (shutdown_) return;
  auto changes = membership_.Tick(MonotonicNowMs());
  if (!changes.ok()) {
    gpr_log(GPR_ERROR, "[aperture %p] %s", this,
            std::string(changes.status().message()).c_str());
  } else if (*changes != 0 && config_ != nullptr && ring_ != nullptr) {
    ApplyMembershipLocked("membership deadline").IgnoreError();
  }
  ScheduleMembershipTimerLocked();
}

// Keeps one timer running while reresolutionIntervalMs is set; a changed
// interval starts over with the new one.
void AperturePolicy::ScheduleReresolutionTimerLocked() {
  const uint64_t interval = config_->settings().reresolution_interval_ms;
  if (shutdown_ || interval == 0) {
    reresolution_timer_.reset();
    reresolution_interval_ms_ = 0;
    return;
  }
  if (reresolution_timer_ != nullptr && reresolution_interval_ms_ == interval) {
    return;
  }
  reresolution_interval_ms_ = interval;
  reresolution_timer_ = grpc_core::MakeOrphanable<SerializedTimer>(
      work_serializer(), MonotonicNowMs() + interval,
      [self = Ref(DEBUG_LOCATION, "ReresolutionTimer")]() {
        static_cast<AperturePolicy*>(self.get())->OnReresolutionTimerLocked();
      });
}

void AperturePolicy::OnReresolutionTimerLocked() {
  reresolution_timer_.reset();
  if (shutdown_) return;
  // gRPC's resolvers rate-limit these requests themselves (c-ares:
  // grpc.dns_min_time_between_resolutions_ms).
  channel_control_helper()->RequestReresolution();
  ScheduleReresolutionTimerLocked();
}

bool AperturePolicy::IsDrainingLocked(const std::string& address) const {
  for (size_t i = 0; i < addresses_.size() && i < draining_.size(); ++i) {
    if (draining_[i] && addresses_[i] == address) return true;
  }
  return false;
}

// Builds the ring and the aperture from the effective membership (draining
// members keep their slot) and the current config.
absl::Status AperturePolicy::ApplyMembershipLocked(const char* reason) {
  const ApertureSettings& settings = config_->settings();
  std::vector<EffectiveMember> effective = membership_.Members();
  if (effective.empty()) {
    return EnterTransientFailureLocked(
        absl::UnavailableError("aperture: no endpoint left in the membership"),
        true);
  }
  std::vector<std::string> names;
  std::vector<ServerAddress> found;
  names.reserve(effective.size());
  found.reserve(effective.size());
  for (const EffectiveMember& member : effective) {
    names.push_back(member.address);
    found.push_back(member.server_address);
  }

  // The ring order depends on the addresses only, not on the resolver's order.
  const size_t n = names.size();
  std::vector<const char*> pointers(n);
  for (size_t i = 0; i < n; ++i) pointers[i] = names[i].c_str();
  std::vector<size_t> order(n);
  ap_error err;
  if (ap_order_endpoints(pointers.data(), n, order.data(), &err) != AP_OK) {
    return EnterTransientFailureLocked(
        absl::UnavailableError(
            absl::StrCat("aperture: cannot order endpoints: ", err.message)),
        true);
  }
  std::vector<std::string> ordered(n);
  std::vector<ServerAddress> ordered_addresses;
  ordered_addresses.reserve(n);
  std::vector<double> weights(n, 1.0);
  std::vector<uint8_t> draining(n, 0);
  size_t draining_count = 0;
  for (size_t k = 0; k < n; ++k) {
    ordered[k] = names[order[k]];
    ordered_addresses.push_back(found[order[k]]);
    weights[k] = effective[order[k]].weight;
    draining[k] = effective[order[k]].draining ? 1 : 0;
    draining_count += draining[k];
  }
  uint64_t fingerprint = ap_order_fingerprint(pointers.data(), order.data(), n);

  ArgCoordinate arg_coordinate;
  if (auto index = args_.GetInt(APERTURE_ARG_PEER_INDEX)) {
    arg_coordinate.has_index = true;
    arg_coordinate.index = *index;
  }
  if (auto count = args_.GetInt(APERTURE_ARG_PEER_COUNT)) {
    arg_coordinate.has_count = true;
    arg_coordinate.count = *count;
  }
  Coordinate coordinate =
      ResolveCoordinate(settings, arg_coordinate, peers_->coordinate());
  peers_->NoteAppliedLocked(coordinate.known, coordinate.peer_index,
                            coordinate.peer_count);
  ap_subset_params params;
  ap_subset_params_init(&params);
  params.mode = settings.mode;
  params.min_aperture = settings.min_aperture;
  params.random_seed = settings.has_random_seed ? settings.random_seed
                                                : ProcessRandomSeed();
  if (coordinate.known) {
    params.peer_index = coordinate.peer_index;
    params.peer_count = coordinate.peer_count;
  }

  ap_ring* ring = nullptr;
  if (ap_ring_create(weights.data(), n, &ring, &err) != AP_OK) {
    return EnterTransientFailureLocked(
        absl::UnavailableError(
            absl::StrCat("aperture: cannot build the ring: ", err.message)),
        true);
  }
  ap_aperture* base = nullptr;
  if (ap_aperture_compute(ring, &params, &base, &err) != AP_OK) {
    ap_ring_destroy(ring);
    return EnterTransientFailureLocked(
        absl::UnavailableError(absl::StrCat(
            "aperture: cannot compute the aperture: ", err.message)),
        true);
  }

  uint64_t key = fingerprint;
  for (double w : weights) key = ap_mix64(key ^ ap_hash64(&w, sizeof(w), 1));
  uint64_t p[5] = {static_cast<uint64_t>(params.mode), params.peer_index,
                   params.peer_count, params.min_aperture, params.random_seed};
  key = ap_mix64(key ^ ap_hash64(p, sizeof(p), 2));
  if (key != ring_key_ || ring_ == nullptr) {
    publisher_->counters().rebuilds.fetch_add(1);
  }
  ring_key_ = key;

  // Swap in the new ring; endpoints stay keyed by address.
  ap_aperture_destroy(widened_);
  widened_ = nullptr;
  ap_aperture_destroy(base_);
  ap_ring_destroy(ring_);
  ring_ = ring;
  base_ = base;
  addresses_ = std::move(ordered);
  server_addresses_ = std::move(ordered_addresses);
  weights_ = std::move(weights);
  draining_ = std::move(draining);
  fingerprint_ = fingerprint;
  coordinate_ = coordinate;
  uint32_t logical = ap_aperture_logical(base_);
  min_ready_ = settings.has_min_ready
                   ? std::min<uint32_t>(settings.min_ready,
                                        static_cast<uint32_t>(n))
                   : logical;
  if (min_ready_ == 0) min_ready_ = 1;
  last_status_.clear();
  if (!coordinate_.known) {
    last_status_ = absl::StrCat(
        "no process coordinate (config, peer target, channel args, API, "
        "environment, host name): "
        "using random aperture. ",
        coordinate_.note);
  } else if (!coordinate_.note.empty()) {
    last_status_ = coordinate_.note;
  }
  if (draining_count > 0) {
    absl::StrAppend(&last_status_, last_status_.empty() ? "" : " ",
                    draining_count,
                    " endpoint(s) draining: gone from the resolver, kept "
                    "unpickable for removalGraceMs");
  }
  APERTURE_TRACE(
      "[aperture %p] update: %zu endpoints, mode %s, coordinate %s %u/%u, "
      "offset %.6f width %.6f, logical aperture %u, %zu members, minReady %u%s%s",
      this, n, ap_mode_name(ap_aperture_mode(base_)), coordinate_.source,
      coordinate_.peer_index, coordinate_.peer_count,
      ap_aperture_offset(base_), ap_aperture_width(base_), logical,
      ap_aperture_count(base_), min_ready_,
      last_status_.empty() ? "" : "; ", last_status_.c_str());
  RecomputeApertureLocked(reason);
  if (active_) {
    // eagerConnect may have just been turned on for existing members.
    for (auto& kv : endpoints_) {
      if (kv.second->state() == GRPC_CHANNEL_IDLE) {
        kv.second->subchannel()->RequestConnection();
      }
    }
  }
  return absl::OkStatus();
}

void AperturePolicy::RecomputeApertureLocked(const char* reason) {
  if (ring_ == nullptr || base_ == nullptr) return;
  const size_t n = addresses_.size();
  // A member counts as usable until it fails; endpoints without a
  // subchannel are assumed usable (they get one when they become members).
  std::vector<uint8_t> usable(n, 1);
  for (size_t i = 0; i < n; ++i) {
    auto it = endpoints_.find(addresses_[i]);
    if (it != endpoints_.end() && it->second->failed()) usable[i] = 0;
    if (draining_[i]) usable[i] = 0;  // the widening covers it
  }
  size_t previous_widened =
      widened_ != nullptr ? ap_aperture_widened_count(widened_) : 0;
  ap_aperture* widened = nullptr;
  ap_error err;
  if (ap_aperture_widen(ring_, base_, usable.data(), min_ready_, &widened,
                        &err) != AP_OK) {
    gpr_log(GPR_ERROR, "[aperture %p] widening failed: %s", this, err.message);
    widened = nullptr;
  }
  if (widened != nullptr && ap_aperture_widened_count(widened) == 0) {
    ap_aperture_destroy(widened);
    widened = nullptr;
  }
  size_t now_widened = widened != nullptr ? ap_aperture_widened_count(widened) : 0;
  ap_aperture_destroy(widened_);
  widened_ = widened;
  if (now_widened > previous_widened) {
    publisher_->counters().widenings.fetch_add(1);
    APERTURE_TRACE("[aperture %p] widened by %zu endpoint(s) (%s): fewer than "
                   "minReady=%u members usable",
                   this, now_widened, reason, min_ready_);
  } else if (now_widened < previous_widened) {
    APERTURE_TRACE("[aperture %p] narrowed to %zu widened endpoint(s) (%s)",
                   this, now_widened, reason);
  }
  SyncSubchannelsLocked();
  UpdatePickerLocked();
}

void AperturePolicy::SyncSubchannelsLocked() {
  const ap_aperture* members = current();
  std::set<std::string> wanted;
  for (size_t k = 0; k < ap_aperture_count(members); ++k) {
    wanted.insert(addresses_[ap_aperture_member(members, k)->index]);
  }
  syncing_ = true;
  for (auto it = endpoints_.begin(); it != endpoints_.end();) {
    if (wanted.count(it->first) == 0) {
      APERTURE_TRACE("[aperture %p] dropping subchannel for %s", this,
                     it->first.c_str());
      it->second->ShutdownLocked();
      publisher_->counters().subchannels_destroyed.fetch_add(1);
      it = endpoints_.erase(it);
    } else {
      ++it;
    }
  }
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < addresses_.size(); ++i) index_of[addresses_[i]] = i;
  for (const std::string& address : wanted) {
    if (endpoints_.count(address) != 0) continue;
    auto subchannel = channel_control_helper()->CreateSubchannel(
        server_addresses_[index_of[address]], args_);
    if (subchannel == nullptr) {
      gpr_log(GPR_ERROR, "[aperture %p] could not create a subchannel for %s",
              this, address.c_str());
      continue;
    }
    APERTURE_TRACE("[aperture %p] new subchannel %p for %s", this,
                   subchannel.get(), address.c_str());
    publisher_->counters().subchannels_created.fetch_add(1);
    auto endpoint =
        grpc_core::MakeRefCounted<Endpoint>(this, address, std::move(subchannel));
    endpoints_[address] = endpoint;
    endpoint->StartWatchLocked();
    if (active_) endpoint->subchannel()->RequestConnection();
  }
  syncing_ = false;
}

void AperturePolicy::OnEndpointStateChangeLocked(
    Endpoint* endpoint, grpc_connectivity_state old_state, bool old_failed) {
  grpc_connectivity_state state = endpoint->state();
  APERTURE_TRACE("[aperture %p] %s: %s -> %s", this, endpoint->address().c_str(),
                 grpc_core::ConnectivityStateName(old_state), grpc_core::ConnectivityStateName(state));
  // A failure, or a READY connection closing (GOAWAY, server restart or
  // drain), may mean the membership changed: ask the resolver again, as
  // gRPC's round_robin does.
  if (state == GRPC_CHANNEL_TRANSIENT_FAILURE ||
      (state == GRPC_CHANNEL_IDLE && old_state == GRPC_CHANNEL_READY)) {
    channel_control_helper()->RequestReresolution();
  }
  // A draining address that accepts connections again has most likely
  // restarted; the resolver does not poll, so ask it now, or the slot would
  // stay unpickable until its grace runs out and then be removed.
  if (state == GRPC_CHANNEL_READY && IsDrainingLocked(endpoint->address())) {
    APERTURE_TRACE("[aperture %p] draining %s is READY again: re-resolving",
                   this, endpoint->address().c_str());
    channel_control_helper()->RequestReresolution();
  }
  if (state == GRPC_CHANNEL_IDLE && active_) {
    endpoint->subchannel()->RequestConnection();
  }
  if (syncing_ || ring_ == nullptr) return;  // the caller republishes
  if (endpoint->failed() != old_failed) {
    RecomputeApertureLocked(endpoint->failed() ? "member failed"
                                               : "member recovered");
  } else {
    UpdatePickerLocked();
  }
}

void AperturePolicy::UpdatePickerLocked() {
  PublishStateLocked();
  const ap_aperture* members = current();
  if (members == nullptr) return;
  std::vector<AperturePicker::Slot> slots;
  std::vector<double> pick_weights;
  std::vector<AffinityMember> affinity_members;
  size_t not_failed = 0, idle = 0, total = 0;
  const Endpoint* last_failed = nullptr;
  for (size_t k = 0; k < ap_aperture_count(members); ++k) {
    const ap_member* m = ap_aperture_member(members, k);
    if (draining_[m->index]) continue;  // keeps its subchannel, never picked
    auto it = endpoints_.find(addresses_[m->index]);
    if (it == endpoints_.end()) continue;
    const Endpoint* e = it->second.get();
    ++total;
    affinity_members.push_back(
        {e->address(), ap_ring_weight(ring_, m->index),
         e->state() == GRPC_CHANNEL_READY ? static_cast<int>(slots.size())
                                          : -1});
    if (e->state() == GRPC_CHANNEL_READY) {
      slots.push_back({e->subchannel_ref(), e->counters(), m->pick_weight});
      pick_weights.push_back(m->pick_weight);
    }
    if (e->failed()) {
      last_failed = e;
    } else {
      ++not_failed;
      if (e->state() == GRPC_CHANNEL_IDLE) ++idle;
    }
  }
  const uint32_t choice_count =
      config_ != nullptr ? config_->settings().choice_count : kDefaultChoiceCount;
  // The first READY picker waits for minReady members (or all that have
  // not failed) so that the first calls do not all land on one endpoint.
  size_t wanted = std::min<size_t>(min_ready_, not_failed);
  if (!slots.empty() && (ever_ready_ || slots.size() >= wanted)) {
    ap_pick_table* table = nullptr;
    ap_error err;
    if (ap_pick_table_create(pick_weights.data(), pick_weights.size(), &table,
                             &err) != AP_OK) {
      EnterTransientFailureLocked(
          absl::InternalError(
              absl::StrCat("aperture: cannot build the pick table: ",
                           err.message)),
          false)
          .IgnoreError();
      return;
    }
    ever_ready_ = true;
    APERTURE_TRACE("[aperture %p] READY picker over %zu of %zu members", this,
                   slots.size(), total);
    channel_control_helper()->UpdateState(
        GRPC_CHANNEL_READY, absl::OkStatus(),
        std::make_unique<AperturePicker>(
            std::move(slots), table, choice_count,
            affinity_.MakeRouter(affinity_members)));
    return;
  }
  if (not_failed > 0) {
    grpc_connectivity_state state =
        (!active_ && idle == not_failed) ? GRPC_CHANNEL_IDLE
                                         : GRPC_CHANNEL_CONNECTING;
    APERTURE_TRACE("[aperture %p] %s: %zu READY, %zu not failed of %zu members",
                   this, grpc_core::ConnectivityStateName(state), slots.size(), not_failed,
                   total);
    channel_control_helper()->UpdateState(
        state, absl::OkStatus(),
        std::make_unique<QueuePicker>(Ref(DEBUG_LOCATION, "QueuePicker")));
    return;
  }
  std::string msg = absl::StrCat(
      "aperture: no reachable endpoint: all ", total, " members of the "
      "aperture (", addresses_.size(), " endpoints) are in TRANSIENT_FAILURE");
  if (last_failed != nullptr) {
    absl::StrAppend(&msg, "; last error from ", last_failed->address(), ": ",
                    last_failed->last_failure().ToString());
  }
  EnterTransientFailureLocked(absl::UnavailableError(msg), false)
      .IgnoreError();
}

void AperturePolicy::PublishStateLocked() {
  auto state = std::make_shared<PublishedState>();
  state->last_status = last_status_;
  state->coordinate_source = coordinate_.source;
  state->sessions = affinity_.sessions();
  state->peer_index = coordinate_.peer_index;
  state->peer_count = coordinate_.known ? coordinate_.peer_count : 0;
  peers_->FillState(state.get());
  const ap_aperture* members = current();
  if (config_ != nullptr) {
    state->mode = ap_mode_name(config_->settings().mode);
    state->min_aperture = config_->settings().min_aperture;
  }
  if (members != nullptr && ring_ != nullptr) {
    state->mode = ap_mode_name(ap_aperture_mode(members));
    state->offset = ap_aperture_offset(members);
    state->width = ap_aperture_width(members);
    state->logical_aperture = ap_aperture_logical(members);
    state->physical_aperture =
        static_cast<uint32_t>(ap_aperture_count(base_));
    state->widened = static_cast<uint32_t>(ap_aperture_widened_count(members));
    char hex[17];
    ap_fingerprint_format(fingerprint_, hex);
    state->fingerprint = hex;
    state->endpoints.resize(addresses_.size());
    for (size_t i = 0; i < addresses_.size(); ++i) {
      PublishedEndpoint& e = state->endpoints[i];
      e.address = addresses_[i];
      e.ring_index = static_cast<uint32_t>(i);
      e.endpoint_weight = ap_ring_weight(ring_, i);
      e.draining = i < draining_.size() && draining_[i] != 0;
      state->draining += e.draining ? 1 : 0;
      size_t slot = 0;
      if (ap_aperture_find(members, static_cast<uint32_t>(i), &slot)) {
        const ap_member* m = ap_aperture_member(members, slot);
        e.intersection = m->intersection;
        e.pick_weight = m->pick_weight;
        e.in_aperture = true;
        e.widened = m->widened != 0;
      }
      auto it = endpoints_.find(addresses_[i]);
      if (it != endpoints_.end()) {
        e.connectivity = ToApConnectivity(it->second->state());
        e.counters = it->second->counters();
      }
    }
  }
  publisher_->Publish(std::move(state));
}

void AperturePolicy::ExitIdleLocked() {
  if (active_) return;
  active_ = true;
  APERTURE_TRACE("[aperture %p] exiting IDLE: connecting %zu members", this,
                 endpoints_.size());
  for (auto& kv : endpoints_) {
    if (kv.second->state() == GRPC_CHANNEL_IDLE) {
      kv.second->subchannel()->RequestConnection();
    }
  }
}

void AperturePolicy::ResetBackoffLocked() {
  for (auto& kv : endpoints_) kv.second->subchannel()->ResetBackoff();
}

class ApertureFactory : public grpc_core::LoadBalancingPolicyFactory {
 public:
  grpc_core::OrphanablePtr<LoadBalancingPolicy> CreateLoadBalancingPolicy(
      LoadBalancingPolicy::Args args) const override {
    return grpc_core::MakeOrphanable<AperturePolicy>(std::move(args));
  }
  absl::string_view name() const override { return kPolicyName; }
  absl::StatusOr<RefCountedPtr<LoadBalancingPolicy::Config>>
  ParseLoadBalancingConfig(const Json& json) const override {
    auto settings = ParseApertureSettings(json);
    if (!settings.ok()) return settings.status();
    return grpc_core::MakeRefCounted<ApertureLbConfig>(std::move(*settings));
  }
};

}  // namespace

void RegisterAperturePolicy(grpc_core::CoreConfiguration::Builder* builder) {
  builder->lb_policy_registry()->RegisterLoadBalancingPolicyFactory(
      std::make_unique<ApertureFactory>());
}

}  // namespace aperture_lb
