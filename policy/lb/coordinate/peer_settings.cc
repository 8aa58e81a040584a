#include "policy/lb/coordinate/peer_settings.h"

#include <stdlib.h>

#include "absl/strings/str_cat.h"

#include "policy/core/ap_number.h"
#include "policy/core/membership/ap_membership.h"
#include "policy/lb/coordinate/peer_self.h"
#include "policy/lb/grpc_seam/grpc_seam.h"

namespace aperture_lb {

using grpc_core::Json;

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

void ParsePeerConfig(const Json::Object& obj, PeerConfig* out,
                     const PeerErrorFn& add_error) {
  std::string error;
  auto target = obj.find("peerTarget");
  if (target != obj.end()) {
    if (target->second.type() != Json::Type::STRING) {
      add_error("peerTarget", "is not a string");
    } else if (!ValidPeerTarget(target->second.string_value(), &error)) {
      add_error("peerTarget", error);
    } else {
      out->target = target->second.string_value();
    }
  }
  auto self = obj.find("peerSelf");
  if (self != obj.end()) {
    PeerSelf parsed;
    if (self->second.type() != Json::Type::STRING) {
      add_error("peerSelf", "is not a string");
    } else if (!ParsePeerSelf(self->second.string_value(), &parsed, &error)) {
      add_error("peerSelf", error);
    } else {
      out->self = self->second.string_value();
    }
  }
  auto refresh = obj.find("peerRefreshMs");
  if (refresh != obj.end()) {
    const Json& v = refresh->second;
    if (v.type() != Json::Type::NUMBER) {
      add_error("peerRefreshMs",
                absl::StrCat("is not a number (must be an integer in [",
                             kMinPeerRefreshMs, ", ", AP_MEMBERSHIP_MAX_MS,
                             "])"));
    } else if (ParsePeerRefreshMs(v.string_value().c_str(),
                                  &out->refresh_ms, &error)) {
      out->has_refresh_ms = true;
    } else {
      add_error("peerRefreshMs", error);
    }
  }
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
