#include "policy/lb/affinity/affinity_settings.h"

#include <errno.h>
#include <stdlib.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

#include "policy/affinity/ap_session_table.h"

namespace aperture_lb {
namespace {

using grpc_core::Json;

// Reads obj[field] as an integer in [lo, hi]; false when absent or bad (a
// bad value is reported).
bool ReadInteger(const Json::Object& obj, const char* field, uint64_t lo,
                 uint64_t hi, uint64_t* out, const AffinityErrorFn& add_error) {
  auto it = obj.find(field);
  if (it == obj.end()) return false;
  std::string range = absl::StrCat("an integer in [", lo, ", ", hi, "]");
  if (it->second.type() != Json::Type::NUMBER) {
    add_error(field, absl::StrCat("is not a number (must be ", range, ")"));
    return false;
  }
  const std::string& text = it->second.string_value();
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || errno != 0 || end == nullptr ||
      *end != '\0' || v < lo || v > hi) {
    add_error(field, absl::StrCat("must be ", range, ", got ", text));
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

void ParseAffinitySettings(const Json::Object& obj, AffinitySettings* out,
                           const AffinityErrorFn& add_error) {
  ap_affinity_config_init(out);
  bool ok = true;
  auto mode = obj.find("affinity");
  if (mode != obj.end()) {
    if (mode->second.type() != Json::Type::STRING) {
      add_error("affinity", "is not a string (\"none\", \"sticky\" or \"hash\")");
      ok = false;
    } else {
      ap_error err;
      if (ap_affinity_mode_parse(mode->second.string_value().c_str(),
                                 &out->mode, &err) != AP_OK) {
        // The core's message starts with "affinity: ".
        absl::string_view msg(err.message);
        msg.remove_prefix(std::min(msg.size(), sizeof("affinity: ") - 1));
        add_error("affinity", msg);
        ok = false;
      }
    }
  }
  auto header = obj.find("affinityHeader");
  if (header != obj.end()) {
    if (header->second.type() != Json::Type::STRING) {
      add_error("affinityHeader", "is not a string");
      ok = false;
    } else {
      const std::string& text = header->second.string_value();
      ap_error err;
      if (ap_affinity_config_set_header(out, text.data(), text.size(), &err) !=
          AP_OK) {
        absl::string_view msg(err.message);
        msg.remove_prefix(std::min(msg.size(), sizeof("affinityHeader: ") - 1));
        add_error("affinityHeader", msg);
        ok = false;
      }
    }
  }
  uint64_t v = 0;
  if (ReadInteger(obj, "maxSessions", 1, AP_SESSION_MAX_SESSIONS, &v,
                  add_error)) {
    out->max_sessions = static_cast<uint32_t>(v);
  } else if (obj.count("maxSessions") != 0) {
    ok = false;
  }
  if (ReadInteger(obj, "sessionIdleMs", 0, kMaxSessionIdleMs, &v, add_error)) {
    out->session_idle_ms = v;
  } else if (obj.count("sessionIdleMs") != 0) {
    ok = false;
  }
  if (ReadInteger(obj, "hashVnodes", 1, AP_HASH_RING_MAX_VNODES, &v,
                  add_error)) {
    out->hash_vnodes = static_cast<uint32_t>(v);
  } else if (obj.count("hashVnodes") != 0) {
    ok = false;
  }
  if (!ok) return;
  // Cross-field rules (header required and well formed) live in the C core.
  ap_error err;
  if (ap_affinity_config_validate(out, &err) != AP_OK) {
    // Messages have the form "<field>: <what is wrong>".
    absl::string_view msg(err.message);
    size_t colon = msg.find(": ");
    if (colon == absl::string_view::npos) {
      add_error("affinity", msg);
    } else {
      add_error(msg.substr(0, colon), msg.substr(colon + 2));
    }
  }
}

}  // namespace aperture_lb
