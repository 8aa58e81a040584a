#include "policy/lb/config/config_fields.h"

#include "absl/strings/str_cat.h"

#include "policy/core/ap_number.h"
#include "policy/core/membership/ap_membership.h"
#include "policy/core/pick/ap_health.h"
#include "policy/core/pick/ap_load.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/affinity/ap_hash_ring.h"
#include "policy/affinity/ap_session_table.h"
#include "policy/lb/affinity/affinity_settings.h"
#include "policy/lb/config/config.h"
#include "policy/lb/config/config_errors.h"
#include "policy/lb/coordinate/peer_self.h"
#include "policy/lb/coordinate/peer_settings.h"

namespace aperture_lb {
namespace {

using grpc_core::Json;
using S = ApertureSettings;

// --- How each kind of field is read (the rows below use these).

constexpr FieldReader Integer(uint64_t min, uint64_t max) {
  return {FieldType::kInteger, min, max, nullptr, "", nullptr, nullptr};
}

// 0 means `zero_means` (the feature off, or left to the channel); any
// other value is in [min, max].
constexpr FieldReader OffOrAtLeast(uint64_t min, uint64_t max,
                                   const char* zero_means) {
  return {FieldType::kInteger, min, max, zero_means, "", nullptr, nullptr};
}

constexpr FieldReader Boolean() {
  return {FieldType::kBoolean, 0, 1, nullptr, "", nullptr, nullptr};
}

constexpr FieldReader String(
    bool (*parse)(const std::string&, S*, std::string*),
    const char* hint = "") {
  return {FieldType::kString, 0, 0, nullptr, hint, parse, nullptr};
}

constexpr FieldReader Object(
    bool (*read_object)(const Json::Object&, S*, ConfigErrors*),
    const char* hint) {
  return {FieldType::kObject, 0, 0, nullptr, hint, nullptr, read_object};
}

// --- Where a field's number lives, e.g. FIELD_NUMBER(health.ejection_ms).

#define FIELD_NUMBER(member)                                       \
  FieldAccess{[](S* s, uint64_t v) {                               \
                s->member = static_cast<decltype(s->member)>(v);   \
              },                                                   \
              [](const S& s) -> std::optional<uint64_t> {          \
                return static_cast<uint64_t>(s.member);            \
              }}
// A number the config may leave unset (`given` false): no value then.
#define FIELD_OPTIONAL_NUMBER(given, member)                       \
  FieldAccess{[](S* s, uint64_t v) {                               \
                s->given = true;                                   \
                s->member = static_cast<decltype(s->member)>(v);   \
              },                                                   \
              [](const S& s) -> std::optional<uint64_t> {          \
                if (!s.given) return std::nullopt;                 \
                return static_cast<uint64_t>(s.member);            \
              }}
// A value parse() stores from its name (an enum): read back only.
#define FIELD_NAMED_VALUE(member)                                  \
  FieldAccess{nullptr, [](const S& s) -> std::optional<uint64_t> { \
                return static_cast<uint64_t>(s.member);            \
              }}
#define FIELD_NOT_A_NUMBER FieldAccess{nullptr, nullptr}

// --- What is each field's own: names, free text, the weights.

bool ParseMode(const std::string& text, S* s, std::string* error) {
  ap_error err;
  if (ap_mode_parse(text.c_str(), &s->mode, &err) == AP_OK) return true;
  *error = err.message;
  return false;
}

bool ParsePickMetric(const std::string& text, S* s, std::string* error) {
  ap_error err;
  if (ap_pick_metric_parse(text.c_str(), &s->pick_metric, &err) == AP_OK) {
    return true;
  }
  *error = err.message;
  return false;
}

bool ParsePeerTarget(const std::string& text, S* s, std::string* error) {
  if (!ValidPeerTarget(text, error)) return false;
  s->peers.target = text;
  return true;
}

bool ParsePeerSelfEntry(const std::string& text, S* s, std::string* error) {
  PeerSelf parsed;
  if (!ParsePeerSelf(text, &parsed, error)) return false;
  s->peers.self = text;
  return true;
}

bool ParseAffinity(const std::string& text, S* s, std::string* error) {
  return ParseAffinityMode(text, &s->affinity, error);
}

bool ParseHeader(const std::string& text, S* s, std::string* error) {
  return ParseAffinityHeader(text, &s->affinity, error);
}

// An endpoint weight: a JSON number in [AP_MIN_WEIGHT, AP_MAX_WEIGHT]
// (what the ring and the pick table always accept), parsed the same way
// under every locale.
bool ReadWeight(const Json& value, const std::string& field, double* out,
                ConfigErrors* errors) {
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

// "weights": address -> weight, each entry reported on its own; at most
// kMaxWeights entries, each address 1..kMaxWeightAddressBytes bytes
// without a NUL (a resolver's address never holds one; C strings would cut
// the key at it).
bool ReadWeights(const Json::Object& weights, S* s, ConfigErrors* errors) {
  if (weights.size() > kMaxWeights) {
    errors->Add("weights", absl::StrCat("has ", weights.size(),
                                        " entries, at most ", kMaxWeights));
    return false;
  }
  bool ok = true;
  for (const auto& kv : weights) {
    const std::string field = WeightsEntryField(kv.first);
    double w = 0;
    if (kv.first.empty()) {
      errors->Add(field, "address is empty");
      ok = false;
    } else if (kv.first.find('\0') != std::string::npos) {
      errors->Add(field, "address contains a NUL byte");
      ok = false;
    } else if (kv.first.size() > kMaxWeightAddressBytes) {
      errors->Add(field, absl::StrCat("address of ", kv.first.size(),
                                      " bytes, at most ",
                                      kMaxWeightAddressBytes));
      ok = false;
    } else if (ReadWeight(kv.second, field, &w, errors)) {
      s->weights[kv.first] = w;
    } else {
      ok = false;
    }
  }
  return ok;
}

using O = FieldOwner;
using R = RingRole;

// The fields, in the order the parser reads them (and so the order of
// their errors).
constexpr ConfigField kFields[] = {
    {"mode", String(ParseMode), FIELD_NAMED_VALUE(mode), "smooth", O::kRing,
     R::kSetting,
     "how the slice is chosen: smooth, continuous, discrete, random, vdc, "
     "mesh or stable"},
    {"pickMetric",
     String(ParsePickMetric, " (accepted: outstanding, peakEwma, orca)"),
     FIELD_NAMED_VALUE(pick_metric), "outstanding", O::kPicker, R::kNone,
     "what P2C compares: outstanding, peakEwma or orca"},
    {"clientSkewBalance", Boolean(), FIELD_NUMBER(client_skew_balance),
     nullptr, O::kPicker, R::kNone,
     "with pickMetric orca: a heavy client widens, members weighted by "
     "utilization"},
    {"minAperture", Integer(1, AP_MAX_PEERS), FIELD_NUMBER(min_aperture),
     nullptr, O::kRing, R::kSetting,
     "logical aperture A, clamped to the number of endpoints"},
    {"peerIndex", Integer(0, AP_MAX_PEERS - 1), FIELD_NUMBER(peer_index),
     "none", O::kCoordinate, R::kCoordinate,
     "this client's index in the fleet (with peerCount)"},
    {"peerCount", Integer(1, AP_MAX_PEERS), FIELD_NUMBER(peer_count), "none",
     O::kCoordinate, R::kCoordinate,
     "the number of clients in the fleet (with peerIndex)"},
    {"choiceCount", Integer(2, kMaxChoiceCount), FIELD_NUMBER(choice_count),
     nullptr, O::kPicker, R::kNone, "candidates drawn per call (2: P2C)"},
    {"minReady", Integer(1, AP_MAX_PEERS),
     FIELD_OPTIONAL_NUMBER(has_min_ready, min_ready), "the logical aperture A",
     O::kRing, R::kSetting,
     "members that must not be failing, or the aperture widens"},
    {"randomSeed", Integer(0, UINT64_MAX),
     FIELD_OPTIONAL_NUMBER(has_random_seed, random_seed),
     "one random seed per process", O::kRing, R::kSetting,
     "seed of random mode and of the no-coordinate fallback"},
    {"removalGraceMs", Integer(0, AP_MEMBERSHIP_MAX_MS),
     FIELD_NUMBER(removal_grace_ms), nullptr, O::kMembership, R::kMembers,
     "how long an address gone from the resolver stays, draining"},
    {"updateCoalesceMs", Integer(0, AP_MEMBERSHIP_MAX_MS),
     FIELD_NUMBER(update_coalesce_ms), nullptr, O::kMembership, R::kNone,
     "window in which updates after a ring rebuild are coalesced"},
    {"reresolutionIntervalMs",
     OffOrAtLeast(kMinReresolutionIntervalMs, AP_MEMBERSHIP_MAX_MS, "off"),
     FIELD_NUMBER(reresolution_interval_ms), nullptr, O::kMembership,
     R::kNone, "how often the resolver is asked again (0: on failures only)"},
    {"ejectAfterFailures", Integer(0, AP_HEALTH_MAX_FAILURES),
     FIELD_NUMBER(health.eject_after_failures), nullptr, O::kHealth, R::kNone,
     "failed calls in a row that eject a member (0: never)"},
    {"ejectionMs", Integer(1, AP_HEALTH_MAX_MS),
     FIELD_NUMBER(health.ejection_ms), nullptr, O::kHealth, R::kNone,
     "a member's first ejection, before probation"},
    {"stuckCallMs", Integer(0, AP_HEALTH_MAX_MS),
     FIELD_NUMBER(health.stuck_call_ms), nullptr, O::kHealth, R::kNone,
     "the stuck threshold's cap (0: never stuck)"},
    {"maxEjectionMs", Integer(1, AP_HEALTH_MAX_MS),
     FIELD_NUMBER(health.max_ejection_ms), nullptr, O::kHealth, R::kNone,
     "the cap of an ejection doubling at each failed probe"},
    {"stuckCallMinMs", Integer(0, AP_HEALTH_MAX_MS),
     FIELD_NUMBER(health.stuck_call_min_ms), nullptr, O::kHealth, R::kNone,
     "the stuck threshold's floor"},
    {"stuckLatencyFactor", Integer(0, AP_HEALTH_MAX_LATENCY_FACTOR),
     FIELD_NUMBER(health.stuck_latency_factor), nullptr, O::kHealth, R::kNone,
     "stuck threshold in latency EWMAs (0: stuckCallMs alone)"},
    {"maxEjectionPercent", Integer(0, AP_HEALTH_MAX_EJECTION_PERCENT),
     FIELD_NUMBER(health.max_ejection_percent), nullptr, O::kHealth, R::kNone,
     "at most this share of the aperture's members ejected at once"},
    {"keepaliveMs",
     OffOrAtLeast(kMinKeepaliveMs, kMaxKeepaliveMs,
                  "the channel's own settings"),
     FIELD_NUMBER(keepalive_ms), nullptr, O::kSubchannels, R::kNone,
     "HTTP/2 keepalive ping after this long without a byte"},
    {"keepaliveTimeoutMs", Integer(1, kMaxKeepaliveMs),
     FIELD_NUMBER(keepalive_timeout_ms), nullptr, O::kSubchannels, R::kNone,
     "how long a keepalive ping waits before the connection closes"},
    {"reconnectBackoffMaxMs",
     OffOrAtLeast(kMinReconnectBackoffMaxMs, kMaxKeepaliveMs,
                  "the channel's own settings"),
     FIELD_NUMBER(reconnect_backoff_max_ms), nullptr, O::kSubchannels,
     R::kNone, "the cap of the subchannels' reconnect backoff"},
    {"peerTarget", String(ParsePeerTarget), FIELD_NOT_A_NUMBER,
     "none (APERTURE_PEER_TARGET)", O::kCoordinate, R::kCoordinate,
     "a gRPC target resolving to every client of the fleet"},
    {"peerSelf", String(ParsePeerSelfEntry), FIELD_NOT_A_NUMBER,
     "the host's interface addresses (APERTURE_PEER_SELF)", O::kCoordinate,
     R::kCoordinate, "this process's entry in peerTarget's list"},
    {"peerRefreshMs", Integer(kMinPeerRefreshMs, AP_MEMBERSHIP_MAX_MS),
     FIELD_OPTIONAL_NUMBER(peers.has_refresh_ms, peers.refresh_ms),
     "30000 (APERTURE_PEER_REFRESH_MS)", O::kCoordinate, R::kNone,
     "how often peerTarget is resolved again"},
    {"eagerConnect", Boolean(), FIELD_NUMBER(eager_connect), nullptr,
     O::kSubchannels, R::kNone,
     "connect on the first addresses (false: on the first call)"},
    {"weights", Object(ReadWeights, " (address -> positive number)"),
     FIELD_NOT_A_NUMBER, "1 each", O::kRing, R::kMembers,
     "\"host:port\" -> weight, scaling the endpoint's arc"},
    {"affinity", String(ParseAffinity, " (\"none\", \"sticky\" or \"hash\")"),
     FIELD_NAMED_VALUE(affinity.mode), "none", O::kAffinity, R::kNone,
     "request affinity: none, sticky or hash"},
    {"affinityHeader", String(ParseHeader), FIELD_NOT_A_NUMBER, "none",
     O::kAffinity, R::kNone, "the request header that carries the key"},
    {"maxSessions", Integer(1, AP_SESSION_MAX_SESSIONS),
     FIELD_NUMBER(affinity.max_sessions), nullptr, O::kAffinity, R::kNone,
     "sticky sessions kept, the least recently used evicted"},
    {"sessionIdleMs", Integer(0, kMaxSessionIdleMs),
     FIELD_NUMBER(affinity.session_idle_ms), nullptr, O::kAffinity, R::kNone,
     "a sticky session unused this long expires (0: never)"},
    {"hashVnodes", Integer(1, AP_HASH_RING_MAX_VNODES),
     FIELD_NUMBER(affinity.hash_vnodes), nullptr, O::kAffinity, R::kNone,
     "hash-ring points per unit of weight"},
};

#undef FIELD_NUMBER
#undef FIELD_OPTIONAL_NUMBER
#undef FIELD_NAMED_VALUE
#undef FIELD_NOT_A_NUMBER

}  // namespace

absl::Span<const ConfigField> ConfigFields() { return kFields; }

const ConfigField* FindConfigField(absl::string_view name) {
  for (const ConfigField& f : kFields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string DefaultText(const ConfigField& field) {
  if (field.default_text != nullptr) return field.default_text;
  const std::optional<uint64_t> v = field.access.load != nullptr
                                        ? field.access.load(ApertureSettings())
                                        : std::nullopt;
  if (!v.has_value()) return "";
  if (field.reader.type == FieldType::kBoolean) return *v ? "true" : "false";
  return absl::StrCat(*v);
}

}  // namespace aperture_lb
