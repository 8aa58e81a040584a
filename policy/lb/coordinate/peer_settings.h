// The peer-discovery settings of the "aperture" config (peerTarget,
// peerSelf, peerRefreshMs: read through the field table,
// config/config_fields.h, with the checks below) and their process-wide
// environment twins (APERTURE_PEER_TARGET, APERTURE_PEER_SELF,
// APERTURE_PEER_REFRESH_MS).
#ifndef APERTURE_LB_COORDINATE_PEER_SETTINGS_H
#define APERTURE_LB_COORDINATE_PEER_SETTINGS_H

#include <stdint.h>

#include <string>

namespace aperture_lb {

// How often a peer target that does not push (DNS) is asked again, by
// default and at least.
constexpr uint64_t kDefaultPeerRefreshMs = 30000;
constexpr uint64_t kMinPeerRefreshMs = 100;

// The peer-discovery fields as the config gives them: a gRPC target
// resolving to every client of the fleet ("" = none), this process's entry
// in it ("" = match the interface addresses), and its re-resolution period
// (has_refresh_ms: whether the config gave one, else
// APERTURE_PEER_REFRESH_MS or the default applies).
struct PeerConfig {
  std::string target;
  std::string self;
  bool has_refresh_ms = false;
  uint64_t refresh_ms = kDefaultPeerRefreshMs;
};

// Checks a peer target: non-empty and accepted by gRPC's resolver registry.
// False with *error saying why.
bool ValidPeerTarget(const std::string& target, std::string* error);

// Parses a peerRefreshMs value in text (the environment variable); false
// with *error when not an integer in [kMinPeerRefreshMs, max].
bool ParsePeerRefreshMs(const char* text, uint64_t* out, std::string* error);

// Where the policy takes its peer settings from: the config's, or else the
// environment's. `target` empty when neither names one; `note` lists the
// environment values that were ignored and why.
struct EffectivePeerSettings {
  std::string target;
  bool from_config = false;
  std::string self;  // "" = interface addresses
  uint64_t refresh_ms = kDefaultPeerRefreshMs;
  std::string note;
};
EffectivePeerSettings ReadPeerSettings(const PeerConfig& config);

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_PEER_SETTINGS_H
