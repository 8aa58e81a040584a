// Request-affinity settings of the "aperture" LB policy config (the core's
// ap_affinity_config): what is affinity's own in reading them. The field
// table (config/config_fields.h) lists the fields ("affinity",
// "affinityHeader", "maxSessions", "sessionIdleMs", "hashVnodes") and
// reads the numbers; the names and the rules over the whole are here.
#ifndef APERTURE_LB_AFFINITY_AFFINITY_SETTINGS_H
#define APERTURE_LB_AFFINITY_AFFINITY_SETTINGS_H

#include <stdint.h>

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

#include "policy/affinity/ap_affinity.h"

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

// Parses an "affinity" mode name ("none", "sticky", "hash") into
// out->mode; false with *error saying what is wrong (the message after the
// field's name).
bool ParseAffinityMode(const std::string& text, AffinitySettings* out,
                       std::string* error);

// Sets out->header to an "affinityHeader" value; false with *error when
// it is empty or too long. Its form is one of the rules
// ValidateAffinitySettings() checks.
bool ParseAffinityHeader(const std::string& text, AffinitySettings* out,
                         std::string* error);

// The core's rules over the whole affinity config
// (ap_affinity_config_validate: a header unless the mode is none, of a
// usable form; the numbers within their ranges): reports a broken one
// through add_error, under the field the core names, e.g.
// ("affinityHeader", "required when affinity is \"sticky\"").
void ValidateAffinitySettings(const AffinitySettings& settings,
                              const AffinityErrorFn& add_error);

}  // namespace aperture_lb

#endif  // APERTURE_LB_AFFINITY_AFFINITY_SETTINGS_H
