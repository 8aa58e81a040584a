// The peer-discovery fields of the "aperture" config (peerTarget, peerSelf,
// peerRefreshMs) and their process-wide environment twins
// (APERTURE_PEER_TARGET, APERTURE_PEER_SELF, APERTURE_PEER_REFRESH_MS).
#ifndef APERTURE_LB_PEER_CONFIG_H
#define APERTURE_LB_PEER_CONFIG_H

#include <stdint.h>

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

#include "policy/lb/lb_config.h"
#include "src/core/lib/json/json.h"

namespace aperture_lb {

using PeerErrorFn =
    std::function<void(absl::string_view field, absl::string_view message)>;

// Reads peerTarget, peerSelf and peerRefreshMs into *out, reporting every
// bad field through add_error (e.g. ("peerTarget", "no resolver for ...")).
void ParsePeerSettings(const grpc_core::Json::Object& obj,
                       ApertureSettings* out, const PeerErrorFn& add_error);

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
EffectivePeerSettings ReadPeerSettings(const ApertureSettings& settings);

}  // namespace aperture_lb

#endif  // APERTURE_LB_PEER_CONFIG_H
