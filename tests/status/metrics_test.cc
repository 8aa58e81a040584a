// `aperturectl metrics` against a real client's status server: the output
// parses as Prometheus text and as OpenMetrics (the Prometheus client
// library's parsers, Debian's python3-prometheus-client) and its values
// are the ring's: coordinate, apertures, members, picks.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

std::string Runfile(const std::string &path) {
  const char *srcdir = getenv("TEST_SRCDIR");
  const char *ws = getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "aperture") + "/" + path;
}

int Shell(const std::string &cmd) {
  int rc = system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Sum of the samples named `name`, and their count.
double Sum(const json_value *samples, const std::string &name, int *count = nullptr) {
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < io_json_size(samples); i++) {
    const json_value *s = io_json_at(samples, i);
    if (name != io_json_string(io_json_at(s, 0))) continue;
    sum += io_json_number(io_json_at(s, 2), 0);
    n++;
  }
  if (count) *count = n;
  return sum;
}

TEST(MetricsTest, AperturectlMetricsParsesAsPrometheusTextWithTheRingsValues) {
  // 4 servers, peer 0 of 2, continuous, minAperture 2: 2 members.
  ServerSet servers(4, {}, "metrics");
  Child client(InteropBinary("client"),
               {"--target", servers.Target(), "--service-config",
                "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"continuous\","
                "\"minAperture\":2}}]}",
                "--peer-index", "0", "--peer-count", "2", "--calls", "200", "--rate", "200",
                "--linger-s", "30", "--status-port", "0"},
               servers.dir() + "/client.log");
  std::string status_addr = client.WaitLine("status listening ");
  ASSERT_FALSE(status_addr.empty());

  // Scrape until all 200 calls are done (the client lingers 30 s after).
  std::string text = servers.dir() + "/metrics.txt", parsed = servers.dir() + "/parsed.json";
  Json doc;
  for (int attempt = 0; attempt < 100; attempt++) {
    ASSERT_EQ(0, Shell("'" + Runfile("policy/status/aperturectl") + "' metrics " + status_addr +
                       " > '" + text + "'"));
    ASSERT_EQ(0, Shell("/usr/bin/python3 '" + Runfile("tests/status/parse_metrics.py") +
                       "' '" + text + "' > '" + parsed + "'"));
    doc = ReadJson(parsed);
    ASSERT_TRUE(doc);
    // ...and the health sweep (every second) has seen the members' calls
    int swept = 0;
    Sum(io_json_get(doc.get(), "samples"), "aperture_peer_failure_share", &swept);
    if (Sum(io_json_get(doc.get(), "samples"), "aperture_endpoint_picks_total") >= 200 &&
        swept == 1)
      break;
    usleep(100000);
  }
  const json_value *types = io_json_get(doc.get(), "types");
  const json_value *samples = io_json_get(doc.get(), "samples");
  EXPECT_STREQ("counter", io_json_string(io_json_get(types, "aperture_endpoint_picks")));
  EXPECT_STREQ("gauge", io_json_string(io_json_get(types, "aperture_endpoint_in_aperture")));
  EXPECT_STREQ("info", io_json_string(io_json_get(types, "aperture_ring")));

  EXPECT_EQ(0, Sum(samples, "aperture_peer_index"));
  EXPECT_EQ(2, Sum(samples, "aperture_peer_count"));
  EXPECT_EQ(2, Sum(samples, "aperture_min_aperture"));
  EXPECT_EQ(2, Sum(samples, "aperture_physical_aperture"));
  EXPECT_EQ(4, Sum(samples, "aperture_endpoints"));
  // the gray failures' bound: the default half of 2 members, none out
  EXPECT_EQ(50, Sum(samples, "aperture_max_ejection_percent"));
  EXPECT_EQ(1, Sum(samples, "aperture_max_members_out"));
  EXPECT_EQ(0, Sum(samples, "aperture_members_out"));
  // the sweep has seen 100 calls a member, none failed
  int swept = 0;
  EXPECT_EQ(0, Sum(samples, "aperture_peer_failure_share", &swept));
  EXPECT_EQ(1, swept);
  int n = 0;
  EXPECT_EQ(2, Sum(samples, "aperture_endpoint_in_aperture", &n));
  EXPECT_EQ(4, n);  // one sample per endpoint
  EXPECT_EQ(200, Sum(samples, "aperture_endpoint_picks_total"));
  EXPECT_EQ(0, Sum(samples, "aperture_endpoint_failures_total"));
  EXPECT_EQ(0, Sum(samples, "aperture_endpoint_outstanding"));
  EXPECT_GE(Sum(samples, "aperture_resolver_updates_total"), 1);
  EXPECT_STREQ("counter", io_json_string(io_json_get(types, "aperture_snapshot_builds")));
  // one address list, given once: one snapshot build, and it changed the ring
  EXPECT_EQ(1, Sum(samples, "aperture_snapshot_builds_total"));
  EXPECT_EQ(1, Sum(samples, "aperture_ring_rebuilds_total"));
  // the info sample carries the mode and the coordinate's source
  for (size_t i = 0; i < io_json_size(samples); i++) {
    const json_value *s = io_json_at(samples, i);
    if (std::string("aperture_ring_info") != io_json_string(io_json_at(s, 0))) continue;
    EXPECT_STREQ("continuous", io_json_string(io_json_get(io_json_at(s, 1), "mode")));
    EXPECT_STRNE("", io_json_string(io_json_get(io_json_at(s, 1), "coordinate_source")));
  }
  client.Terminate();
}

TEST(MetricsTest, MetricsOfAnUnreachableAddressFailsWithExitCode1) {
  EXPECT_EQ(1, Shell("'" + Runfile("policy/status/aperturectl") +
                     "' metrics 127.0.0.1:1 --timeout-ms 2000 > /dev/null 2>&1"));
  EXPECT_EQ(2, Shell("'" + Runfile("policy/status/aperturectl") +
                     "' metrics 127.0.0.1:1 --bogus > /dev/null 2>&1"));
}

}  // namespace
