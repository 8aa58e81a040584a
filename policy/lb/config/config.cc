#include "policy/lb/config/config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include <grpc/impl/codegen/grpc_types.h>

#include "policy/affinity/ap_hash_ring.h"
#include "policy/core/ap_number.h"
#include "policy/core/stable/ap_stable.h"

#include "policy/lb/coordinate/peer_settings.h"

namespace aperture_lb {
namespace {

using grpc_core::Json;

// Collects "field:X error:Y" entries in the format gRPC uses for its own
// config errors.
class Errors {
 public:
  void Add(absl::string_view field, absl::string_view message) {
    entries_.push_back(absl::StrCat("field:", field, " error:", message));
  }
  bool empty() const { return entries_.empty(); }
  absl::Status ToStatus() const {
    return absl::InvalidArgumentError(
        absl::StrCat("errors validating aperture LB policy config: [",
                     absl::StrJoin(entries_, "; "), "]"));
  }

 private:
  std::vector<std::string> entries_;
};

// Every field the aperture config has. A field outside this list is an
// error rather than ignored: a misspelt "minApperture" would otherwise run
// with the default and nobody would know.
constexpr absl::string_view kKnownFields[] = {
    "mode",           "pickMetric",         "minAperture",
    "peerIndex",      "peerCount",          "choiceCount",
    "minReady",       "randomSeed",         "removalGraceMs",
    "updateCoalesceMs", "reresolutionIntervalMs", "ejectAfterFailures",
    "ejectionMs",     "maxEjectionMs",      "stuckCallMs",
    "stuckCallMinMs", "stuckLatencyFactor", "keepaliveMs",
    "keepaliveTimeoutMs", "reconnectBackoffMaxMs", "eagerConnect",
    "weights",        "peerTarget",         "peerSelf",
    "peerRefreshMs",  "affinity",           "affinityHeader",
    "maxSessions",    "sessionIdleMs",      "hashVnodes"};

// Edit distance, for "did you mean"; names are short, so the O(n*m) table
// is a few hundred cells.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) row[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      const size_t above = row[j];
      const bool same = absl::ascii_tolower(a[i - 1]) ==
                        absl::ascii_tolower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

void CheckKnownFields(const Json::Object& obj, Errors* errors) {
  for (const auto& kv : obj) {
    if (std::find(std::begin(kKnownFields), std::end(kKnownFields),
                  kv.first) != std::end(kKnownFields)) {
      continue;
    }
    absl::string_view closest;
    size_t best = SIZE_MAX;
    for (absl::string_view known : kKnownFields) {
      const size_t d = EditDistance(kv.first, known);
      if (d < best) {
        best = d;
        closest = known;
      }
    }
    std::string message = "is not a field of the aperture config";
    if (best <= 3) {
      absl::StrAppend(&message, " (did you mean \"", closest, "\"?)");
    }
    errors->Add(kv.first, message);
  }
}

// Reads a JSON number as an unsigned integer in [lo, hi].
bool ReadUint(const Json::Object& obj, const char* field, uint64_t lo,
              uint64_t hi, uint64_t* out, bool* present, Errors* errors) {
  *present = false;
  auto it = obj.find(field);
  if (it == obj.end()) return true;
  *present = true;
  const Json& value = it->second;
  std::string range = absl::StrCat("an integer in [", lo, ", ", hi, "]");
  if (value.type() != Json::Type::NUMBER) {
    errors->Add(field, absl::StrCat("is not a number (must be ", range, ")"));
    return false;
  }
  const std::string& text = value.string_value();
  if (text.empty() || text[0] == '-' ||
      text.find_first_of(".eE") != std::string::npos) {
    errors->Add(field, absl::StrCat("must be ", range, ", got ", text));
    return false;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0' || v < lo || v > hi) {
    errors->Add(field, absl::StrCat("must be ", range, ", got ", text));
    return false;
  }
  *out = v;
  return true;
}

// Reads a setting where 0 means "leave the channel's own setting" and any
// other value must be in [lo, hi]: *out is set only for a valid value.
void ReadOffOrAtLeast(const Json::Object& obj, const char* field,
                      uint64_t lo, uint64_t hi, uint32_t* out,
                      Errors* errors) {
  uint64_t v = 0;
  bool present = false;
  if (!ReadUint(obj, field, 0, hi, &v, &present, errors) || !present) return;
  if (v != 0 && v < lo) {
    errors->Add(field,
                absl::StrCat("must be 0 (the channel's own settings) or at "
                             "least ",
                             lo, ", got ", v));
    return;
  }
  *out = static_cast<uint32_t>(v);
}

// Reads an endpoint weight: a JSON number in [AP_MIN_WEIGHT, AP_MAX_WEIGHT]
// (what the ring and the pick table always accept), parsed the same way
// under every locale.
bool ReadWeight(const Json& value, const std::string& field, double* out,
                Errors* errors) {
  const std::string range =
      absl::StrCat("a number in [", AP_MIN_WEIGHT, ", ", AP_MAX_WEIGHT, "]");
  if (value.type() != Json::Type::NUMBER) {
    errors->Add(field, absl::StrCat("is not a number (must be ", range, ")"));
    return false;
  }
  double v = 0;
  ap_error err;
  if (ap_parse_double(value.string_value().c_str(), &v, &err) != AP_OK) {
    errors->Add(field, absl::StrCat("must be ", range, ": ", err.message));
    return false;
  }
  if (ap_check_weight(v, &err) != AP_OK) {
    errors->Add(field, err.message);
    return false;
  }
  *out = v;
  return true;
}

// Hash affinity: the configured weights times hashVnodes must fit the
// ring's point cap, member by member and together, or the ring would be
// refused at run time and hash affinity silently switched off. The core
// counts the points (ap_hash_ring_fit_vnodes says how many vnodes fit).
void CheckHashPoints(const ApertureSettings& s, Errors* errors) {
  if (s.affinity.mode != AP_AFFINITY_HASH || s.weights.empty()) return;
  const uint32_t vnodes = s.affinity.hash_vnodes;
  auto fits = [vnodes](const double* weights, size_t n, uint32_t* fitted) {
    ap_error err;
    int rc = ap_hash_ring_fit_vnodes(weights, n, vnodes, fitted, &err);
    if (rc == AP_ERANGE) *fitted = 0;  // not even 1 point per unit weight
    return rc == AP_ERANGE || (rc == AP_OK && *fitted == vnodes);
  };
  std::vector<double> weights;
  for (const auto& kv : s.weights) {
    weights.push_back(kv.second);
    uint32_t fitted = 0;
    if (!fits(&kv.second, 1, &fitted) || fitted == 0) {
      errors->Add(absl::StrCat("weights[\"", kv.first, "\"]"),
                  absl::StrCat("weight ", kv.second, " x hashVnodes ", vnodes,
                               " gives more hash points than the ring's cap "
                               "of ", AP_HASH_RING_MAX_POINTS,
                               " (at most ", fitted,
                               " vnodes fit this weight)"));
    }
  }
  uint32_t fitted = 0;
  if (!fits(weights.data(), weights.size(), &fitted) || fitted == 0) {
    errors->Add("hashVnodes",
                absl::StrCat("the configured weights x hashVnodes ", vnodes,
                             " give more hash points than the ring's cap of ",
                             AP_HASH_RING_MAX_POINTS, " (at most ", fitted,
                             " fit them)"));
  }
}

}  // namespace

absl::StatusOr<ApertureSettings> ParseApertureSettings(const Json& json) {
  ApertureSettings s;
  Errors errors;
  if (json.type() == Json::Type::JSON_NULL) return s;
  if (json.type() != Json::Type::OBJECT) {
    errors.Add("aperture", "is not a JSON object");
    return errors.ToStatus();
  }
  const Json::Object& obj = json.object_value();
  CheckKnownFields(obj, &errors);
  bool present = false;
  uint64_t v = 0;

  auto mode = obj.find("mode");
  if (mode != obj.end()) {
    if (mode->second.type() != Json::Type::STRING) {
      errors.Add("mode", "is not a string");
    } else {
      ap_error err;
      if (ap_mode_parse(mode->second.string_value().c_str(), &s.mode, &err) !=
          AP_OK) {
        errors.Add("mode", err.message);
      }
    }
  }
  auto metric = obj.find("pickMetric");
  if (metric != obj.end()) {
    if (metric->second.type() != Json::Type::STRING) {
      errors.Add("pickMetric",
                 "is not a string (accepted: outstanding, peakEwma, orca)");
    } else {
      const std::string& name = metric->second.string_value();
      ap_error err;
      if (name.find('\0') != std::string::npos) {
        errors.Add("pickMetric",
                   "contains a NUL byte (accepted: outstanding, peakEwma, "
                   "orca)");
      } else if (ap_pick_metric_parse(name.c_str(), &s.pick_metric, &err) !=
                 AP_OK) {
        errors.Add("pickMetric", err.message);
      }
    }
  }
  if (ReadUint(obj, "minAperture", 1, AP_MAX_PEERS, &v, &present, &errors) &&
      present) {
    s.min_aperture = static_cast<uint32_t>(v);
  }
  bool has_index = false, has_count = false;
  uint64_t index = 0, count = 0;
  bool index_ok =
      ReadUint(obj, "peerIndex", 0, AP_MAX_PEERS - 1, &index, &has_index,
               &errors);
  bool count_ok =
      ReadUint(obj, "peerCount", 1, AP_MAX_PEERS, &count, &has_count, &errors);
  if (index_ok && count_ok) {
    if (has_index != has_count) {
      errors.Add(has_index ? "peerCount" : "peerIndex",
                 has_index ? "is required when peerIndex is set"
                           : "is required when peerCount is set");
    } else if (has_index) {
      if (index >= count) {
        errors.Add("peerIndex",
                   absl::StrCat("must be less than peerCount (", count,
                                "), got ", index));
      } else if (s.mode == AP_MODE_STABLE && count > AP_STABLE_MAX_CLIENTS) {
        // Every client plans the whole service: about 1 KiB per client at
        // the peak of a build (ap_stable.h).
        errors.Add("peerCount",
                   absl::StrCat("must be at most ", AP_STABLE_MAX_CLIENTS,
                                " in stable mode (every client computes the "
                                "whole service's plan), got ",
                                count));
      } else {
        s.has_coordinate = true;
        s.peer_index = static_cast<uint32_t>(index);
        s.peer_count = static_cast<uint32_t>(count);
      }
    }
  }
  if (ReadUint(obj, "choiceCount", 2, kMaxChoiceCount, &v, &present,
               &errors) &&
      present) {
    s.choice_count = static_cast<uint32_t>(v);
  }
  if (ReadUint(obj, "minReady", 1, AP_MAX_PEERS, &v, &present, &errors) &&
      present) {
    s.has_min_ready = true;
    s.min_ready = static_cast<uint32_t>(v);
  }
  if (ReadUint(obj, "randomSeed", 0, UINT64_MAX, &v, &present, &errors) &&
      present) {
    s.has_random_seed = true;
    s.random_seed = v;
  }
  if (ReadUint(obj, "removalGraceMs", 0, AP_MEMBERSHIP_MAX_MS, &v, &present,
               &errors) &&
      present) {
    s.removal_grace_ms = v;
  }
  if (ReadUint(obj, "updateCoalesceMs", 0, AP_MEMBERSHIP_MAX_MS, &v, &present,
               &errors) &&
      present) {
    s.update_coalesce_ms = v;
  }
  if (ReadUint(obj, "reresolutionIntervalMs", 0, AP_MEMBERSHIP_MAX_MS, &v,
               &present, &errors) &&
      present) {
    if (v != 0 && v < kMinReresolutionIntervalMs) {
      errors.Add("reresolutionIntervalMs",
                 absl::StrCat("must be 0 (off) or at least ",
                              kMinReresolutionIntervalMs, ", got ", v));
    } else {
      s.reresolution_interval_ms = v;
    }
  }
  if (ReadUint(obj, "ejectAfterFailures", 0, AP_HEALTH_MAX_FAILURES, &v, &present,
               &errors) &&
      present) {
    s.health.eject_after_failures = static_cast<uint32_t>(v);
  }
  if (ReadUint(obj, "ejectionMs", 1, AP_HEALTH_MAX_MS, &v, &present, &errors) &&
      present) {
    s.health.ejection_ms = static_cast<uint32_t>(v);
  }
  if (ReadUint(obj, "stuckCallMs", 0, AP_HEALTH_MAX_MS, &v, &present, &errors) &&
      present) {
    s.health.stuck_call_ms = static_cast<uint32_t>(v);
  }
  if (ReadUint(obj, "maxEjectionMs", 1, AP_HEALTH_MAX_MS, &v, &present,
               &errors) &&
      present) {
    s.health.max_ejection_ms = static_cast<uint32_t>(v);
  } else if (s.health.max_ejection_ms < s.health.ejection_ms) {
    // Only ejectionMs given, above the default cap: no doubling.
    s.health.max_ejection_ms = s.health.ejection_ms;
  }
  if (s.health.max_ejection_ms < s.health.ejection_ms) {
    errors.Add("maxEjectionMs",
               absl::StrCat("must be at least ejectionMs (",
                            s.health.ejection_ms, "), got ",
                            s.health.max_ejection_ms));
  }
  if (ReadUint(obj, "stuckCallMinMs", 0, AP_HEALTH_MAX_MS, &v, &present,
               &errors) &&
      present) {
    s.health.stuck_call_min_ms = static_cast<uint32_t>(v);
    if (s.health.stuck_call_ms > 0 && v > s.health.stuck_call_ms) {
      errors.Add("stuckCallMinMs",
                 absl::StrCat("must be at most stuckCallMs (",
                              s.health.stuck_call_ms, "), got ", v));
    }
  } else if (s.health.stuck_call_ms > 0 &&
             s.health.stuck_call_min_ms > s.health.stuck_call_ms) {
    // Only stuckCallMs given, below the default floor: a fixed threshold.
    s.health.stuck_call_min_ms = s.health.stuck_call_ms;
  }
  if (ReadUint(obj, "stuckLatencyFactor", 0, AP_HEALTH_MAX_LATENCY_FACTOR, &v,
               &present, &errors) &&
      present) {
    s.health.stuck_latency_factor = static_cast<uint32_t>(v);
  }
  ReadOffOrAtLeast(obj, "keepaliveMs", kMinKeepaliveMs, kMaxKeepaliveMs,
                   &s.keepalive_ms, &errors);
  if (ReadUint(obj, "keepaliveTimeoutMs", 1, kMaxKeepaliveMs, &v, &present,
               &errors) &&
      present) {
    s.keepalive_timeout_ms = static_cast<uint32_t>(v);
  }
  ReadOffOrAtLeast(obj, "reconnectBackoffMaxMs", kMinReconnectBackoffMaxMs,
                   kMaxKeepaliveMs, &s.reconnect_backoff_max_ms, &errors);
  ParsePeerConfig(obj, &s.peers,
                    [&errors](absl::string_view field,
                              absl::string_view message) {
                      errors.Add(field, message);
                    });
  auto eager = obj.find("eagerConnect");
  if (eager != obj.end()) {
    if (eager->second.type() == Json::Type::JSON_TRUE) {
      s.eager_connect = true;
    } else if (eager->second.type() == Json::Type::JSON_FALSE) {
      s.eager_connect = false;
    } else {
      errors.Add("eagerConnect", "is not a boolean");
    }
  }
  auto weights = obj.find("weights");
  if (weights != obj.end()) {
    if (weights->second.type() != Json::Type::OBJECT) {
      errors.Add("weights",
                 "is not a JSON object (address -> positive number)");
    } else {
      for (const auto& kv : weights->second.object_value()) {
        std::string field = absl::StrCat("weights[\"", kv.first, "\"]");
        if (kv.first.empty()) {
          errors.Add(field, "address is empty");
          continue;
        }
        double w = 0;
        if (ReadWeight(kv.second, field, &w, &errors)) {
          s.weights[kv.first] = w;
        }
      }
    }
  }
  ParseAffinitySettings(obj, &s.affinity,
                        [&errors](absl::string_view field,
                                  absl::string_view message) {
                          errors.Add(field, message);
                        });
  CheckHashPoints(s, &errors);
  if (!errors.empty()) return errors.ToStatus();
  return s;
}

grpc_core::ChannelArgs SubchannelArgs(const ApertureSettings& settings,
                                      const grpc_core::ChannelArgs& args) {
  grpc_core::ChannelArgs out = args;
  if (settings.keepalive_ms != 0 &&
      !args.GetInt(GRPC_ARG_KEEPALIVE_TIME_MS).has_value()) {
    out = out.Set(GRPC_ARG_KEEPALIVE_TIME_MS,
                  static_cast<int>(settings.keepalive_ms));
    if (!args.GetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS).has_value()) {
      out = out.Set(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                    static_cast<int>(settings.keepalive_timeout_ms));
    }
  }
  if (settings.reconnect_backoff_max_ms != 0 &&
      !args.GetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS).has_value()) {
    const int cap = static_cast<int>(settings.reconnect_backoff_max_ms);
    out = out.Set(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, cap);
    const auto initial = args.GetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS);
    if (!initial.has_value() || *initial > cap) {
      out = out.Set(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(cap, 1000));
    }
  }
  return out;
}

}  // namespace aperture_lb
