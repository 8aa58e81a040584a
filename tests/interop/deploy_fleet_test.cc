// The fleet's deploy scenario as a real run: client processes resolve the
// servers through the DNS stub while every server is replaced in turn by
// one at a new address; at every step the sessions changed at the servers
// equal the core's prediction for the same address strings, the clients
// settle before the old server stops, and no call fails.
#include <sys/wait.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

TEST(DeployFleetTest, RollingReplacementChangesTheSessionsTheCorePredicts) {
  std::string dir = TempDir("deploy_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "deploy", "--servers", "6", "--clients", "3", "--min-aperture", "2",
               "--modes", "continuous,smooth,stable", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(240000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  for (const char *mode : {"continuous", "smooth", "stable"}) {
    SCOPED_TRACE(mode);
    const json_value *row = FindRow(io_json_get(report.get(), "deploy"), "mode", mode);
    ASSERT_NE(nullptr, row);
    ASSERT_EQ(1, io_json_bool(io_json_get(row, "complete"), 0))
        << io_json_string(io_json_get(row, "error"));
    EXPECT_GT(Num(row, "ok"), 0);
    EXPECT_EQ(0, Num(row, "failed"));
    EXPECT_GT(Num(row, "sessions_before"), 0);
    EXPECT_EQ(Num(row, "predicted_before"), Num(row, "sessions_before"));
    const json_value *steps = io_json_get(row, "steps");
    ASSERT_EQ(6u, io_json_size(steps));
    for (size_t i = 0; i < 6; i++) {
      SCOPED_TRACE("step " + std::to_string(i));
      const json_value *st = io_json_at(steps, i);
      EXPECT_EQ(1, io_json_bool(io_json_get(st, "settled"), 0));
      // every replaced server had sessions and its replacement gets some
      EXPECT_GT(Num(st, "optimum"), 0);
      EXPECT_EQ(Num(st, "predicted"), Num(st, "changed"));
      EXPECT_GE(Num(st, "changed"), Num(st, "optimum"));
    }
    EXPECT_EQ(Num(row, "predicted"), Num(row, "changed"));
    EXPECT_GT(Num(row, "final_calls"), 0);  // the replacements serve the calls
  }
}

// A mode other than aperture's is a usage error, found before any process
// starts.
TEST(DeployFleetTest, NonApertureModeIsAUsageError) {
  std::string dir = TempDir("deploy_fleet_usage");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "deploy", "--modes", "round_robin", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(30000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2);
}

}  // namespace
