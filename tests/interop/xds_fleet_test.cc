// The fleet's xds scenario as a real run: client processes dial
// xds:///fleet-xds with a bootstrap file, the test ADS server's Cluster
// selects aperture and its EDS answer drops s1, then brings it back; the
// sessions changed at the servers equal the core's prediction and no call
// fails.
#include <sys/wait.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"
#include "tests/interop/fleet_oracle.h"

namespace {

TEST(XdsFleetTest, EdsRemovalAndAdditionChangeTheSessionsTheCorePredicts) {
  std::string dir = TempDir("xds_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "xds", "--points", "12:4:3", "--modes", "continuous,smooth",
               "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(180000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << LogTails(dir);
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  for (const char *mode : {"continuous", "smooth"}) {
    SCOPED_TRACE(mode);
    const json_value *row = FindRow(io_json_get(io_json_get(report.get(), "xds"), "rows"), "mode", mode);
    ASSERT_NE(nullptr, row);
    ASSERT_EQ(1, io_json_bool(io_json_get(row, "complete"), 0)) << io_json_string(io_json_get(row, "error"));
    EXPECT_GT(io_json_get_number(row, "ok", 0), 0);
    EXPECT_EQ(0, io_json_get_number(row, "failed", -1));
    for (const char *step : {"removal", "addition"}) {
      SCOPED_TRACE(step);
      const json_value *st = io_json_get(row, step);
      ASSERT_NE(nullptr, st);
      ASSERT_EQ(1, io_json_bool(io_json_get(st, "measured"), 0));
      EXPECT_EQ(1, io_json_bool(io_json_get(st, "settled"), 0));
      EXPECT_GT(io_json_get_number(st, "sessions_before", 0), 0);
      EXPECT_EQ(io_json_get_number(st, "predicted_before", -1),
                io_json_get_number(st, "sessions_before", -2));
      EXPECT_GT(io_json_get_number(st, "predicted_changed", 0), 0);
      EXPECT_EQ(io_json_get_number(st, "predicted_changed", -1),
                io_json_get_number(st, "changed", -2));
      EXPECT_EQ(io_json_get_number(st, "predicted_optimum", -1),
                io_json_get_number(st, "optimum", -2));
      EXPECT_GE(io_json_get_number(st, "changed", 0), io_json_get_number(st, "optimum", 1));
    }
    fleet_oracle::ExpectChurnRowAsTheOracleSays(row);  // the definitions' count too
  }
}

// A mode the Cluster cannot select is a usage error, found before any
// process starts.
TEST(XdsFleetTest, NonApertureModeIsAUsageError) {
  std::string dir = TempDir("xds_fleet_usage");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "xds", "--modes", "round_robin", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(30000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2);
}

}  // namespace
