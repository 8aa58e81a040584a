#include "policy/lb/coordinate/peer_tracker.h"

#include <utility>

#include "absl/strings/str_cat.h"

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ring/ap_order.h"
#include "policy/lb/coordinate/process_coordinate.h"
#include "policy/lb/grpc_seam/grpc_seam.h"
#include "policy/lb/coordinate/peer_settings.h"
#include "src/core/lib/gprpp/debug_location.h"

namespace aperture_lb {

PeerTracker::PeerTracker(
    std::shared_ptr<grpc_core::WorkSerializer> serializer,
    grpc_core::RefCountedPtr<grpc_core::LoadBalancingPolicy> owner,
    std::function<void(const char*)> rebuild)
    : serializer_(std::move(serializer)),
      owner_(std::move(owner)),
      rebuild_(std::move(rebuild)) {
  grpc_core::RefCountedPtr<PeerTracker> self = Ref();
  listener_id_ = AddCoordinateListener([self]() {
    self->serializer_->Run([self]() { self->OnInputsChangedLocked(); },
                           DEBUG_LOCATION);
  });
}

PeerTracker::~PeerTracker() = default;

void PeerTracker::ShutdownLocked() {
  if (shutdown_) return;
  shutdown_ = true;
  RemoveCoordinateListener(listener_id_);
  debounce_timer_.reset();
  first_answer_timer_.reset();
  subscription_.reset();
  rebuild_ = nullptr;
  owner_.reset();
}

void PeerTracker::ConfigureLocked(const PeerConfig& config,
                                  bool static_coordinate, uint64_t coalesce_ms) {
  if (shutdown_) return;
  coalesce_ms_ = coalesce_ms;
  EffectivePeerSettings peers;
  if (!static_coordinate) peers = ReadPeerSettings(config);
  env_note_ = peers.note;
  bool resubscribe = peers.target != target_ ||
                     peers.refresh_ms != refresh_ms_ ||
                     (subscription_ == nullptr) != peers.target.empty();
  if (peers.self != self_text_ || resubscribe) {
    have_last_good_ = false;  // a new list or a new self: start over
    good_peers_.reset();
  }
  self_text_ = peers.self;
  self_ = PeerSelf();
  if (!self_text_.empty()) {
    std::string error;
    ParsePeerSelf(self_text_, &self_, &error);  // validated already
  } else if (!peers.target.empty()) {
    interfaces_ = InterfaceAddresses();
  }
  from_config_ = peers.from_config;
  target_ = peers.target;
  refresh_ms_ = peers.refresh_ms;
  if (resubscribe) {
    subscription_.reset();
    if (!target_.empty()) {
      grpc_core::RefCountedPtr<PeerTracker> self = Ref();
      subscription_ = SubscribePeers(target_, refresh_ms_, [self]() {
        self->serializer_->Run([self]() { self->OnInputsChangedLocked(); },
                               DEBUG_LOCATION);
      });
    }
  }
  AdmitLocked();
}

void PeerTracker::AdmitLocked() {
  PeerOffer offer;
  Coordinate& c = offer.coordinate;
  c.note = env_note_;
  if (subscription_ == nullptr) {
    admitted_ = std::move(offer);
    return;
  }
  offer.in_use = true;
  offer.from_config = from_config_;
  std::shared_ptr<const PeerList> list = subscription_->Latest();
  std::string why;
  uint32_t index = 0;
  if (!list->answered) {
    why = "no answer yet";
  } else if (!list->status.ok()) {
    why = absl::StrCat("resolution failed: ", list->status.ToString());
  } else if (list->ordered.size() > AP_MAX_PEERS) {
    why = absl::StrCat(list->ordered.size(), " peers, more than ",
                       AP_MAX_PEERS);
  } else if (FindSelf(list->ordered, self_, interfaces_, &index, &why)) {
    have_last_good_ = true;
    good_index_ = index;
    good_count_ = static_cast<uint32_t>(list->ordered.size());
    good_fingerprint_ = list->fingerprint;
    // Shares the list's storage: no copy per admission.
    good_peers_ = std::shared_ptr<const std::vector<std::string>>(
        list, &list->ordered);
    why.clear();
  }
  const char* field = from_config_ ? "peerTarget" : "APERTURE_PEER_TARGET";
  if (have_last_good_) {
    c.known = true;
    c.peer_index = good_index_;
    c.peer_count = good_count_;
    c.source = AP_COORDINATE_PEER_TARGET;
    c.peers_fingerprint = good_fingerprint_;
    c.peers = good_peers_;
    if (!why.empty()) {
      char hex[17];
      ap_fingerprint_format(good_fingerprint_, hex);
      c.stale = true;
      absl::StrAppend(&c.note, field, " ", target_, ": ", why,
                      "; keeping the last good coordinate ", good_index_, "/",
                      good_count_, " (peers ", hex, "); ");
    }
  } else {
    absl::StrAppend(&c.note, field, " ", target_, ": ", why,
                    "; no coordinate from it yet; ");
  }
  admitted_ = std::move(offer);
}

void PeerTracker::OnInputsChangedLocked() {
  if (shutdown_) return;
  const uint64_t now = MonotonicNowMs();
  if (!ever_rebuilt_ || now >= last_rebuild_ms_ + coalesce_ms_) {
    debounce_timer_.reset();
    first_answer_timer_.reset();
    first_wait_over_ = true;
    ever_rebuilt_ = true;
    last_rebuild_ms_ = now;
    AdmitLocked();
    APERTURE_TRACE("[aperture peers] coordinate inputs changed: rebuilding");
    if (rebuild_) rebuild_("coordinate inputs changed");
    return;
  }
  if (debounce_timer_ != nullptr) return;  // already due
  grpc_core::RefCountedPtr<PeerTracker> self = Ref();
  debounce_timer_ = grpc_core::MakeOrphanable<SerializedTimer>(
      serializer_, last_rebuild_ms_ + coalesce_ms_,
      [self]() { self->OnDebounceTimerLocked(); });
}

void PeerTracker::OnDebounceTimerLocked() {
  debounce_timer_.reset();
  if (shutdown_) return;
  ever_rebuilt_ = true;
  last_rebuild_ms_ = MonotonicNowMs();
  AdmitLocked();
  if (rebuild_) rebuild_("coordinate inputs changed (debounced)");
}

bool PeerTracker::HoldFirstRingLocked() {
  if (shutdown_ || subscription_ == nullptr || first_wait_over_) return false;
  if (subscription_->Latest()->answered) return false;
  if (first_answer_timer_ == nullptr) {
    grpc_core::RefCountedPtr<PeerTracker> self = Ref();
    first_answer_timer_ = grpc_core::MakeOrphanable<SerializedTimer>(
        serializer_, MonotonicNowMs() + kFirstAnswerWaitMs, [self]() {
          self->first_answer_timer_.reset();
          if (self->shutdown_) return;
          self->first_wait_over_ = true;
          self->AdmitLocked();
          if (self->rebuild_) self->rebuild_("no first answer from the peer target");
        });
  }
  return true;
}

Coordinate PeerTracker::ResolveLocked(const StaticCoordinate& config,
                                      const grpc_core::ChannelArgs& args) {
  Coordinate c = ResolveCoordinate(config, ArgCoordinateOf(args), admitted_);
  const bool known = c.known;
  const uint32_t peer_index = c.peer_index, peer_count = c.peer_count;
  if (applied_once_ &&
      (known != applied_known_ || peer_index != applied_index_ ||
       peer_count != applied_count_)) {
    ++coordinate_changes_;
  }
  applied_once_ = true;
  applied_known_ = known;
  applied_index_ = peer_index;
  applied_count_ = peer_count;
  return c;
}

std::string PeerTracker::PeerFingerprint() const {
  if (!admitted_.coordinate.known) return "";
  char hex[17];
  ap_fingerprint_format(admitted_.coordinate.peers_fingerprint, hex);
  return hex;
}

}  // namespace aperture_lb
