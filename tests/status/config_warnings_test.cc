// Config warnings (fields the aperture config had and the policy ignored)
// from a real client process to every output: the calls succeed, the
// client logs each warning once at ERROR, and aperturectl's table, its JSON
// and its metrics show them. A status server's warnings are escaped like
// its other strings.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "policy/include/aperture.h"
}
#include "tests/interop/fleet_helper.h"
#include "tests/status/fake_instance.h"

namespace {

constexpr char kTypo[] =
    "unknown field \"minApperture\" ignored (did you mean \"minAperture\"?)";
constexpr char kFuture[] = "unknown field \"futureField\" ignored";

std::string Runfile(const std::string &path) {
  const char *srcdir = getenv("TEST_SRCDIR");
  const char *ws = getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "aperture") + "/" + path;
}

// Runs `cmd` through the shell; its stdout, and its exit code in *rc.
std::string Run(const std::string &cmd, int *rc) {
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string Ctl(const std::string &args, int *rc) {
  return Run("'" + Runfile("policy/status/aperturectl") + "' " + args + " 2>&1", rc);
}

// `aperturectl metrics` of `addr` parsed by both Prometheus parsers
// (tests/status/parse_metrics.py); an empty Json when either failed.
Json ParsedMetrics(const std::string &addr, const std::string &dir) {
  int rc = -1;
  const std::string text = dir + "/metrics.txt", parsed = dir + "/parsed.json";
  Run("'" + Runfile("policy/status/aperturectl") + "' metrics " + addr + " > '" + text + "'",
      &rc);
  if (rc != 0) return Json();
  Run("/usr/bin/python3 '" + Runfile("tests/status/parse_metrics.py") + "' '" + text + "' > '" +
          parsed + "'",
      &rc);
  return rc == 0 ? ReadJson(parsed) : Json();
}

// The `warning` labels of the aperture_config_warning_info samples, and
// the value of the aperture_config_warnings gauge (-1 when absent).
std::vector<std::string> WarningLabels(const json_value *samples, double *gauge) {
  std::vector<std::string> out;
  *gauge = -1;
  for (size_t i = 0; i < io_json_size(samples); i++) {
    const json_value *s = io_json_at(samples, i);
    const std::string name = io_json_string(io_json_at(s, 0));
    if (name == "aperture_config_warnings") *gauge = io_json_number(io_json_at(s, 2), -1);
    if (name != "aperture_config_warning_info") continue;
    EXPECT_EQ(1, io_json_number(io_json_at(s, 2), 0));
    out.push_back(io_json_string(io_json_get(io_json_at(s, 1), "warning")));
  }
  return out;
}

size_t Count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

std::string ReadFile(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The contract, from a real client: a misspelt and a future field
// are ignored, the calls succeed, and the warnings reach the log (once
// each, at ERROR, no trace flag), aperturectl's table and JSON, and the
// metrics.
TEST(ConfigWarnings, ReachTheLogTheStatusAperturectlAndTheMetrics) {
  ServerSet servers(3, {}, "config_warnings");
  Child client(InteropBinary("client"),
               {"--target", servers.Target(), "--service-config",
                "{\"loadBalancingConfig\":[{\"aperture\":{\"minApperture\":2,"
                "\"futureField\":{\"x\":1}}}]}",
                "--peer-index", "0", "--peer-count", "1", "--calls", "100", "--rate", "200",
                "--linger-s", "30", "--status-port", "0"},
               servers.dir() + "/client.log");
  const std::string addr = client.WaitLine("status listening ");
  ASSERT_FALSE(addr.empty());

  // The calls: all 100 picked, none failed (aperturectl's JSON).
  Json status;
  double picks = 0, failures = -1;
  for (int attempt = 0; attempt < 100 && picks < 100; attempt++) {
    int rc = -1;
    status.reset(io_json_parse(Ctl("status " + addr + " --json", &rc).c_str(), nullptr, 0));
    ASSERT_EQ(0, rc);
    ASSERT_TRUE(status);
    const json_value *ring = io_json_at(io_json_get(status.get(), "rings"), 0);
    picks = 0;
    failures = 0;
    const json_value *endpoints = io_json_get(ring, "endpoints");
    for (size_t e = 0; e < io_json_size(endpoints); e++) {
      picks += Num(io_json_at(endpoints, e), "picks");
      failures += Num(io_json_at(endpoints, e), "failures");
    }
    if (picks < 100) usleep(100000);
  }
  EXPECT_EQ(100, picks);
  EXPECT_EQ(0, failures);

  // JSON: both warnings, in name order.
  const json_value *ring = io_json_at(io_json_get(status.get(), "rings"), 0);
  const json_value *warnings = io_json_get(ring, "config_warnings");
  ASSERT_EQ(2u, io_json_size(warnings));
  EXPECT_STREQ(kFuture, io_json_string(io_json_at(warnings, 0)));
  EXPECT_STREQ(kTypo, io_json_string(io_json_at(warnings, 1)));
  EXPECT_EQ(12, Num(ring, "min_aperture"));  // the misspelt value is not read

  // Table: one line each.
  int rc = -1;
  const std::string table = Ctl("status " + addr, &rc);
  ASSERT_EQ(0, rc) << table;
  EXPECT_EQ(1u, Count(table, std::string("\n  config_warning ") + kFuture + "\n")) << table;
  EXPECT_EQ(1u, Count(table, std::string("\n  config_warning ") + kTypo + "\n")) << table;

  // Metrics: the gauge counts them, one info sample carries each.
  Json metrics = ParsedMetrics(addr, servers.dir());
  ASSERT_TRUE(metrics);
  double gauge = -1;
  EXPECT_EQ((std::vector<std::string>{kFuture, kTypo}),
            WarningLabels(io_json_get(metrics.get(), "samples"), &gauge));
  EXPECT_EQ(2, gauge);
  EXPECT_STREQ("info", io_json_string(io_json_get(io_json_get(metrics.get(), "types"),
                                                   "aperture_config_warning")));

  // The log: each warning once, at ERROR (gpr_log's "E" line).
  const std::string log = ReadFile(servers.dir() + "/client.log");
  EXPECT_EQ(1u, Count(log, kTypo)) << log;
  EXPECT_EQ(1u, Count(log, kFuture)) << log;
  const size_t at = log.find(kTypo);
  ASSERT_NE(std::string::npos, at);
  const size_t line = log.rfind('\n', at);
  EXPECT_EQ('E', log[line == std::string::npos ? 0 : line + 1]) << log;
  client.Terminate();
}

// An application's warning text may hold anything: the server repairs it
// to UTF-8, the table escapes control bytes, the JSON stays valid, a
// newline cannot start a metric.
TEST(ConfigWarnings, AServersWarningsAreEscapedInEveryOutput) {
  aperture_status_server *server = nullptr;
  aperture_error err;
  ASSERT_EQ(APERTURE_OK, aperture_status_server_start(nullptr, &server, &err)) << err.message;
  const std::string addr = "127.0.0.1:" + std::to_string(aperture_status_server_port(server));
  const std::string injected = "field \"a\\b\"\nfake_metric{x=\"1\"} 7";
  {
    RegisteredInstance instance("dns:///warned.svc:443", 2);
    instance.SetConfigWarnings({"evil \x1b[2J\x07\xff end", injected});
    int rc = -1;
    const std::string table = Ctl("status " + addr, &rc);
    ASSERT_EQ(0, rc) << table;
    EXPECT_EQ(std::string::npos, table.find('\x1b'));
    EXPECT_EQ(std::string::npos, table.find('\x07'));
    // The server sends UTF-8 only: the bad byte arrives as U+FFFD.
    EXPECT_NE(std::string::npos,
              table.find("  config_warning evil \\x1b[2J\\x07\xef\xbf\xbd end\n"))
        << table;
    EXPECT_NE(std::string::npos, table.find("  config_warning field \"a\\\\b\"\\x0afake_metric"))
        << table;
    const std::string json = Ctl("status " + addr + " --json", &rc);
    ASSERT_EQ(0, rc) << json;
    Json parsed(io_json_parse(json.c_str(), nullptr, 0));
    ASSERT_TRUE(parsed) << json;
    const json_value *warnings =
        io_json_get(io_json_at(io_json_get(parsed.get(), "rings"), 0), "config_warnings");
    ASSERT_EQ(2u, io_json_size(warnings));
    EXPECT_EQ(injected, io_json_string(io_json_at(warnings, 1)));
    instance.SetConfigWarnings({injected});
    Json metrics = ParsedMetrics(addr, TempDir("warned_metrics"));
    ASSERT_TRUE(metrics);
    double gauge = -1;
    EXPECT_EQ(std::vector<std::string>{injected},
              WarningLabels(io_json_get(metrics.get(), "samples"), &gauge));
    EXPECT_EQ(1, gauge);
    const json_value *samples = io_json_get(metrics.get(), "samples");
    for (size_t i = 0; i < io_json_size(samples); i++) {
      EXPECT_STRNE("fake_metric", io_json_string(io_json_at(io_json_at(samples, i), 0)));
    }
  }
  aperture_status_server_stop(server);
}

}  // namespace
