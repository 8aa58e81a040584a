// The fleet's unequal scenario, short (2 s per run): ten real servers of
// capacity 1 x8, 0.5, 0.25 doing CPU work per call, four real clients,
// round_robin and aperture with each pickMetric. Checks the report's
// shape (the runs[] rows' contract), that no call failed and that every
// server got calls; no timing target.
#include <sys/wait.h>

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

const double kCapacity[10] = {1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.25};

TEST(UnequalFleetTest, EveryModeAndMetricRowHasTheContractNoFailureAndCallsOnEveryServer) {
  std::string dir = TempDir("unequal_fleet");
  Child fleet(InteropBinary("fleet"),
              // 8 calls in flight per client (the scenario's 16 halved): a
              // saturated server's queue then stays far inside the 5 s
              // deadline even when the machine is busy.
              {"--scenario", "unequal", "--duration-s", "2", "--concurrency", "8", "--json",
               "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(120000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  const json_value *runs = io_json_get(report.get(), "runs");
  ASSERT_EQ(4u, io_json_size(runs));
  std::set<std::string> seen;
  for (size_t k = 0; k < io_json_size(runs); k++) {
    const json_value *r = io_json_at(runs, k);
    const char *mode = io_json_string(io_json_get(r, "mode"));
    const char *metric = io_json_string(io_json_get(r, "pick_metric"));
    ASSERT_NE(nullptr, mode);
    ASSERT_NE(nullptr, metric);
    SCOPED_TRACE(std::string(mode) + "/" + metric);
    seen.insert(std::string(mode) + "/" + metric);
    EXPECT_STREQ("unequal", io_json_string(io_json_get(r, "scenario")));
    ASSERT_EQ(1, io_json_bool(io_json_get(r, "complete"), 0))
        << io_json_string(io_json_get(r, "error"));
    // The contract: util_max_mean, p99_ms and failed are numbers.
    const json_value *umm = io_json_get(r, "util_max_mean");
    const json_value *p99 = io_json_get(r, "p99_ms");
    const json_value *failed = io_json_get(r, "failed");
    ASSERT_NE(nullptr, umm);
    ASSERT_NE(nullptr, p99);
    ASSERT_NE(nullptr, failed);
    EXPECT_GE(io_json_number(umm, -1), 1.0);  // max over mean of loaded servers
    EXPECT_GT(io_json_number(p99, -1), 0.0);
    EXPECT_EQ(0, io_json_number(failed, -1));
    EXPECT_GT(Num(r, "ok"), 0);
    EXPECT_GT(Num(r, "share_over_capacity_max"), 0);
    const json_value *servers = io_json_get(r, "servers");
    ASSERT_EQ(10u, io_json_size(servers));
    for (size_t i = 0; i < 10; i++) {
      const json_value *sv = io_json_at(servers, i);
      SCOPED_TRACE("s" + std::to_string(i));
      EXPECT_GT(Num(sv, "calls"), 0);
      EXPECT_EQ(kCapacity[i], Num(sv, "capacity"));
      EXPECT_GT(Num(sv, "utilization"), 0);  // every server did work
      EXPECT_LE(Num(sv, "utilization"), 1);
    }
  }
  EXPECT_EQ((std::set<std::string>{"round_robin/none", "smooth/outstanding", "smooth/peakEwma",
                                   "smooth/orca"}),
            seen);
}

TEST(UnequalFleetTest, OtherThanTenServersIsAUsageError) {
  std::string dir = TempDir("unequal_usage");
  Child fleet(InteropBinary("fleet"), {"--scenario", "unequal", "--servers", "6"},
              dir + "/fleet.log");
  int status = fleet.Wait(20000);
  ASSERT_TRUE(status >= 0 && WIFEXITED(status));
  EXPECT_EQ(2, WEXITSTATUS(status));
}

}  // namespace
