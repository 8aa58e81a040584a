#include "policy/lb/coordinate/peer_settings.h"

#include <stdlib.h>

#include "absl/strings/str_cat.h"

#include "policy/core/ap_number.h"
#include "policy/core/membership/ap_membership.h"
#include "policy/lb/coordinate/peer_self.h"
#include "policy/lb/grpc_seam/grpc_seam.h"

namespace aperture_lb {

bool ValidPeerTarget(const std::string& target, std::string* error) {
  if (target.empty()) {
    *error = "is empty (must be a gRPC target, e.g. dns:///clients.svc:80)";
    return false;
  }
  if (!IsResolvableTarget(target)) {
    *error = absl::StrCat("\"", target,
                          "\" is not a target any registered gRPC resolver "
                          "accepts");
    return false;
  }
  return true;
}

bool ParsePeerRefreshMs(const char* text, uint64_t* out, std::string* error) {
  if (ap_parse_uint(text, kMinPeerRefreshMs, AP_MEMBERSHIP_MAX_MS, out,
                    nullptr) != AP_OK) {
    *error = absl::StrCat("must be an integer in [", kMinPeerRefreshMs, ", ",
                          AP_MEMBERSHIP_MAX_MS, "], got ",
                          text != nullptr ? text : "nothing");
    return false;
  }
  return true;
}

EffectivePeerSettings ReadPeerSettings(const PeerConfig& config) {
  EffectivePeerSettings e;
  std::string error;
  if (!config.target.empty()) {
    e.target = config.target;
    e.from_config = true;
  } else if (const char* env = getenv("APERTURE_PEER_TARGET")) {
    if (env[0] == '\0') {
      // Unset in effect.
    } else if (ValidPeerTarget(env, &error)) {
      e.target = env;
    } else {
      absl::StrAppend(&e.note, "APERTURE_PEER_TARGET ignored: ", error, "; ");
    }
  }
  if (e.target.empty()) return e;
  if (!config.self.empty()) {
    e.self = config.self;
  } else if (const char* env = getenv("APERTURE_PEER_SELF")) {
    PeerSelf parsed;
    if (env[0] == '\0') {
    } else if (ParsePeerSelf(env, &parsed, &error)) {
      e.self = env;
    } else {
      absl::StrAppend(&e.note, "APERTURE_PEER_SELF ignored: ", error,
                      " (matching interface addresses instead); ");
    }
  }
  if (config.has_refresh_ms) {
    e.refresh_ms = config.refresh_ms;
  } else if (const char* env = getenv("APERTURE_PEER_REFRESH_MS")) {
    uint64_t v = 0;
    if (ParsePeerRefreshMs(env, &v, &error)) {
      e.refresh_ms = v;
    } else {
      absl::StrAppend(&e.note, "APERTURE_PEER_REFRESH_MS ignored: ", error,
                      "; ");
    }
  }
  return e;
}

}  // namespace aperture_lb
