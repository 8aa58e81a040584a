#include "policy/lb/affinity/affinity_settings.h"

#include <string>

namespace aperture_lb {
namespace {

// The core's message without its leading "<field>: ".
std::string AfterPrefix(const char* message, absl::string_view prefix) {
  absl::string_view msg(message);
  if (msg.substr(0, prefix.size()) == prefix) msg.remove_prefix(prefix.size());
  return std::string(msg);
}

}  // namespace

bool ParseAffinityMode(const std::string& text, AffinitySettings* out,
                       std::string* error) {
  ap_error err;
  if (ap_affinity_mode_parse(text.c_str(), &out->mode, &err) == AP_OK) {
    return true;
  }
  *error = AfterPrefix(err.message, "affinity: ");
  return false;
}

bool ParseAffinityHeader(const std::string& text, AffinitySettings* out,
                         std::string* error) {
  ap_error err;
  if (ap_affinity_config_set_header(out, text.data(), text.size(), &err) ==
      AP_OK) {
    return true;
  }
  *error = AfterPrefix(err.message, "affinityHeader: ");
  return false;
}

void ValidateAffinitySettings(const AffinitySettings& settings,
                              const AffinityErrorFn& add_error) {
  ap_error err;
  if (ap_affinity_config_validate(&settings, &err) == AP_OK) return;
  // Messages have the form "<field>: <what is wrong>".
  absl::string_view msg(err.message);
  const size_t colon = msg.find(": ");
  if (colon == absl::string_view::npos) {
    add_error("affinity", msg);
  } else {
    add_error(msg.substr(0, colon), msg.substr(colon + 2));
  }
}

}  // namespace aperture_lb
