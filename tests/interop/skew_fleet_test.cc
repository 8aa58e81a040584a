// The fleet's skew scenario, short (5 s per run): eight real servers that
// report their own rate (ORCA), four real clients with 8, 1, 1, 1 calls in
// flight, round_robin and aperture with each pickMetric and with orca
// without the mechanism. Checks the report's rows (the contract: scenario,
// mode, pick_metric, calls.max_mean, failed, with the fair figure,
// utilization, connections and p99), that no call failed, and that the
// mechanism evens what the others leave uneven: by the geometry client 0's
// two servers get 8/2 of a client's calls and the mean is 11/8, so without
// it the busiest server is near 2.9x the mean; with it, from the end of
// the warm-up on, well under that (the bound leaves room for a busy
// machine: the target of 1.25 is for a full run, docs/unequal-clients.md).
#include <sys/wait.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

TEST(SkewFleetTest, EveryRowHasTheContractAndTheMechanismEvensTheLoad) {
  std::string dir = TempDir("skew_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "skew", "--client-rates", "8,1,1,1", "--modes", "round_robin,smooth",
               "--duration-s", "5", "--json", "--out-dir", dir, "--svg", dir + "/fleet.svg"},
              dir + "/fleet.log");
  int status = fleet.Wait(150000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  const json_value *runs = io_json_get(report.get(), "runs");
  ASSERT_EQ(5u, io_json_size(runs));
  std::map<std::string, const json_value *> row;
  for (size_t k = 0; k < io_json_size(runs); k++) {
    const json_value *r = io_json_at(runs, k);
    const char *mode = io_json_string(io_json_get(r, "mode"));
    const char *metric = io_json_string(io_json_get(r, "pick_metric"));
    ASSERT_NE(nullptr, mode);
    ASSERT_NE(nullptr, metric);
    SCOPED_TRACE(std::string(mode) + "/" + metric);
    row[std::string(mode) + "/" + metric] = r;
    EXPECT_STREQ("skew", io_json_string(io_json_get(r, "scenario")));
    ASSERT_EQ(1, io_json_bool(io_json_get(r, "complete"), 0))
        << io_json_string(io_json_get(r, "error"));
    const json_value *calls = io_json_get(r, "calls");
    ASSERT_NE(nullptr, calls);
    EXPECT_GE(Num(calls, "max_mean"), 1.0);
    EXPECT_GE(Num(io_json_get(r, "calls_steady"), "max_mean"), 1.0);
    EXPECT_GT(Num(r, "fair_max_mean"), 1.0);
    EXPECT_GE(Num(r, "util_max_mean"), 1.0);
    EXPECT_GT(Num(r, "connections_total"), 0);
    EXPECT_GT(Num(r, "p99_ms"), 0.0);
    EXPECT_EQ(0, Num(r, "failed"));
    EXPECT_GT(Num(r, "ok"), 0);
    const json_value *servers = io_json_get(r, "servers");
    ASSERT_EQ(8u, io_json_size(servers));
    for (size_t i = 0; i < 8; i++) {
      EXPECT_GT(Num(io_json_at(servers, i), "calls"), 0) << "s" << i;
    }
  }
  EXPECT_EQ((std::set<std::string>{"round_robin/none", "smooth/outstanding", "smooth/peakEwma",
                                   "smooth/orca", "smooth/orca-off"}),
            [&] {
              std::set<std::string> s;
              for (const auto &kv : row) s.insert(kv.first);
              return s;
            }());
  ASSERT_EQ(5u, row.size());
  for (const auto &kv : row) {
    std::printf("%-20s calls max/mean %.3f, from the warm-up on %.3f, connections %.0f\n",
                kv.first.c_str(), Num(io_json_get(kv.second, "calls"), "max_mean"),
                Num(io_json_get(kv.second, "calls_steady"), "max_mean"),
                Num(kv.second, "connections_total"));
  }
  // Without the mechanism client 0's servers carry about 2.9x the mean.
  EXPECT_GT(Num(io_json_get(row["smooth/orca-off"], "calls"), "max_mean"), 2.3);
  EXPECT_GT(Num(io_json_get(row["smooth/outstanding"], "calls"), "max_mean"), 2.3);
  // With it, once settled, far less, on more connections (client 0's).
  EXPECT_LT(Num(io_json_get(row["smooth/orca"], "calls_steady"), "max_mean"), 1.6);
  EXPECT_GT(Num(row["smooth/orca"], "connections_total"),
            Num(row["smooth/orca-off"], "connections_total"));
  EXPECT_LT(Num(io_json_get(row["round_robin/none"], "calls"), "max_mean"), 1.2);
}

TEST(SkewFleetTest, BadRatesAreAUsageError) {
  for (const char *bad : {"8,0,1", "x", "", "8,,1"}) {
    std::string dir = TempDir("skew_usage");
    Child fleet(InteropBinary("fleet"), {"--scenario", "skew", "--client-rates", bad},
                dir + "/fleet.log");
    int status = fleet.Wait(20000);
    ASSERT_TRUE(status >= 0 && WIFEXITED(status));
    EXPECT_EQ(2, WEXITSTATUS(status)) << bad;
  }
}

}  // namespace
