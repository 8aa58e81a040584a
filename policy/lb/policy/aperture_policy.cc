#include "policy/lb/policy/aperture_policy.h"

#include <inttypes.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <grpc/impl/codegen/connectivity_state.h>

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/lb/affinity/affinity_router.h"
#include "policy/lb/config/config.h"
#include "policy/lb/coordinate/coordinate.h"
#include "policy/lb/coordinate/peer_tracker.h"
#include "policy/lb/core_ptr.h"
#include "policy/lb/endpoints/aperture_census.h"
#include "policy/lb/endpoints/endpoint.h"
#include "policy/lb/grpc_seam/grpc_seam.h"
#include "policy/lb/picker/picker.h"
#include "policy/lb/ring/endpoint_weights.h"
#include "policy/lb/ring/membership.h"
#include "policy/lb/ring/ring_snapshot.h"
#include "policy/lb/skew/skew_balance.h"
#include "policy/lb/state/published_state.h"
#include "policy/lb/state/state_publisher.h"
#include "policy/registry/ap_registry.h"
#include "src/core/lib/gprpp/debug_location.h"
#include "src/core/lib/gprpp/orphanable.h"
#include "src/core/lib/gprpp/ref_counted.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"
#include "src/core/lib/load_balancing/lb_policy.h"
#include "src/core/lib/load_balancing/lb_policy_factory.h"
#include "src/core/lib/load_balancing/lb_policy_registry.h"
#include "src/core/lib/load_balancing/subchannel_interface.h"
#include "src/core/lib/resolver/server_address.h"

namespace aperture_lb {
namespace {

using grpc_core::Json;
using grpc_core::LoadBalancingPolicy;
using grpc_core::RefCountedPtr;
using grpc_core::ServerAddress;

class AperturePolicy : public LoadBalancingPolicy, public EndpointObserver {
 public:
  explicit AperturePolicy(Args args);
  ~AperturePolicy() override;

  absl::string_view name() const override { return kPolicyName; }
  absl::Status UpdateLocked(UpdateArgs args) override;
  void ExitIdleLocked() override;
  void ResetBackoffLocked() override;

 private:
  void ShutdownLocked() override;

  // The aperture in effect: the widened one, else the ring's own.
  const ap_aperture* current() const {
    if (widened_ != nullptr) return widened_.get();
    return ring_ != nullptr ? ring_->aperture() : nullptr;
  }
  void DropAllEndpointsLocked();
  absl::Status EnterTransientFailureLocked(absl::Status status,
                                           bool drop_endpoints);
  void OnEndpointStateChangeLocked(Endpoint* endpoint,
                                   grpc_connectivity_state old_state,
                                   bool old_failed) override;
  absl::Status ApplyMembershipLocked(const char* reason);
  void ScheduleMembershipTimerLocked();
  void OnMembershipTimerLocked();
  void RecomputeApertureLocked(const char* reason);
  void SyncSubchannelsLocked();
  void UpdatePickerLocked();
  void PublishStateLocked();
  // The health sweep (ap_health_sweep): each member's failure share, and
  // from them the peers' that tells a stop from the service's tail.
  void SweepHealthLocked();
  // Peer discovery or the C API changed the coordinate (peer_tracker.h).
  void OnCoordinateInputsChangedLocked(const char* reason);
  // The skew balance (skew/skew_balance.h): on or off with the config, and
  // one tick of it.
  void ConfigureSkewBalanceLocked(const ApertureSettings& previous);
  void OnSkewTickLocked();
  // The settings the ring is built with: the config's, with the logical
  // aperture the skew balance asked for.
  ApertureSettings RingSettingsLocked() const;

  static int SnapshotCallback(void* ctx, ap_ring_state* out) {
    return static_cast<StatePublisher*>(ctx)->Snapshot(out);
  }

  std::string target_;
  std::unique_ptr<StatePublisher> publisher_;
  ap_registry_entry* registry_entry_ = nullptr;

  RefCountedPtr<ApertureLbConfig> config_;
  grpc_core::ChannelArgs args_;
  // The applied membership; null before the first good update and after a
  // failure that dropped the endpoints.
  // Shared with the published state; built once per rebuild.
  std::shared_ptr<const RingSnapshot> ring_;
  UsableMask usable_;  // widening input, kept in step with ring_
  AperturePtr widened_;    // null when no widening is needed
  uint64_t ring_key_ = 0;  // ring_->key() of the last build: detects rebuilds
  Coordinate coordinate_;
  std::string last_status_;
  std::vector<std::string> logged_warnings_;  // of the config last applied
  AffinityState affinity_;  // request affinity (affinity/affinity_router.h)
  // What the members' health shares (ap_health_group.h): the bound on
  // members out (its size follows the aperture) and the peers' silences.
  HealthGroupPtr health_group_{ap_health_group_create()};
  grpc_core::RefCountedPtr<PeerTracker> peers_;  // peer discovery

  EndpointMap endpoints_;
  // Debounced membership: the resolver's lists go through it; the timer
  // fires at its next deadline (grace expiry, end of a coalescing window).
  Membership membership_;
  grpc_core::OrphanablePtr<SerializedTimer> membership_timer_;
  PeriodicTimer reresolution_timer_;  // reresolutionIntervalMs
  SkewBalance skew_;                  // pickMetric orca, clientSkewBalance
  PeriodicTimer skew_timer_;          // its ticks
  PeriodicTimer health_sweep_timer_;  // AP_HEALTH_SWEEP_MS while health is on
  // Connections requested: from the first update (eagerConnect, the
  // default), else from the first ExitIdleLocked(); never undone.
  bool active_ = false;
  bool ever_ready_ = false;  // a READY picker was published
  bool syncing_ = false;
  bool shutdown_ = false;
};

AperturePolicy::AperturePolicy(Args args)
    : LoadBalancingPolicy(std::move(args)),
      reresolution_timer_(work_serializer()),
      skew_timer_(work_serializer()),
      health_sweep_timer_(work_serializer()) {
  auto uri = ChannelTargetUri(channel_args());
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
}

void AperturePolicy::ShutdownLocked() {
  APERTURE_TRACE("[aperture %p] shutting down", this);
  shutdown_ = true;
  peers_->ShutdownLocked();
  membership_timer_.reset();
  reresolution_timer_.StopLocked();
  skew_timer_.StopLocked();
  health_sweep_timer_.StopLocked();
  ap_registry_remove(registry_entry_);
  registry_entry_ = nullptr;
  DropAllEndpointsLocked();
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
    widened_.reset();
    ring_.reset();
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
  const ApertureSettings previous =
      config_ != nullptr ? config_->settings() : ApertureSettings();
  config_.reset(static_cast<ApertureLbConfig*>(args.config.release()));
  args_ = std::move(args.args);
  const ApertureSettings& settings = config_->settings();
  // Ignored config fields: logged once per config (not at every
  // re-resolution), at ERROR so that they show without a trace flag.
  if (settings.config_warnings != logged_warnings_) {
    for (const std::string& warning : settings.config_warnings) {
      gpr_log(GPR_ERROR, "[aperture %p] config of %s: %s", this,
              target_.c_str(), warning.c_str());
    }
    logged_warnings_ = settings.config_warnings;
  }
  if (settings.eager_connect) active_ = true;
  affinity_.Configure(settings.affinity);
  peers_->ConfigureLocked(settings.peers, settings.has_coordinate,
                          settings.update_coalesce_ms);
  // gRPC's resolvers rate-limit re-resolution themselves (c-ares:
  // grpc.dns_min_time_between_resolutions_ms).
  reresolution_timer_.ConfigureLocked(
      settings.reresolution_interval_ms,
      [this, self = Ref(DEBUG_LOCATION, "ReresolutionTimer")]() {
        channel_control_helper()->RequestReresolution();
      });
  ConfigureSkewBalanceLocked(previous);
  health_sweep_timer_.ConfigureLocked(
      ap_health_config_active(&settings.health) ? AP_HEALTH_SWEEP_MS : 0,
      [this, self = Ref(DEBUG_LOCATION, "HealthSweepTimer")]() {
        SweepHealthLocked();
      });

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

  std::vector<std::string> names;
  std::vector<ServerAddress> found;
  UniqueAddresses(*args.addresses, &names, &found, this);
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
  // The config's weights, else the resolver's (EDS), else 1.
  std::vector<double> offered_weights =
      EndpointWeights(names, found, settings.weights);
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

void AperturePolicy::ConfigureSkewBalanceLocked(
    const ApertureSettings& previous) {
  const ApertureSettings& settings = config_->settings();
  const bool on = SkewBalance::Enabled(settings);
  // What its state was learnt for: off, or another base width, forgets it.
  if (!on || !SkewBalance::Enabled(previous) || previous.mode != settings.mode ||
      previous.min_aperture != settings.min_aperture) {
    skew_.Reset();
    // The members' factors and rates go with it (the next picker uses the
    // pick weights as they are).
    for (auto& kv : endpoints_) ap_skew_member_state_init(kv.second->skew());
  }
  skew_timer_.ConfigureLocked(
      on ? static_cast<uint64_t>(AP_SKEW_TICK_NS / 1000000) : 0,
      [this, self = Ref(DEBUG_LOCATION, "SkewTimer")]() { OnSkewTickLocked(); });
}

void AperturePolicy::OnSkewTickLocked() {
  if (shutdown_ || ring_ == nullptr || config_ == nullptr) return;
  const ApertureSettings& settings = config_->settings();
  if (!SkewBalance::Enabled(settings)) return;
  const uint32_t before = skew_.logical();
  const ap_skew_decision d =
      skew_.Tick(*ring_, current(), settings.min_aperture, endpoints_,
                 ap_load_coarse_now_ns());
  if (skew_.logical() != before) {
    APERTURE_TRACE(
        "[aperture %p] skew balance: logical aperture %u (%s: own %.1f "
        "calls/s, others %.1f, ratio %.2f)",
        this, d.logical, ap_skew_reason_name(d.reason), d.own_rate,
        d.others_rate, d.ratio);
    ApplyMembershipLocked("skew balance").IgnoreError();
    return;
  }
  if (d.weights_changed) {
    UpdatePickerLocked();
  } else {
    PublishStateLocked();
  }
}

ApertureSettings AperturePolicy::RingSettingsLocked() const {
  ApertureSettings s = config_->settings();
  if (SkewBalance::Enabled(s) && skew_.logical() > 0) {
    s.min_aperture = skew_.logical();
  }
  return s;
}

// Builds the ring and the aperture from the effective membership (draining
// members keep their slot) and the current config.
absl::Status AperturePolicy::ApplyMembershipLocked(const char* reason) {
  const ApertureSettings settings = RingSettingsLocked();
  Coordinate coordinate =
      peers_->ResolveLocked(ConfigCoordinate(settings), args_);
  std::vector<EffectiveMember> members = membership_.Members();
  // Nothing the snapshot reads changed (a re-resolution with the same
  // answer, a config change that leaves the ring alone): keep the ring,
  // build nothing, refresh only what depends on more than the ring.
  if (ring_ != nullptr &&
      RingInputKey(members, settings, coordinate, ProcessRandomSeed()) ==
          ring_->input_key()) {
    APERTURE_TRACE("[aperture %p] %s: ring inputs unchanged, no rebuild",
                   this, reason);
    last_status_ = RingStatusNote(*ring_);
    RecomputeApertureLocked(reason);
    if (active_) ConnectIdleEndpoints(endpoints_);
    return absl::OkStatus();
  }
  publisher_->counters().snapshot_builds.fetch_add(1);
  auto built = BuildRingSnapshot(std::move(members), settings, coordinate,
                                 ProcessRandomSeed());
  if (!built.ok()) return EnterTransientFailureLocked(built.status(), true);
  if ((*built)->key() != ring_key_ || ring_ == nullptr) {
    publisher_->counters().rebuilds.fetch_add(1);
  }
  ring_key_ = (*built)->key();
  // Swap in the new ring; endpoints stay keyed by address.
  widened_.reset();
  ring_ = std::move(*built);
  usable_.Reset(*ring_);
  coordinate_ = ring_->coordinate();
  const ap_aperture* base = ring_->aperture();
  last_status_ = RingStatusNote(*ring_);
  APERTURE_TRACE(
      "[aperture %p] update: %zu endpoints, mode %s, coordinate %s %u/%u, "
      "offset %.6f width %.6f, logical aperture %u, %zu members, minReady %u%s%s",
      this, ring_->size(), ap_mode_name(ap_aperture_mode(base)),
      ap_coordinate_source_name(coordinate_.source), coordinate_.peer_index, coordinate_.peer_count,
      ap_aperture_offset(base), ap_aperture_width(base),
      ap_aperture_logical(base), ap_aperture_count(base), ring_->min_ready(),
      last_status_.empty() ? "" : "; ", last_status_.c_str());
  RecomputeApertureLocked(reason);
  if (active_) {
    // eagerConnect may have just been turned on for existing members.
    ConnectIdleEndpoints(endpoints_);
  }
  return absl::OkStatus();
}

void AperturePolicy::RecomputeApertureLocked(const char* reason) {
  if (ring_ == nullptr) return;
  // A member counts as usable until it fails; endpoints without a
  // subchannel are assumed usable (they get one when they become members).
  const uint8_t* usable = usable_.Mark(*ring_, endpoints_);
  size_t previous_widened =
      widened_ != nullptr ? ap_aperture_widened_count(widened_.get()) : 0;
  ap_aperture* raw = nullptr;
  ap_error err;
  if (ap_aperture_widen(ring_->ring(), ring_->aperture(), usable,
                        ring_->min_ready(), &raw, &err) != AP_OK) {
    gpr_log(GPR_ERROR, "[aperture %p] widening failed: %s", this, err.message);
    raw = nullptr;
  }
  AperturePtr widened(raw);
  if (widened != nullptr && ap_aperture_widened_count(widened.get()) == 0) {
    widened.reset();
  }
  size_t now_widened =
      widened != nullptr ? ap_aperture_widened_count(widened.get()) : 0;
  widened_ = std::move(widened);
  // The bound on members out follows the aperture in effect.
  ap_health_group_set_members(health_group_.get(),
                              static_cast<uint32_t>(ap_aperture_count(current())));
  if (now_widened > previous_widened) {
    publisher_->counters().widenings.fetch_add(1);
    APERTURE_TRACE("[aperture %p] widened by %zu endpoint(s) (%s): fewer than "
                   "minReady=%u members usable",
                   this, now_widened, reason, ring_->min_ready());
  } else if (now_widened < previous_widened) {
    APERTURE_TRACE("[aperture %p] narrowed to %zu widened endpoint(s) (%s)",
                   this, now_widened, reason);
  }
  SyncSubchannelsLocked();
  UpdatePickerLocked();
}

void AperturePolicy::SyncSubchannelsLocked() {
  const ap_aperture* members = current();
  std::map<std::string, size_t> wanted;  // address -> ring index
  for (size_t k = 0; k < ap_aperture_count(members); ++k) {
    const uint32_t index = ap_aperture_member(members, k)->index;
    wanted.emplace(ring_->address(index), index);
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
  for (const auto& w : wanted) {
    const std::string& address = w.first;
    if (endpoints_.count(address) != 0) continue;
    auto subchannel = channel_control_helper()->CreateSubchannel(
        ring_->members()[w.second].server_address,
        SubchannelArgs(config_ != nullptr ? config_->settings()
                                          : ApertureSettings(),
                       args_));
    if (subchannel == nullptr) {
      gpr_log(GPR_ERROR, "[aperture %p] could not create a subchannel for %s",
              this, address.c_str());
      continue;
    }
    APERTURE_TRACE("[aperture %p] new subchannel %p for %s", this,
                   subchannel.get(), address.c_str());
    publisher_->counters().subchannels_created.fetch_add(1);
    auto endpoint = grpc_core::MakeRefCounted<Endpoint>(
        Ref(DEBUG_LOCATION, "Endpoint"), this, address, std::move(subchannel),
        health_group_.get());
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
                 StateText(old_state), StateText(state));
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
  if (state == GRPC_CHANNEL_READY && ring_ != nullptr &&
      ring_->IsDraining(endpoint->address())) {
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
  ApertureCensus census = TakeCensus(*ring_, members, endpoints_);
  std::vector<AperturePicker::Slot>& slots = census.ready;
  const size_t not_failed = census.not_failed, total = census.total;
  const uint32_t choice_count =
      config_ != nullptr ? config_->settings().choice_count : kDefaultChoiceCount;
  const ap_pick_metric metric = config_ != nullptr
                                    ? config_->settings().pick_metric
                                    : AP_PICK_OUTSTANDING;
  // The first READY picker waits for minReady members (or all that have
  // not failed) so that the first calls do not all land on one endpoint.
  size_t wanted = std::min<size_t>(ring_->min_ready(), not_failed);
  if (!slots.empty() && (ever_ready_ || slots.size() >= wanted)) {
    const size_t ready = slots.size();
    auto picker = AperturePicker::Create(
        std::move(slots), choice_count, affinity_.MakeRouter(census.affinity),
        config_ != nullptr ? config_->settings().health
                           : ApertureSettings::DefaultHealthConfig(),
        metric, config_ != nullptr && SkewBalance::Enabled(config_->settings()),
        health_group_.get());
    if (!picker.ok()) {
      EnterTransientFailureLocked(picker.status(), false).IgnoreError();
      return;
    }
    ever_ready_ = true;
    APERTURE_TRACE("[aperture %p] READY picker over %zu of %zu members", this,
                   ready, total);
    channel_control_helper()->UpdateState(GRPC_CHANNEL_READY, absl::OkStatus(),
                                          std::move(*picker));
    return;
  }
  if (not_failed > 0) {
    grpc_connectivity_state state =
        (!active_ && census.idle == not_failed) ? GRPC_CHANNEL_IDLE
                                         : GRPC_CHANNEL_CONNECTING;
    APERTURE_TRACE("[aperture %p] %s: %zu READY, %zu not failed of %zu members",
                   this, StateText(state), slots.size(), not_failed,
                   total);
    channel_control_helper()->UpdateState(
        state, absl::OkStatus(),
        std::make_unique<QueuePicker>(Ref(DEBUG_LOCATION, "QueuePicker")));
    return;
  }
  std::string msg = absl::StrCat(
      "aperture: no reachable endpoint: all ", total, " members of the "
      "aperture (", ring_->size(), " endpoints) are in TRANSIENT_FAILURE");
  if (census.last_failed != nullptr) {
    absl::StrAppend(&msg, "; last error from ", census.last_failed->address(),
                    ": ", census.last_failed->last_failure().ToString());
  }
  EnterTransientFailureLocked(absl::UnavailableError(msg), false)
      .IgnoreError();
}

void AperturePolicy::PublishStateLocked() {
  PolicyView view;
  view.settings = config_ != nullptr ? &config_->settings() : nullptr;
  view.ring = ring_;
  view.members = current();
  view.coordinate = &coordinate_;
  view.endpoints = &endpoints_;
  view.last_status = &last_status_;
  view.sessions = affinity_.sessions();
  if (config_ != nullptr && SkewBalance::Enabled(config_->settings())) {
    view.skew = &skew_.last();
  }
  view.health_group = health_group_.get();
  std::shared_ptr<PublishedState> state = DescribePolicy(view);
  state->peer_target = peers_->target();
  state->peer_fingerprint = peers_->PeerFingerprint();
  state->coordinate_changes = peers_->coordinate_changes();
  publisher_->Publish(std::move(state));
}

void AperturePolicy::SweepHealthLocked() {
  if (shutdown_) return;
  std::vector<ap_health*> members;
  std::vector<uint64_t> calls_ended;
  members.reserve(endpoints_.size());
  calls_ended.reserve(endpoints_.size());
  for (const auto& kv : endpoints_) {
    const EndpointCounters& c = *kv.second->counters();
    members.push_back(c.health);
    calls_ended.push_back(c.Picks() - static_cast<uint64_t>(c.Outstanding()));
  }
  ap_error err;
  if (ap_health_sweep(health_group_.get(), members.data(), calls_ended.data(),
                      members.size(), &err) != AP_OK) {
    APERTURE_TRACE("[aperture %p] health sweep: %s", this, err.message);
  }
}

void AperturePolicy::ExitIdleLocked() {
  if (active_) return;
  active_ = true;
  APERTURE_TRACE("[aperture %p] exiting IDLE: connecting %zu members", this,
                 endpoints_.size());
  ConnectIdleEndpoints(endpoints_);
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

void RegisterAperturePolicy(
    grpc_core::LoadBalancingPolicyRegistry::Builder* registry) {
  registry->RegisterLoadBalancingPolicyFactory(
      std::make_unique<ApertureFactory>());
}

}  // namespace aperture_lb
