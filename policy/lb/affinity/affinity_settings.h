// Request-affinity fields of the "aperture" LB policy config: "affinity",
// "affinityHeader", "maxSessions", "sessionIdleMs", "hashVnodes". Parsed
// here so the main config parser only forwards the object.
#ifndef APERTURE_LB_AFFINITY_AFFINITY_SETTINGS_H
#define APERTURE_LB_AFFINITY_AFFINITY_SETTINGS_H

#include <stdint.h>

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

#include "policy/affinity/ap_affinity.h"
#include "src/core/lib/json/json.h"

namespace aperture_lb {

// Upper bound of sessionIdleMs: one year.
constexpr uint64_t kMaxSessionIdleMs = 365ull * 24 * 3600 * 1000;

// The affinity settings are the core's own, self-contained config struct:
// parsed straight into it and validated by the core.
using AffinitySettings = ap_affinity_config;

// Defaults of every field (mode none, no header).
inline AffinitySettings DefaultAffinitySettings() {
  AffinitySettings s;
  ap_affinity_config_init(&s);
  return s;
}

// Receives one error: the config field and what is wrong with it.
using AffinityErrorFn =
    std::function<void(absl::string_view field, absl::string_view message)>;

// Reads the affinity fields of the "aperture" object into *out (defaults for
// absent fields) and reports every bad field through add_error, e.g.
// ("affinityHeader", "required when affinity is \"sticky\"").
void ParseAffinitySettings(const grpc_core::Json::Object& obj,
                           AffinitySettings* out,
                           const AffinityErrorFn& add_error);

}  // namespace aperture_lb

#endif  // APERTURE_LB_AFFINITY_AFFINITY_SETTINGS_H
