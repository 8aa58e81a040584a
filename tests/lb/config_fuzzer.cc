// Fuzz target: the aperture config parser (ParseApertureSettings) on JSON
// built from the input. The fields are every entry of the config's field
// table (config_fields.h), so a field added there is fuzzed at once, plus
// an unknown name; each gets a value of its own JSON type (integers at and
// past the entry's own range, the known names of the string fields, NULs,
// control characters, bad UTF-8 and long strings) or of another type;
// "weights" gets maps with odd, NUL-holding and over-long addresses. Odd
// first byte: the raw input as JSON text.
//
// Invariants: no crash; an error names its field and holds no NUL byte; a
// string field whose value holds a NUL never parses, and its error names
// it; nor does a weights address that is empty, too long or holds a NUL,
// its entry named; a config that parses keeps no NUL and no address past the bounds,
// gives weights the ring, the pick table and (in hash mode) the hash ring
// all accept, and reproduces on a second parse.
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "policy/affinity/ap_hash_ring.h"
#include "policy/core/ap_number.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/lb/config/config.h"
#include "policy/lb/config/config_fields.h"
#include "policy/lb/config/unknown_fields.h"
#include "src/core/lib/json/json.h"

extern "C" {
#include "tests/fuzz/fuzz_input.h"
}

namespace {

using aperture_lb::ConfigField;
using aperture_lb::FieldType;

template <size_t N>
const char* Pick(fuzz_input* in, const char* const (&values)[N]) {
  return values[fuzz_u8(in) % N];
}

// Numbers every field sees (type confusion, and the JSON number forms).
const char* const kNumbers[] = {
    "0", "1", "-1", "1.5", "2.5e3", "1e308", "1e309", "-1e308", "4.9e-324",
    "1e-300", "1e-6", "9.99e-7", "1e6", "1000000.0001", "-0", "0.0", "1E2",
    "18446744073709551615", "18446744073709551616"};

// The names the string fields accept, near misses, and hostile text: NULs
// where C code would cut the string, control characters, escapes that are
// not UTF-8 (a lone surrogate), and a terminal escape sequence.
const char* const kStrings[] = {
    "continuous", "smooth", "discrete", "random", "vdc", "mesh", "stable",
    "stabel", "outstanding", "peakEwma", "orca", "sticky", "hash", "none",
    "x-key", "X-Key", "x key", ":authority", "grpc-internal", "",
    "dns:///peers.example:8080", "ipv4:127.0.0.1:1", "10.0.0.1:80",
    "[::1]:80", "10.0.0.1", "smooth\\u0000junk", "\\u0000", "sticky\\u0000",
    "x-key\\u0000y", "10.0.0.1:80\\u0000junk", "a\\u001b[2Jb", "\\ud800",
    "\\u00ff\\u0080", "tab\\there", "\\\"quoted\\\""};

// Values of the other JSON types.
const char* const kOthers[] = {"true", "false", "null", "[]", "[1,2]", "{}",
                               "{\"a\":1}"};

// A long string: `n` copies of a short piece, sometimes with a NUL inside.
std::string LongString(fuzz_input* in) {
  static const size_t kLengths[] = {63, 64, 65, 255, 256, 511, 512, 513,
                                    1024, 1025, 4096, 70000};
  const size_t n = kLengths[fuzz_u8(in) % (sizeof kLengths / sizeof kLengths[0])];
  std::string s(n, static_cast<char>('a' + fuzz_u8(in) % 26));
  if (fuzz_u8(in) % 3 == 0) s.insert(fuzz_u32(in) % (n + 1), "\\u0000");
  return "\"" + s + "\"";
}

std::string StringValue(fuzz_input* in) {
  if (fuzz_u8(in) % 6 == 0) return LongString(in);
  return std::string("\"") + Pick(in, kStrings) + "\"";
}

// An integer at or near the field's own bounds.
std::string IntegerValue(const ConfigField& f, fuzz_input* in) {
  const uint64_t lo = f.reader.min, hi = f.reader.max;
  switch (fuzz_u8(in) % 8) {
    case 0: return absl::StrCat(lo);
    case 1: return absl::StrCat(hi);
    case 2: return lo > 0 ? absl::StrCat(lo - 1) : "-1";
    case 3: return hi < UINT64_MAX ? absl::StrCat(hi + 1) : "18446744073709551616";
    case 4: return "0";
    case 5: return absl::StrCat(lo + fuzz_u32(in) % (hi - lo < 1000 ? hi - lo + 1 : 1000));
    case 6: return absl::StrCat(fuzz_u64(in));
    default: return Pick(in, kNumbers);
  }
}

std::string WeightsObject(fuzz_input* in) {
  std::string out = "{";
  const int n = fuzz_u8(in) % 6;
  for (int i = 0; i < n; ++i) {
    if (i) out += ",";
    switch (fuzz_u8(in) % 8) {
      case 0: out += LongString(in); break;
      case 1: out += "\"10.0.0.1:80\\u0000x\""; break;
      case 2: out += "\"\""; break;
      case 3: out += "\"a\\u001b[2J\\u00ff:1\""; break;
      default: out += "\"10.0.0." + std::to_string(fuzz_u8(in) % 8) + ":80\"";
    }
    out += ":";
    // Mostly good weights, so that a bad address is often the only error.
    static const char* const kGood[] = {"1", "2.5", "1e-6", "1e6", "0.125"};
    const uint8_t how = fuzz_u8(in) % 8;
    out += how == 0 ? StringValue(in) : how < 3 ? Pick(in, kNumbers) : Pick(in, kGood);
  }
  return out + "}";
}

std::string ValueFor(const ConfigField* f, fuzz_input* in) {
  const uint8_t how = fuzz_u8(in) % 8;
  if (how == 0) return Pick(in, kOthers);
  if (how == 1) return Pick(in, kNumbers);
  if (how == 2 || f == nullptr) return StringValue(in);
  switch (f->reader.type) {
    case FieldType::kInteger: return IntegerValue(*f, in);
    case FieldType::kBoolean: return fuzz_u8(in) & 1 ? "true" : "false";
    case FieldType::kString: return StringValue(in);
    case FieldType::kObject: return WeightsObject(in);
  }
  return "null";
}

std::string BuildConfig(fuzz_input* in) {
  const auto fields = aperture_lb::ConfigFields();
  std::string out = "{";
  const int n = fuzz_u8(in) % 10;
  for (int i = 0; i < n; ++i) {
    // The one object field gets a quarter of the draws: its entries are
    // where most of the shapes are.
    const uint8_t draw = fuzz_u8(in);
    const size_t pick = draw % (fields.size() + 1);
    const ConfigField* f = draw < 64 ? aperture_lb::FindConfigField("weights")
                           : pick < fields.size() ? &fields[pick]
                                                  : nullptr;
    if (i) out += ",";
    out += std::string("\"") + (f != nullptr ? f->name : "unknownField") + "\":";
    out += ValueFor(f, in);
  }
  return out + "}";
}

// Fields of `object` that the table types as strings and whose value holds
// a NUL byte.
std::vector<std::string> StringFieldsWithNul(const grpc_core::Json::Object& object) {
  std::vector<std::string> out;
  for (const auto& kv : object) {
    const ConfigField* f = aperture_lb::FindConfigField(kv.first);
    if (f == nullptr || f->reader.type != FieldType::kString) continue;
    if (kv.second.type() != grpc_core::Json::Type::STRING) continue;
    if (kv.second.string_value().find('\0') != std::string::npos) out.push_back(kv.first);
  }
  return out;
}

// Whether "weights" holds an address that is empty, too long or holds a NUL.
bool HasBadWeightsAddress(const grpc_core::Json::Object& object) {
  auto it = object.find("weights");
  if (it == object.end() || it->second.type() != grpc_core::Json::Type::OBJECT) return false;
  for (const auto& kv : it->second.object_value()) {
    if (kv.first.empty() || kv.first.size() > aperture_lb::kMaxWeightAddressBytes ||
        kv.first.find('\0') != std::string::npos) {
      return true;
    }
  }
  return false;
}

void CheckAccepted(const aperture_lb::ApertureSettings& s) {
  FUZZ_CHECK(s.weights.size() <= aperture_lb::kMaxWeights, "%zu weights", s.weights.size());
  FUZZ_CHECK(s.peers.target.find('\0') == std::string::npos, "NUL in peerTarget");
  FUZZ_CHECK(s.peers.self.find('\0') == std::string::npos, "NUL in peerSelf");
  std::vector<double> weights;
  std::vector<std::string> names;
  for (const auto& kv : s.weights) {
    FUZZ_CHECK(!kv.first.empty() && kv.first.size() <= aperture_lb::kMaxWeightAddressBytes &&
                   kv.first.find('\0') == std::string::npos,
               "weights address of %zu bytes accepted", kv.first.size());
    FUZZ_CHECK(ap_check_weight(kv.second, nullptr) == AP_OK, "weight %.17g accepted",
               kv.second);
    names.push_back(kv.first);
    weights.push_back(kv.second);
  }
  if (weights.empty()) return;
  ap_ring* ring = nullptr;
  ap_error err;
  FUZZ_CHECK(ap_ring_create(weights.data(), weights.size(), &ring, &err) == AP_OK, "ring: %s",
             err.message);
  ap_ring_destroy(ring);
  ap_pick_table* table = nullptr;
  FUZZ_CHECK(ap_pick_table_create(weights.data(), weights.size(), &table, &err) == AP_OK,
             "pick table: %s", err.message);
  ap_pick_table_destroy(table);
  if (s.affinity.mode == AP_AFFINITY_HASH) {
    std::vector<const char*> pointers;
    for (const auto& n : names) pointers.push_back(n.c_str());
    ap_hash_ring* hr = nullptr;
    FUZZ_CHECK(ap_hash_ring_create(pointers.data(), weights.data(), pointers.size(),
                                   s.affinity.hash_vnodes, &hr, &err) == AP_OK,
               "hash ring: %s", err.message);
    ap_hash_ring_destroy(hr);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_input in = {data, size, 0};
  std::string text;
  if (size > 0 && (data[0] & 1)) {
    text.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  } else {
    fuzz_u8(&in);
    text = BuildConfig(&in);
  }
  auto json = grpc_core::Json::Parse(text);
  if (!json.ok()) return 0;
  auto settings = aperture_lb::ParseApertureSettings(*json);
  const bool is_object = json->type() == grpc_core::Json::Type::OBJECT;
  const std::vector<std::string> with_nul =
      is_object ? StringFieldsWithNul(json->object_value()) : std::vector<std::string>();
  const bool bad_address = is_object && HasBadWeightsAddress(json->object_value());
  if (!settings.ok()) {
    const std::string message(settings.status().message());
    FUZZ_CHECK(!message.empty(), "error without a message");
    FUZZ_CHECK(message.find('\0') == std::string::npos, "NUL in the error message");
    FUZZ_CHECK(message.find("field:") != std::string::npos, "error naming no field: %s",
               message.c_str());
    for (const std::string& name : with_nul) {
      FUZZ_CHECK(message.find("field:" + name + " error:contains a NUL byte") != std::string::npos,
                 "NUL in %s not named: %s", name.c_str(), message.c_str());
    }
    if (bad_address) {
      FUZZ_CHECK(message.find("field:weights[\"") != std::string::npos,
                 "bad weights address not named: %s", message.c_str());
    }
    return 0;
  }
  FUZZ_CHECK(with_nul.empty(), "%s holds a NUL and parsed", with_nul[0].c_str());
  FUZZ_CHECK(!bad_address, "a bad weights address parsed");
  CheckAccepted(*settings);
  // Ignored names: a bounded list of printable warnings.
  FUZZ_CHECK(settings->config_warnings.size() <= aperture_lb::kMaxConfigWarnings + 1,
             "%zu warnings", settings->config_warnings.size());
  for (const std::string& w : settings->config_warnings) {
    for (char c : w) FUZZ_CHECK(c >= 0x20 && c < 0x7f, "unprintable warning byte %d", c);
  }
  auto again = aperture_lb::ParseApertureSettings(*json);
  FUZZ_CHECK(again.ok() && again->weights == settings->weights, "second parse differs");
  return 0;
}
