// The "aperture" LB policy config: the settings, and the parsing and
// validation of the JSON object under {"aperture": {...}} in a service
// config's loadBalancingConfig. Every field is an entry of the field table
// (config_fields.h), which the parser follows.
#ifndef APERTURE_LB_CONFIG_CONFIG_H
#define APERTURE_LB_CONFIG_CONFIG_H

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/pick/ap_health.h"
#include "policy/core/pick/ap_load.h"
#include "policy/core/membership/ap_membership.h"
#include "policy/lb/affinity/affinity_settings.h"
#include "policy/lb/coordinate/coordinate.h"
#include "policy/lb/coordinate/peer_settings.h"
#include "src/core/lib/json/json.h"
#include "src/core/lib/load_balancing/lb_policy.h"

namespace aperture_lb {

constexpr absl::string_view kPolicyName = "aperture";
constexpr uint32_t kDefaultChoiceCount = 2;
constexpr uint32_t kMaxChoiceCount = 10;
// Below this a periodic re-resolution would flood the resolver.
constexpr uint64_t kMinReresolutionIntervalMs = 100;
// Below this every short call would ping (gRPC's client pings at most once
// a second on a connection anyway).
constexpr uint64_t kMinKeepaliveMs = 100;
constexpr uint64_t kMaxKeepaliveMs = 86400000;
constexpr uint32_t kDefaultKeepaliveMs = 200;
constexpr uint32_t kDefaultKeepaliveTimeoutMs = 1000;
constexpr uint32_t kDefaultReconnectBackoffMaxMs = 1000;
constexpr uint64_t kMinReconnectBackoffMaxMs = 100;  // gRPC's own floor
// The "weights" map: weights are for the exceptions (a canary, a bigger
// machine), so a map this large is a mistake; and an address longer than
// the session table stores (AP_SESSION_MAX_ADDRESS_LEN) is not one a
// resolver gives.
constexpr size_t kMaxWeights = 100000;
constexpr size_t kMaxWeightAddressBytes = 512;

// Every field is optional; has_* says whether the config gave it.
struct ApertureSettings {
  // smooth: even load like continuous, and no width jumps, so a change in
  // the number of endpoints never reconnects every client at once (README,
  // "smooth vs continuous", also where it churns a little more).
  ap_mode mode = AP_MODE_SMOOTH;
  uint32_t min_aperture = AP_DEFAULT_MIN_APERTURE;
  bool has_coordinate = false;  // peerIndex and peerCount come together
  uint32_t peer_index = 0;
  uint32_t peer_count = 0;
  uint32_t choice_count = kDefaultChoiceCount;
  // What P2C compares ("pickMetric"): calls in flight (the default), the
  // peak EWMA of latency, or server-reported utilization (ORCA); each falls
  // back to calls in flight without data (ap_load.h).
  ap_pick_metric pick_metric = AP_PICK_OUTSTANDING;
  // With pickMetric orca: even the load when clients send at unequal rates
  // ("clientSkewBalance", policy/lb/skew/skew_balance.h): a client heavier
  // than the others widens its window, and members are weighted by the
  // utilization they report. No effect under the other metrics.
  bool client_skew_balance = true;
  std::map<std::string, double> weights;  // "host:port" -> weight > 0
  // Connect the aperture as soon as a new policy has its first addresses,
  // as round_robin and pick_first do, so that a wait for READY
  // (channel_ready_future, WaitForConnected, one connect request and
  // watches) returns. false: a new policy stays IDLE until the channel's
  // first call or a connect request made after the policy exists, and such
  // waits do not return; for processes that create many channels, use few
  // and never wait (docs/design.md, "When the policy connects").
  bool eager_connect = true;
  bool has_min_ready = false;  // default: the logical aperture
  uint32_t min_ready = 0;
  bool has_random_seed = false;  // default: one random seed per process
  uint64_t random_seed = 0;
  AffinitySettings affinity = DefaultAffinitySettings();  // affinity_settings.h
  // Debounced membership (ring/membership.h): how long an address that left
  // the resolver's list keeps its ring slot (draining, not pickable), and
  // the window in which updates after a ring rebuild are coalesced.
  uint64_t removal_grace_ms = 0;
  uint64_t update_coalesce_ms = 0;
  // How often to ask the resolver again (0: only on failures, gRPC's
  // default). gRPC's DNS resolver never polls, and aperture's clients must
  // agree on the membership, so DNS-fed fleets set this.
  uint64_t reresolution_interval_ms = 0;
  // Peer discovery: peerTarget, peerSelf, peerRefreshMs (peer_settings.h).
  PeerConfig peers;
  // Gray failures (ap_health.h): ejectAfterFailures, ejectionMs,
  // maxEjectionMs, stuckCallMs, stuckCallMinMs, stuckLatencyFactor,
  // maxEjectionPercent.
  ap_health_config health = DefaultHealthConfig();
  // HTTP/2 keepalive on the subchannels the policy creates
  // (GRPC_ARG_KEEPALIVE_TIME_MS / _TIMEOUT_MS, unless the channel's args set
  // them; the timeout is also the sockets' TCP_USER_TIMEOUT): a ping after
  // keepaliveMs without a byte from the server while calls are in flight,
  // the connection closed when no answer comes within keepaliveTimeoutMs.
  // A frozen or unreachable member so loses its READY connection instead of
  // taking probes, and is back as soon as a new connection's handshake
  // succeeds. Pings go only on connections with calls in flight that heard
  // nothing for keepaliveMs, so a stock server (which GOAWAYs a client
  // after 3 pings without sending anything in between) only sees them from
  // a member that is silent for several keepaliveMs (docs/hardening.md).
  // 0: the channel's settings (gRPC: no keepalive).
  uint32_t keepalive_ms = kDefaultKeepaliveMs;
  uint32_t keepalive_timeout_ms = kDefaultKeepaliveTimeoutMs;
  // The longest wait between reconnection attempts of the policy's
  // subchannels (GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, and the initial backoff
  // no longer than it, unless the channel's args set them; gRPC's default
  // grows to 120 s): a member whose connection closed in a gray failure is
  // back within about this much of healing. A dead address is retried this
  // often by each client whose aperture holds it. 0: the channel's settings.
  uint32_t reconnect_backoff_max_ms = kDefaultReconnectBackoffMaxMs;
  // Names the config had that are not fields, ignored: one warning each
  // (unknown_fields.h), logged by the policy once per config and shown in
  // the status (RingState.config_warnings). Not a setting: nothing reads
  // it but the log and the status.
  std::vector<std::string> config_warnings;

  static ap_health_config DefaultHealthConfig() {
    ap_health_config c;
    ap_health_config_init(&c);
    return c;
  }
};

// The config's own coordinate (peerIndex/peerCount), for ResolveCoordinate.
inline StaticCoordinate ConfigCoordinate(const ApertureSettings& s) {
  return StaticCoordinate{s.has_coordinate, s.peer_index, s.peer_count};
}

// Validates `json` (the value of the "aperture" key): every field through
// its table entry (field_reader.h), then the rules between fields
// (config_rules.h). Names the config does not have are ignored, each with
// a warning in config_warnings (unknown_fields.h). On error the status
// message names every bad field, e.g.
//   errors validating aperture LB policy config: [field:minAperture error:...]
absl::StatusOr<ApertureSettings> ParseApertureSettings(
    const grpc_core::Json& json);

// The channel args for a subchannel the policy creates: `args` with the
// settings' keepalive (keepaliveMs, keepaliveTimeoutMs) added unless
// keepaliveMs is 0 or `args` already sets GRPC_ARG_KEEPALIVE_TIME_MS (the
// application's own choice wins; its timeout too when it sets one), and
// the reconnect backoff cap (reconnectBackoffMaxMs) unless it is 0 or
// `args` sets GRPC_ARG_MAX_RECONNECT_BACKOFF_MS.
grpc_core::ChannelArgs SubchannelArgs(const ApertureSettings& settings,
                                      const grpc_core::ChannelArgs& args);

class ApertureLbConfig : public grpc_core::LoadBalancingPolicy::Config {
 public:
  explicit ApertureLbConfig(ApertureSettings settings)
      : settings_(std::move(settings)) {}
  absl::string_view name() const override { return kPolicyName; }
  const ApertureSettings& settings() const { return settings_; }

 private:
  ApertureSettings settings_;
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_CONFIG_CONFIG_H
