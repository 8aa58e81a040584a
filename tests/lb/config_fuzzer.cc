// Fuzz target: the aperture config parser (ParseApertureSettings) on JSON
// built from the input: fields of the config (and unknown ones) with values
// drawn from numbers at and past every bound, strings, booleans, arrays and
// objects; odd first byte: the raw input as JSON text. Invariants: no
// crash; a config that parses gives weights the ring, the pick table and
// (in hash mode) the hash ring all accept, and reproduces on a second
// parse.
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "policy/affinity/ap_hash_ring.h"
#include "policy/core/ap_number.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/lb/config/config.h"
#include "policy/lb/config/unknown_fields.h"
#include "src/core/lib/json/json.h"

extern "C" {
#include "tests/fuzz/fuzz_input.h"
}

namespace {

const char* const kFields[] = {
    "mode",         "minAperture",   "peerIndex",        "peerCount",
    "choiceCount",  "minReady",      "randomSeed",       "removalGraceMs",
    "updateCoalesceMs", "reresolutionIntervalMs", "eagerConnect", "weights",
    "affinity",     "affinityHeader", "maxSessions",     "sessionIdleMs",
    "hashVnodes",   "unknownField"};

const char* const kValues[] = {
    "0", "1", "2", "-1", "3", "12", "65536", "65537", "1000000", "1000001",
    "1048576", "1048577", "86400000", "86400001", "18446744073709551615",
    "18446744073709551616", "1.5", "2.5e3", "1e308", "1e309", "-1e308",
    "4.9e-324", "1e-300", "1e-6", "9.99e-7", "1e6", "1000000.0001", "-0",
    "0.0", "1E2", "\"continuous\"", "\"smooth\"", "\"discrete\"", "\"random\"",
    "\"vdc\"", "\"mesh\"", "\"stable\"", "\"stabel\"", "\"sideways\"",
    "\"sticky\"", "\"hash\"",
    "\"none\"", "\"x-key\"", "\"\"", "true", "false", "null", "[]", "[1,2]",
    "{}"};

std::string WeightsObject(fuzz_input* in) {
  std::string out = "{";
  const int n = fuzz_u8(in) % 6;
  for (int i = 0; i < n; ++i) {
    if (i) out += ",";
    out += "\"10.0.0." + std::to_string(fuzz_u8(in) % 8) + ":80\":";
    out += kValues[fuzz_u8(in) % (sizeof kValues / sizeof kValues[0])];
  }
  return out + "}";
}

std::string BuildConfig(fuzz_input* in) {
  std::string out = "{";
  const int n = fuzz_u8(in) % 10;
  for (int i = 0; i < n; ++i) {
    const char* field = kFields[fuzz_u8(in) % (sizeof kFields / sizeof kFields[0])];
    if (i) out += ",";
    out += std::string("\"") + field + "\":";
    if (std::string(field) == "weights" && fuzz_u8(in) % 4 != 0) {
      out += WeightsObject(in);
    } else {
      out += kValues[fuzz_u8(in) % (sizeof kValues / sizeof kValues[0])];
    }
  }
  return out + "}";
}

void CheckAccepted(const aperture_lb::ApertureSettings& s) {
  std::vector<double> weights;
  std::vector<std::string> names;
  for (const auto& kv : s.weights) {
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
  if (!settings.ok()) {
    FUZZ_CHECK(!settings.status().message().empty(), "error without a message");
    return 0;
  }
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
