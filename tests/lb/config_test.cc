// Config validation, coordinate sources and the registration API.
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <grpc/support/log.h>
#include <gtest/gtest.h>

#include "aperture.h"
#include "policy/lb/config/config.h"
#include "policy/lb/config/config_fields.h"
#include "policy/lb/coordinate/coordinate.h"
#include "src/core/lib/config/core_configuration.h"
#include "src/core/lib/json/json.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

void ExpectFieldError(const std::string& json, const std::string& field) {
  absl::Status s = ParseThroughRegistry(json);
  EXPECT_FALSE(s.ok()) << json;
  EXPECT_NE(std::string(s.message()).find("field:" + field + " "),
            std::string::npos)
      << json << " -> " << s.message();
}

// Parses an aperture config through gRPC's registry, as a channel's service
// config is, and returns the settings the policy is built with.
absl::StatusOr<aperture_lb::ApertureSettings> SettingsThroughRegistry(
    const std::string& aperture_json) {
  auto json = grpc_core::Json::Parse("[{\"aperture\":" + aperture_json + "}]");
  if (!json.ok()) return json.status();
  auto config =
      grpc_core::CoreConfiguration::Get().lb_policy_registry().ParseLoadBalancingConfig(*json);
  if (!config.ok()) return config.status();
  if ((*config)->name() != aperture_lb::kPolicyName)
    return absl::InternalError("the registry returned another policy's config");
  return static_cast<const aperture_lb::ApertureLbConfig&>(**config).settings();
}

// The defaults lb_config.h and ap_affinity.h document.
void ExpectDefaults(const aperture_lb::ApertureSettings& s) {
  EXPECT_EQ(s.mode, AP_MODE_SMOOTH);
  EXPECT_EQ(s.min_aperture, 12u);
  EXPECT_FALSE(s.has_coordinate);
  EXPECT_EQ(s.choice_count, 2u);
  EXPECT_EQ(s.pick_metric, AP_PICK_OUTSTANDING);
  EXPECT_TRUE(s.weights.empty());
  EXPECT_TRUE(s.eager_connect);  // connect on the first addresses
  EXPECT_FALSE(s.has_min_ready);
  EXPECT_FALSE(s.has_random_seed);
  EXPECT_EQ(s.affinity.mode, AP_AFFINITY_NONE);
  EXPECT_STREQ(s.affinity.header, "");
  EXPECT_EQ(s.affinity.max_sessions, 10000u);
  EXPECT_EQ(s.affinity.session_idle_ms, 600000u);
  EXPECT_EQ(s.affinity.hash_vnodes, 100u);
  EXPECT_EQ(s.removal_grace_ms, 0u);
  EXPECT_EQ(s.update_coalesce_ms, 0u);
  EXPECT_EQ(s.reresolution_interval_ms, 0u);
  EXPECT_EQ(s.peers.target, "");
  EXPECT_EQ(s.peers.self, "");
  EXPECT_FALSE(s.peers.has_refresh_ms);
  EXPECT_EQ(s.peers.refresh_ms, 30000u);
}

// Every field a config can give is read back as written; absent fields
// keep their defaults.
TEST(ApertureConfig, ValidConfigsParse) {
  auto d = SettingsThroughRegistry("{}");
  ASSERT_TRUE(d.ok()) << d.status();
  ExpectDefaults(*d);

  auto s = SettingsThroughRegistry(
      "{\"mode\":\"discrete\",\"minAperture\":3,\"peerIndex\":2,\"peerCount\":7,"
      "\"choiceCount\":3,\"eagerConnect\":true,\"minReady\":2,"
      // 2^64 - 1: a double would round it to 2^64
      "\"randomSeed\":18446744073709551615,"
      "\"weights\":{\"10.0.0.1:80\":2.5,\"10.0.0.2:80\":0.125,\"[::1]:81\":1e3},"
      "\"removalGraceMs\":1500,\"updateCoalesceMs\":250,\"reresolutionIntervalMs\":30000,"
      "\"peerTarget\":\"dns:///clients.svc:80\",\"peerSelf\":\"10.1.2.3:7001\","
      "\"peerRefreshMs\":5000,\"affinity\":\"sticky\",\"affinityHeader\":\"x-session\","
      "\"maxSessions\":500,\"sessionIdleMs\":60000}");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->mode, AP_MODE_DISCRETE);
  EXPECT_EQ(s->min_aperture, 3u);
  EXPECT_TRUE(s->has_coordinate);
  EXPECT_EQ(s->peer_index, 2u);
  EXPECT_EQ(s->peer_count, 7u);
  EXPECT_EQ(s->choice_count, 3u);
  EXPECT_TRUE(s->eager_connect);
  EXPECT_TRUE(s->has_min_ready);
  EXPECT_EQ(s->min_ready, 2u);
  EXPECT_TRUE(s->has_random_seed);
  EXPECT_EQ(s->random_seed, UINT64_MAX);
  EXPECT_EQ(s->weights, (std::map<std::string, double>{
                            {"10.0.0.1:80", 2.5}, {"10.0.0.2:80", 0.125}, {"[::1]:81", 1000}}));
  EXPECT_EQ(s->removal_grace_ms, 1500u);
  EXPECT_EQ(s->update_coalesce_ms, 250u);
  EXPECT_EQ(s->reresolution_interval_ms, 30000u);
  EXPECT_EQ(s->peers.target, "dns:///clients.svc:80");
  EXPECT_EQ(s->peers.self, "10.1.2.3:7001");
  EXPECT_TRUE(s->peers.has_refresh_ms);
  EXPECT_EQ(s->peers.refresh_ms, 5000u);
  EXPECT_EQ(s->affinity.mode, AP_AFFINITY_STICKY);
  EXPECT_STREQ(s->affinity.header, "x-session");
  EXPECT_EQ(s->affinity.max_sessions, 500u);
  EXPECT_EQ(s->affinity.session_idle_ms, 60000u);
  EXPECT_EQ(s->affinity.hash_vnodes, 100u);  // not given: the default

  auto h = SettingsThroughRegistry(
      "{\"mode\":\"stable\",\"eagerConnect\":false,\"affinity\":\"hash\","
      "\"affinityHeader\":\"x-key\",\"hashVnodes\":37}");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->mode, AP_MODE_STABLE);
  EXPECT_FALSE(h->eager_connect);
  EXPECT_EQ(h->affinity.mode, AP_AFFINITY_HASH);
  EXPECT_STREQ(h->affinity.header, "x-key");
  EXPECT_EQ(h->affinity.hash_vnodes, 37u);
  EXPECT_EQ(h->min_aperture, 12u);
}

// A field the config does not have is ignored, as gRPC's own policies
// ignore theirs, so a config written for a newer release runs here; each
// gets a warning naming it, with the closest real field when it looks like
// a misspelling. Values that are wrong stay errors naming their field.
// (Until this release an unknown field was an error; these cases replaced
// that test.)
TEST(ApertureConfig, UnknownFieldsAreIgnoredWithANamedWarning) {
  auto typo = SettingsThroughRegistry(
      "{\"minApperture\":2,\"futureField\":{\"x\":1},\"mode\":\"continuous\"}");
  ASSERT_TRUE(typo.ok()) << typo.status();
  EXPECT_EQ(typo->mode, AP_MODE_CONTINUOUS);
  EXPECT_EQ(typo->min_aperture, 12u);  // the misspelt value is not read
  EXPECT_EQ(typo->config_warnings,
            (std::vector<std::string>{
                "unknown field \"futureField\" ignored",
                "unknown field \"minApperture\" ignored (did you mean \"minAperture\"?)"}));
  auto cased = SettingsThroughRegistry("{\"peerindex\":0}");
  ASSERT_TRUE(cased.ok()) << cased.status();
  EXPECT_EQ(cased->config_warnings,
            (std::vector<std::string>{
                "unknown field \"peerindex\" ignored (did you mean \"peerIndex\"?)"}));
  auto clean = SettingsThroughRegistry("{\"minAperture\":3}");
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_TRUE(clean->config_warnings.empty());

  // A wrong value beside unknown names: the error names the field, and
  // only it (unknown names are no errors).
  absl::Status bad = ParseThroughRegistry(
      "{\"someFutureField\":1,\"zz\":2,\"choiceCount\":11,\"mode\":\"smooth\"}");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  const std::string m(bad.message());
  EXPECT_NE(m.find("field:choiceCount error:"), std::string::npos) << m;
  EXPECT_EQ(m.find("someFutureField"), std::string::npos) << m;
  EXPECT_EQ(m.find("field:zz"), std::string::npos) << m;
  EXPECT_EQ(m.find("field:mode"), std::string::npos) << m;
  ExpectFieldError("{\"futureField\":1,\"minAperture\":0}", "minAperture");
  // A misspelt half of a pair leaves the other half alone: an error.
  ExpectFieldError("{\"peerindex\":0,\"peerCount\":2}", "peerIndex");
  ExpectFieldError("{\"minApperture\":2,\"minAperture\":\"2\"}", "minAperture");
}

// A warning quotes the name in printable ASCII (escapes, \xNN for other
// bytes) and cut to 64 bytes; past 16 unknown names one entry counts the
// rest; a long name costs no edit-distance table.
TEST(ApertureConfig, WarningsAreBoundedAndPrintable) {
  const std::string long_name(100000, 'q');
  auto s = SettingsThroughRegistry("{\"a\\\"b\\\\c\\u00e9\\u0007\":1,\"" + long_name + "\":2}");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->config_warnings.size(), 2u);
  EXPECT_EQ(s->config_warnings[0], "unknown field \"a\\\"b\\\\c\\xc3\\xa9\\x07\" ignored");
  EXPECT_EQ(s->config_warnings[1],
            "unknown field \"" + std::string(64, 'q') + "...\" ignored");
  std::string many = "{";
  for (int i = 0; i < 40; ++i) many += (i ? ",\"" : "\"") + std::string("unknown") + std::to_string(100 + i) + "\":1";
  auto m = SettingsThroughRegistry(many + "}");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->config_warnings.size(), 17u);
  EXPECT_EQ(m->config_warnings[0], "unknown field \"unknown100\" ignored");
  EXPECT_EQ(m->config_warnings[16], "24 more unknown fields ignored");
  for (const std::string& w : m->config_warnings) {
    for (char c : w) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << w;
  }
}

// Every mode name parses through the registry, stable included.
TEST(ApertureConfig, EveryModeNameParses) {
  for (const char* mode : {"continuous", "discrete", "random", "vdc", "mesh",
                           "smooth", "stable"}) {
    const std::string json = std::string("{\"mode\":\"") + mode + "\"}";
    absl::Status s = ParseThroughRegistry(json);
    EXPECT_TRUE(s.ok()) << json << " -> " << s.message();
  }
  EXPECT_TRUE(ParseThroughRegistry("{\"mode\":\"stable\",\"minAperture\":3,"
                                   "\"peerIndex\":1,\"peerCount\":4}")
                  .ok());
}

// Every pickMetric name parses to its own value, read back from the
// settings the policy is built with; absent means outstanding.
TEST(ApertureConfig, EveryPickMetricNameParses) {
  const std::pair<const char*, ap_pick_metric> cases[] = {
      {"outstanding", AP_PICK_OUTSTANDING},
      {"peakEwma", AP_PICK_PEAK_EWMA},
      {"orca", AP_PICK_ORCA}};
  for (const auto& c : cases) {
    const std::string json =
        std::string("{\"pickMetric\":\"") + c.first + "\"}";
    auto s = SettingsThroughRegistry(json);
    ASSERT_TRUE(s.ok()) << json << " -> " << s.status().message();
    EXPECT_EQ(s->pick_metric, c.second) << json;
    EXPECT_STREQ(ap_pick_metric_name(s->pick_metric), c.first);
  }
  auto d = SettingsThroughRegistry("{\"mode\":\"mesh\"}");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->pick_metric, AP_PICK_OUTSTANDING);
  // Together with the other fields.
  auto m = SettingsThroughRegistry(
      "{\"mode\":\"stable\",\"pickMetric\":\"orca\",\"choiceCount\":3}");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->pick_metric, AP_PICK_ORCA);
  EXPECT_EQ(m->mode, AP_MODE_STABLE);
  EXPECT_EQ(m->choice_count, 3u);
}

// A bad pickMetric names the field and lists the accepted names.
TEST(ApertureConfig, BadPickMetricNamesTheFieldAndTheMetrics) {
  for (const char* json :
       {"{\"pickMetric\":\"latency\"}", "{\"pickMetric\":\"Orca\"}",
        "{\"pickMetric\":\"peak_ewma\"}", "{\"pickMetric\":\"\"}",
        "{\"pickMetric\":\"orca\\u0000x\"}"}) {
    absl::Status s = ParseThroughRegistry(json);
    ASSERT_FALSE(s.ok()) << json;
    const std::string message(s.message());
    EXPECT_NE(message.find("field:pickMetric "), std::string::npos) << message;
    EXPECT_NE(message.find("outstanding, peakEwma, orca"), std::string::npos)
        << message;
  }
  for (const char* json :
       {"{\"pickMetric\":2}", "{\"pickMetric\":true}",
        "{\"pickMetric\":null}", "{\"pickMetric\":[\"orca\"]}",
        "{\"pickMetric\":{\"name\":\"orca\"}}"}) {
    ExpectFieldError(json, "pickMetric");
  }
  // With another bad field, both are named.
  absl::Status s =
      ParseThroughRegistry("{\"pickMetric\":\"fast\",\"mode\":\"wide\"}");
  EXPECT_NE(std::string(s.message()).find("field:pickMetric"),
            std::string::npos);
  EXPECT_NE(std::string(s.message()).find("field:mode"), std::string::npos);
}

// A misspelt mode names the field and lists the accepted names, stable
// among them.
TEST(ApertureConfig, MisspeltStableNamesTheFieldAndTheModes) {
  absl::Status s = ParseThroughRegistry("{\"mode\":\"stabel\"}");
  ASSERT_FALSE(s.ok());
  const std::string message(s.message());
  EXPECT_NE(message.find("field:mode "), std::string::npos) << message;
  EXPECT_NE(message.find("\"stabel\""), std::string::npos) << message;
  EXPECT_NE(message.find("smooth, stable"), std::string::npos) << message;
}

TEST(ApertureConfig, BadFieldsAreNamed) {
  ExpectFieldError("{\"mode\":\"sideways\"}", "mode");
  ExpectFieldError("{\"mode\":3}", "mode");
  ExpectFieldError("{\"minAperture\":0}", "minAperture");
  ExpectFieldError("{\"minAperture\":2.5}", "minAperture");
  ExpectFieldError("{\"minAperture\":\"4\"}", "minAperture");
  ExpectFieldError("{\"peerIndex\":3,\"peerCount\":3}", "peerIndex");
  ExpectFieldError("{\"peerIndex\":1}", "peerCount");
  ExpectFieldError("{\"peerCount\":0,\"peerIndex\":0}", "peerCount");
  // Stable mode plans the whole service: at most 200,000 clients.
  ExpectFieldError("{\"mode\":\"stable\",\"peerIndex\":0,\"peerCount\":1000000}",
                   "peerCount");
  ExpectFieldError("{\"mode\":\"stable\",\"peerIndex\":0,\"peerCount\":200001}",
                   "peerCount");
  EXPECT_TRUE(ParseThroughRegistry(
                  "{\"mode\":\"stable\",\"peerIndex\":0,\"peerCount\":200000}")
                  .ok());
  EXPECT_TRUE(ParseThroughRegistry(
                  "{\"mode\":\"smooth\",\"peerIndex\":0,\"peerCount\":1000000}")
                  .ok());
  ExpectFieldError("{\"pickMetric\":\"sideways\"}", "pickMetric");
  ExpectFieldError("{\"pickMetric\":1}", "pickMetric");
  ExpectFieldError("{\"choiceCount\":1}", "choiceCount");
  ExpectFieldError("{\"choiceCount\":11}", "choiceCount");
  ExpectFieldError("{\"eagerConnect\":\"yes\"}", "eagerConnect");
  ExpectFieldError("{\"minReady\":-1}", "minReady");
  ExpectFieldError("{\"randomSeed\":-5}", "randomSeed");
  ExpectFieldError("{\"weights\":[1,2]}", "weights");
  ExpectFieldError("{\"weights\":{\"10.0.0.1:80\":0}}",
                   "weights[\"10.0.0.1:80\"]");
  ExpectFieldError("{\"weights\":{\"10.0.0.1:80\":-2}}",
                   "weights[\"10.0.0.1:80\"]");
  // Several errors are all reported.
  absl::Status s = ParseThroughRegistry("{\"minAperture\":0,\"choiceCount\":99}");
  EXPECT_NE(std::string(s.message()).find("field:minAperture"), std::string::npos);
  EXPECT_NE(std::string(s.message()).find("field:choiceCount"), std::string::npos);
}

// The gray-failure fields: defaults, values read back, ranges named.
TEST(ApertureConfig, HealthFieldsParseAndAreNamed) {
  auto d = aperture_lb::ParseApertureSettings(*grpc_core::Json::Parse("{}"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->health.eject_after_failures, 5u);
  EXPECT_EQ(d->health.ejection_ms, 3000u);
  EXPECT_EQ(d->health.stuck_call_ms, 1000u);
  auto s = aperture_lb::ParseApertureSettings(*grpc_core::Json::Parse(
      "{\"ejectAfterFailures\":0,\"ejectionMs\":250,\"stuckCallMs\":0}"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->health.eject_after_failures, 0u);
  EXPECT_EQ(s->health.ejection_ms, 250u);
  EXPECT_EQ(s->health.stuck_call_ms, 0u);
  ExpectFieldError("{\"ejectAfterFailures\":-1}", "ejectAfterFailures");
  ExpectFieldError("{\"ejectAfterFailures\":1000001}", "ejectAfterFailures");
  ExpectFieldError("{\"ejectionMs\":0}", "ejectionMs");
  ExpectFieldError("{\"ejectionMs\":\"1s\"}", "ejectionMs");
  ExpectFieldError("{\"stuckCallMs\":86400001}", "stuckCallMs");
  ExpectFieldError("{\"stuckCallMs\":1.5}", "stuckCallMs");
}

// The stuck threshold's and the ejection backoff's fields, and keepalive.
TEST(ApertureConfig, StuckBackoffAndKeepaliveFieldsParseAndAreNamed) {
  auto d = aperture_lb::ParseApertureSettings(*grpc_core::Json::Parse("{}"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->health.max_ejection_ms, 6000u);
  EXPECT_EQ(d->health.stuck_call_min_ms, 25u);
  EXPECT_EQ(d->health.stuck_latency_factor, 8u);
  EXPECT_EQ(d->keepalive_ms, 200u);
  EXPECT_EQ(d->keepalive_timeout_ms, 1000u);
  EXPECT_EQ(d->reconnect_backoff_max_ms, 1000u);
  auto s = aperture_lb::ParseApertureSettings(*grpc_core::Json::Parse(
      "{\"maxEjectionMs\":9000,\"stuckCallMinMs\":20,\"stuckLatencyFactor\":4,"
      "\"keepaliveMs\":0,\"keepaliveTimeoutMs\":5000,\"reconnectBackoffMaxMs\":0}"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->health.max_ejection_ms, 9000u);
  EXPECT_EQ(s->health.stuck_call_min_ms, 20u);
  EXPECT_EQ(s->health.stuck_latency_factor, 4u);
  EXPECT_EQ(s->keepalive_ms, 0u);
  EXPECT_EQ(s->keepalive_timeout_ms, 5000u);
  EXPECT_EQ(s->reconnect_backoff_max_ms, 0u);
  // Only ejectionMs above the default cap: no doubling, not an error.
  auto e = aperture_lb::ParseApertureSettings(*grpc_core::Json::Parse("{\"ejectionMs\":8000}"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->health.max_ejection_ms, 8000u);
  // Only stuckCallMs below the default floor: a fixed threshold.
  auto f = aperture_lb::ParseApertureSettings(*grpc_core::Json::Parse("{\"stuckCallMs\":20}"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->health.stuck_call_min_ms, 20u);
  ExpectFieldError("{\"ejectionMs\":2000,\"maxEjectionMs\":1000}", "maxEjectionMs");
  ExpectFieldError("{\"maxEjectionMs\":0}", "maxEjectionMs");
  ExpectFieldError("{\"stuckCallMs\":100,\"stuckCallMinMs\":200}", "stuckCallMinMs");
  ExpectFieldError("{\"stuckLatencyFactor\":1001}", "stuckLatencyFactor");
  ExpectFieldError("{\"keepaliveMs\":50}", "keepaliveMs");
  ExpectFieldError("{\"keepaliveMs\":-1}", "keepaliveMs");
  ExpectFieldError("{\"keepaliveTimeoutMs\":0}", "keepaliveTimeoutMs");
  ExpectFieldError("{\"reconnectBackoffMaxMs\":50}", "reconnectBackoffMaxMs");
}

// A bad config from the resolver fails the channel's calls with the field
// in the status.
// Values the core would refuse later (and make the channel drop every
// endpoint, or switch hash affinity off) are refused at parse time with
// their field name.
TEST(ApertureConfig, WeightsTheCoreWouldRefuseAreRejected) {
  const std::string field = "weights[\"10.0.0.1:80\"]";
  // Two 1e308 weights overflow the ring's total.
  ExpectFieldError("{\"weights\":{\"10.0.0.1:80\":1e308,\"10.0.0.2:80\":1e308}}", field);
  // A subnormal weight underflows the pick weights.
  ExpectFieldError("{\"weights\":{\"10.0.0.1:80\":4.9e-324}}", field);
  ExpectFieldError("{\"weights\":{\"10.0.0.1:80\":1e-300}}", field);
  ExpectFieldError("{\"weights\":{\"10.0.0.1:80\":1e300}}", field);
  ExpectFieldError("{\"weights\":{\"10.0.0.1:80\":1e999}}", field);
  // The bounds themselves are fine.
  EXPECT_TRUE(ParseThroughRegistry("{\"weights\":{\"a:1\":1e-6,\"b:1\":1e6}}").ok());
}

TEST(ApertureConfig, HashPointsOverTheCapAreRejected) {
  const std::string hash =
      "\"affinity\":\"hash\",\"affinityHeader\":\"x-key\",";
  // 1000 x 65536 vnodes: 65.5 million points for one member.
  ExpectFieldError("{" + hash + "\"hashVnodes\":65536,\"weights\":{\"10.0.0.1:80\":1000}}",
                   "weights[\"10.0.0.1:80\"]");
  // Each member fits, together they do not.
  std::string many;
  for (int i = 0; i < 300; ++i)
    many += (i ? "," : "") + std::string("\"10.0.") + std::to_string(i) + ".1:80\":1";
  ExpectFieldError("{" + hash + "\"hashVnodes\":65536,\"weights\":{" + many + "}}",
                   "hashVnodes");
  // The same weights without hash affinity are fine, and so is a small ring.
  EXPECT_TRUE(ParseThroughRegistry("{\"weights\":{\"10.0.0.1:80\":1000}}").ok());
  EXPECT_TRUE(ParseThroughRegistry("{" + hash + "\"hashVnodes\":100,\"weights\":{" + many +
                                   "}}")
                  .ok());
}

// Every string field of the table refuses a NUL byte (gRPC's JSON reader
// turns \u0000 into one; the fields' parsers read C strings and would run
// on the text before it). The config around each value is valid without
// the NUL, so the NUL alone is what fails. A string field added to the
// table without a case here fails the test, naming it.
TEST(ApertureConfig, NulInAnyStringFieldIsAnErrorNamingIt) {
  // field -> a valid config with @ where that field's value goes.
  const std::map<std::string, std::pair<std::string, std::string>> cases = {
      {"mode", {"{\"mode\":@}", "smooth"}},
      {"pickMetric", {"{\"pickMetric\":@}", "orca"}},
      {"peerTarget", {"{\"peerTarget\":@}", "dns:///peers.example:8080"}},
      {"peerSelf", {"{\"peerSelf\":@}", "10.0.0.1:80"}},
      {"affinity", {"{\"affinity\":@,\"affinityHeader\":\"x-key\"}", "sticky"}},
      {"affinityHeader", {"{\"affinity\":\"sticky\",\"affinityHeader\":@}", "x-key"}},
  };
  size_t string_fields = 0;
  for (const aperture_lb::ConfigField& f : aperture_lb::ConfigFields()) {
    if (f.reader.type != aperture_lb::FieldType::kString) continue;
    string_fields++;
    auto it = cases.find(f.name);
    ASSERT_NE(it, cases.end()) << "no NUL case for the string field " << f.name;
    const std::string& shape = it->second.first;
    const std::string& value = it->second.second;
    auto with = [&](const std::string& v) {
      std::string json = shape;
      json.replace(json.find('@'), 1, "\"" + v + "\"");
      return json;
    };
    EXPECT_TRUE(ParseThroughRegistry(with(value)).ok()) << with(value);
    for (const std::string& bad :
         {value + "\\u0000junk", value + "\\u0000", "\\u0000" + value}) {
      absl::Status s = ParseThroughRegistry(with(bad));
      ASSERT_FALSE(s.ok()) << with(bad);
      const std::string message(s.message());
      EXPECT_NE(message.find("field:" + std::string(f.name) + " error:contains a NUL byte"),
                std::string::npos)
          << with(bad) << " -> " << message;
      EXPECT_EQ(message.find('\0'), std::string::npos) << "a NUL in the message";
    }
  }
  EXPECT_EQ(string_fields, cases.size());
}

// The contract through live channels: the config arrives from the resolver
// and every call fails with the error naming the field; no backend sees a
// call.
TEST(ApertureConfig, NulInAStringFieldFromTheResolverFailsEveryCall) {
  const std::pair<const char*, const char*> cases[] = {
      {"mode", "{\"mode\":\"smooth\\u0000junk\"}"},
      {"affinity", "{\"affinity\":\"sticky\\u0000junk\",\"affinityHeader\":\"x-key\"}"},
      {"affinityHeader", "{\"affinity\":\"sticky\",\"affinityHeader\":\"x-key\\u0000junk\"}"},
      {"peerSelf", "{\"peerSelf\":\"10.0.0.1:80\\u0000junk\"}"},
  };
  for (const auto& c : cases) {
    Backend backend;
    TestChannel channel(std::string("nul-") + c.first, "");
    channel.SetAddresses({backend.address()},
                         std::string("{\"loadBalancingConfig\":[{\"aperture\":") + c.second +
                             "}]}");
    for (int i = 0; i < 3; ++i) {
      grpc::Status status = channel.Call(2000);
      EXPECT_FALSE(status.ok()) << c.first;
      EXPECT_NE(status.error_message().find(std::string("field:") + c.first + " error:"),
                std::string::npos)
          << status.error_message();
    }
    EXPECT_EQ(backend.calls(), 0u) << c.first;
  }
}

// The weights map: at most kMaxWeights entries, addresses of 1 to
// kMaxWeightAddressBytes bytes without a NUL; each error names the field
// (the entry, its address escaped and cut, or the whole map).
TEST(ApertureConfig, WeightsHaveLimitsNamedInTheirErrors) {
  ExpectFieldError("{\"weights\":{\"10.0.0.1:80\\u0000x\":2}}",
                   "weights[\"10.0.0.1:80\\u0000x\"]");
  const std::string longest(aperture_lb::kMaxWeightAddressBytes, 'a');
  EXPECT_TRUE(ParseThroughRegistry("{\"weights\":{\"" + longest + "\":2}}").ok());
  const std::string too_long = longest + "a";
  absl::Status s = ParseThroughRegistry("{\"weights\":{\"" + too_long + "\":2}}");
  ASSERT_FALSE(s.ok());
  const std::string message(s.message());
  EXPECT_NE(message.find("field:weights[\"" + std::string(64, 'a') + "...\"] error:address of " +
                         std::to_string(too_long.size()) + " bytes, at most " +
                         std::to_string(aperture_lb::kMaxWeightAddressBytes)),
            std::string::npos)
      << message.substr(0, 300);
  // A control character is shown escaped in the error.
  ExpectFieldError("{\"weights\":{\"a\\u001b[2J:1\":0}}", "weights[\"a\\u001b[2J:1\"]");
  auto many = [](size_t n) {
    std::string json = "{\"weights\":{";
    for (size_t i = 0; i < n; ++i) {
      json += (i ? ",\"" : "\"") + std::to_string(i) + ":80\":2";
    }
    return json + "}}";
  };
  auto at_limit = SettingsThroughRegistry(many(aperture_lb::kMaxWeights));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status().message().substr(0, 300);
  EXPECT_EQ(at_limit->weights.size(), aperture_lb::kMaxWeights);
  s = ParseThroughRegistry(many(aperture_lb::kMaxWeights + 1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("field:weights error:has " +
                                          std::to_string(aperture_lb::kMaxWeights + 1) +
                                          " entries, at most " +
                                          std::to_string(aperture_lb::kMaxWeights)),
            std::string::npos)
      << std::string(s.message()).substr(0, 300);
}

// Sets LC_NUMERIC to a locale whose decimal separator is a comma. When
// Debian's locale data (package `locales`) is there, de_DE.UTF-8 is
// compiled into the test's temporary directory (LOCPATH); otherwise every
// locale the system has (`locale -a`) is tried. Returns false with the
// reason in *why when there is none. (setlocale, not newlocale: glibc's
// newlocale leaks its copy of LOCPATH.)
bool SetCommaDecimalLocale(std::string* why) {
  auto comma = [] {
    const struct lconv* lc = localeconv();
    return lc != nullptr && std::string(lc->decimal_point) == ",";
  };
  const char* tmp = getenv("TEST_TMPDIR");
  std::string debian = "Debian's locale data (package locales) is not installed";
  if (tmp != nullptr && access("/usr/share/i18n/locales/de_DE", R_OK) == 0) {
    debian = "localedef could not build de_DE.UTF-8 from Debian's locale data";
    const std::string dir = std::string(tmp) + "/locales";
    const std::string cmd = "mkdir -p " + dir + " && localedef -i de_DE -f UTF-8 " + dir +
                            "/de_DE.UTF-8 >/dev/null 2>&1";
    if (system(cmd.c_str()) == 0) {
      setenv("LOCPATH", dir.c_str(), 1);
      if (setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr && comma()) return true;
      setlocale(LC_NUMERIC, "C");
      unsetenv("LOCPATH");
    }
  }
  std::string tried;
  if (FILE* list = popen("locale -a 2>/dev/null", "r")) {
    char name[256];
    bool found = false;
    while (!found && fgets(name, sizeof name, list) != nullptr) {
      std::string n(name);
      while (!n.empty() && (n.back() == '\n' || n.back() == '\r')) n.pop_back();
      if (n.empty()) continue;
      tried += " " + n;
      found = setlocale(LC_NUMERIC, n.c_str()) != nullptr && comma();
      if (!found) setlocale(LC_NUMERIC, "C");
    }
    pclose(list);
    if (found) return true;
  }
  *why = "no locale with a decimal comma: " + debian + ", and none of the installed locales (" +
         tried + " ) has one";
  return false;
}

// Under a locale whose decimal separator is a comma, "1.5" is still 1.5
// (strtod would stop at the '.'): every weight is read back by value.
TEST(ApertureConfig, NumbersParseTheSameUnderEveryLocale) {
  std::string why;
  if (!SetCommaDecimalLocale(&why)) GTEST_SKIP() << why;
  // The hazard is real here: the C library reads "1.5" as 1 and "1,5" as 1.5.
  const double naive = strtod("1.5", nullptr), comma_read = strtod("1,5", nullptr);
  auto s = SettingsThroughRegistry(
      "{\"minAperture\":7,\"weights\":{\"a:1\":1.5,\"b:1\":0.25,\"c:1\":2.5e-3,"
      "\"d:1\":1E3,\"e:1\":123456.789}}");
  setlocale(LC_NUMERIC, "C");
  unsetenv("LOCPATH");
  EXPECT_EQ(naive, 1.0);
  EXPECT_EQ(comma_read, 1.5);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->min_aperture, 7u);
  EXPECT_EQ(s->weights, (std::map<std::string, double>{{"a:1", 1.5},
                                                       {"b:1", 0.25},
                                                       {"c:1", 2.5e-3},
                                                       {"d:1", 1000},
                                                       {"e:1", 123456.789}}));
}

TEST(ApertureConfig, BadConfigFromResolverFailsCallsNamingTheField) {
  Backend backend;
  TestChannel channel("badconfig", "");
  channel.SetAddresses(
      {backend.address()},
      "{\"loadBalancingConfig\":[{\"aperture\":{\"choiceCount\":1}}]}");
  grpc::Status status = channel.Call(2000);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.error_message().find("field:choiceCount"), std::string::npos)
      << status.error_message();
  EXPECT_EQ(backend.calls(), 0u);
}

// The same through a live channel: calls fail naming the field, and no
// backend sees a call.
TEST(ApertureConfig, MisspeltStableFromResolverFailsCallsNamingTheField) {
  Backend backend;
  TestChannel channel("badstable", "");
  channel.SetAddresses(
      {backend.address()},
      "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"stabel\"}}]}");
  grpc::Status status = channel.Call(2000);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.error_message().find("field:mode"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("stabel"), std::string::npos)
      << status.error_message();
  EXPECT_EQ(backend.calls(), 0u);
}

// gpr_log lines at ERROR while it lives (every severity reaches the
// function; only ERROR lines are kept).
class ErrorLog {
 public:
  ErrorLog() {
    lines_ = &kept_;
    gpr_set_log_function(&ErrorLog::Keep);
  }
  ~ErrorLog() {
    gpr_set_log_function(nullptr);
    lines_ = nullptr;
  }
  // Lines containing `what`.
  size_t Count(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const std::string& line : kept_) n += line.find(what) != std::string::npos;
    return n;
  }

 private:
  static void Keep(gpr_log_func_args* args) {
    if (args->severity != GPR_LOG_SEVERITY_ERROR || lines_ == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    lines_->push_back(args->message);
  }
  static std::mutex mu_;
  static std::vector<std::string>* lines_;
  std::vector<std::string> kept_;
};
std::mutex ErrorLog::mu_;
std::vector<std::string>* ErrorLog::lines_ = nullptr;

// A config from the resolver (DNS TXT, xDS) with ignored fields: calls
// succeed; each warning is logged once at ERROR, not again when the
// resolver repeats the config, and the warnings of a changed config are
// logged when it arrives; the status holds the current config's.
TEST(ApertureConfig, IgnoredFieldsAreLoggedOncePerConfig) {
  auto backends = StartBackends(2);
  const auto addresses = Addresses(backends);
  ErrorLog log;
  TestChannel channel("warned", "");
  const std::string first = Config("{\"mode\":\"mesh\",\"minApperture\":2}");
  channel.SetAddresses(addresses, first);
  ASSERT_TRUE(channel.Call().ok());
  channel.SetAddresses(addresses, first);  // a re-resolution, same config
  ASSERT_TRUE(WaitForState(channel.target(),
                           [](const StateView& s) { return s.resolver_updates >= 2; }));
  ASSERT_TRUE(channel.Call().ok());
  const std::string typo = "unknown field \"minApperture\" ignored (did you mean \"minAperture\"?)";
  EXPECT_EQ(log.Count(typo), 1u);
  StateView state;
  ASSERT_TRUE(Snapshot(channel.target(), &state));
  EXPECT_EQ(state.config_warnings, std::vector<std::string>{typo});

  channel.SetAddresses(addresses, Config("{\"mode\":\"mesh\",\"minApperture\":2,"
                                         "\"futureField\":{\"x\":1}}"));
  ASSERT_TRUE(WaitForState(channel.target(),
                           [](const StateView& s) { return s.config_warnings.size() == 2; }));
  ASSERT_TRUE(channel.Call().ok());
  EXPECT_EQ(log.Count(typo), 2u);  // the new config's, once
  EXPECT_EQ(log.Count("unknown field \"futureField\" ignored"), 1u);
  EXPECT_EQ(backends[0]->calls() + backends[1]->calls(), 3u);
}

TEST(ApertureApi, RegisterIsIdempotent) {
  EXPECT_EQ(aperture_is_registered(), 1);  // registered at load
  aperture_error err;
  EXPECT_EQ(aperture_register(&err), APERTURE_OK);
  EXPECT_EQ(aperture_register(nullptr), APERTURE_OK);
  EXPECT_EQ(aperture_is_registered(), 1);
}

TEST(ApertureApi, CoordinateErrors) {
  aperture_error err;
  EXPECT_EQ(aperture_set_coordinate(3, 3, &err), APERTURE_EINVAL);
  EXPECT_NE(std::string(err.message).find("peer_index"), std::string::npos);
  EXPECT_EQ(aperture_set_coordinate(0, 0, &err), APERTURE_ERANGE);
  EXPECT_NE(std::string(err.message).find("peer_count"), std::string::npos);
  EXPECT_EQ(aperture_set_coordinate(0, 2000000, &err), APERTURE_ERANGE);
  EXPECT_EQ(aperture_set_coordinate(1, 4, nullptr), APERTURE_OK);
  aperture_clear_coordinate();
}

TEST(ApertureCoordinate, HostnameOrdinal) {
  uint32_t v = 0;
  EXPECT_TRUE(aperture_lb::ParseHostnameOrdinal("web-3", &v));
  EXPECT_EQ(v, 3u);
  EXPECT_TRUE(aperture_lb::ParseHostnameOrdinal("my-app-12.svc.cluster.local", &v));
  EXPECT_EQ(v, 12u);
  EXPECT_FALSE(aperture_lb::ParseHostnameOrdinal("web", &v));
  EXPECT_FALSE(aperture_lb::ParseHostnameOrdinal("web-", &v));
  EXPECT_FALSE(aperture_lb::ParseHostnameOrdinal("web-x1", &v));
  EXPECT_FALSE(aperture_lb::ParseHostnameOrdinal("web-99999999999", &v));
}

// A channel named `name` with the aperture `config` and integer channel
// `args` makes one call; fills its snapshot and returns where its
// coordinate came from.
std::string CoordinateSourceOf(const std::vector<std::string>& addresses,
                               const std::string& name, const std::string& config,
                               const std::vector<std::pair<std::string, int>>& args,
                               StateView* out) {
  TestChannel channel(name, "{\"loadBalancingConfig\":[{\"aperture\":" +
                                config + "}]}", true, args);
  channel.SetAddresses(addresses);
  EXPECT_TRUE(channel.Call().ok());
  EXPECT_TRUE(Snapshot(channel.target(), out));
  return out->coordinate_source;
}

// Precedence config > API > environment > host name, seen in the status
// snapshot of a live channel; no coordinate falls back to random.
TEST(ApertureCoordinate, PrecedenceThroughLiveChannels) {
  Backend b1, b2, b3;
  std::vector<std::string> addresses = {b1.address(), b2.address(), b3.address()};
  auto source_of = [&](const std::string& name, const std::string& config,
                       StateView* out) {
    return CoordinateSourceOf(addresses, name, config, {}, out);
  };
  unsetenv("APERTURE_PEER_INDEX");
  unsetenv("APERTURE_PEER_COUNT");
  unsetenv("APERTURE_PEER_FROM_HOSTNAME");
  aperture_clear_coordinate();
  StateView s;
  EXPECT_EQ(source_of("coord-none", "{}", &s), "none");
  EXPECT_EQ(s.mode, "random");
  EXPECT_EQ(s.peer_count, 0u);
  EXPECT_NE(s.last_status.find("random aperture"), std::string::npos);

  setenv("APERTURE_PEER_INDEX", "2", 1);
  setenv("APERTURE_PEER_COUNT", "5", 1);
  EXPECT_EQ(source_of("coord-env", "{}", &s), "environment");
  EXPECT_EQ(s.peer_index, 2u);
  EXPECT_EQ(s.peer_count, 5u);

  ASSERT_EQ(aperture_set_coordinate(1, 4, nullptr), APERTURE_OK);
  EXPECT_EQ(source_of("coord-api", "{}", &s), "api");
  EXPECT_EQ(s.peer_index, 1u);
  EXPECT_EQ(s.peer_count, 4u);

  EXPECT_EQ(source_of("coord-config", "{\"peerIndex\":0,\"peerCount\":2}", &s),
            "config");
  EXPECT_EQ(s.peer_count, 2u);
  EXPECT_EQ(s.mode, "smooth");  // the policy's default mode
  aperture_clear_coordinate();

  // A malformed environment coordinate is skipped with a note.
  setenv("APERTURE_PEER_INDEX", "7", 1);
  EXPECT_EQ(source_of("coord-badenv", "{}", &s), "none");
  EXPECT_NE(s.last_status.find("APERTURE_PEER_INDEX=7 ignored"),
            std::string::npos) << s.last_status;
  unsetenv("APERTURE_PEER_INDEX");
  unsetenv("APERTURE_PEER_COUNT");
}

// APERTURE_ARG_PEER_INDEX / APERTURE_ARG_PEER_COUNT give one channel its
// own coordinate: above the process-wide ones, below the service config;
// invalid values are skipped with a note naming the arg.
TEST(ApertureCoordinate, ChannelArgsGiveOneChannelItsCoordinate) {
  Backend b1, b2, b3;
  std::vector<std::string> addresses = {b1.address(), b2.address(), b3.address()};
  auto source_of = [&](const std::string& name, const std::string& config,
                       std::vector<std::pair<std::string, int>> args,
                       StateView* out) {
    return CoordinateSourceOf(addresses, name, config, args, out);
  };
  unsetenv("APERTURE_PEER_INDEX");
  unsetenv("APERTURE_PEER_COUNT");
  unsetenv("APERTURE_PEER_FROM_HOSTNAME");
  ASSERT_EQ(aperture_set_coordinate(1, 4, nullptr), APERTURE_OK);
  StateView s;
  EXPECT_EQ(source_of("arg-coord", "{}",
                      {{APERTURE_ARG_PEER_INDEX, 3}, {APERTURE_ARG_PEER_COUNT, 40}}, &s),
            "channel_arg");
  EXPECT_EQ(s.peer_index, 3u);
  EXPECT_EQ(s.peer_count, 40u);
  // Another channel of the same process keeps the process coordinate.
  EXPECT_EQ(source_of("arg-none", "{}", {}, &s), "api");
  EXPECT_EQ(s.peer_index, 1u);
  // The service config still wins.
  EXPECT_EQ(source_of("arg-config", "{\"peerIndex\":0,\"peerCount\":2}",
                      {{APERTURE_ARG_PEER_INDEX, 3}, {APERTURE_ARG_PEER_COUNT, 40}}, &s),
            "config");
  EXPECT_EQ(s.peer_count, 2u);
  // Invalid: skipped, named in the status, the next source used.
  EXPECT_EQ(source_of("arg-bad-index", "{}",
                      {{APERTURE_ARG_PEER_INDEX, 5}, {APERTURE_ARG_PEER_COUNT, 5}}, &s),
            "api");
  EXPECT_NE(s.last_status.find("aperture.peer_index=5 ignored"), std::string::npos)
      << s.last_status;
  EXPECT_EQ(source_of("arg-bad-count", "{}",
                      {{APERTURE_ARG_PEER_INDEX, 0}, {APERTURE_ARG_PEER_COUNT, 0}}, &s),
            "api");
  EXPECT_NE(s.last_status.find("aperture.peer_count=0 ignored"), std::string::npos)
      << s.last_status;
  EXPECT_EQ(source_of("arg-half", "{}", {{APERTURE_ARG_PEER_INDEX, 1}}, &s), "api");
  EXPECT_NE(s.last_status.find("aperture.peer_count is missing"), std::string::npos)
      << s.last_status;
  aperture_clear_coordinate();
}

}  // namespace
}  // namespace aperture_test
