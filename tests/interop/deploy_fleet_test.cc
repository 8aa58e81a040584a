// The fleet's deploy scenario as a real run: client processes resolve the
// servers through DNS (dnsmasq) while every server is replaced in turn by
// one at a new address; at every step the sessions changed at the servers
// equal the core's prediction for the same address strings, the clients
// settle before the old server stops, and no call fails. For continuous and
// smooth the measured changes are also the oracle's (fleet_oracle.h), so
// the core's math is checked against the definitions.
#include <sys/wait.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"
#include "tests/interop/fleet_oracle.h"

namespace {

TEST(DeployFleetTest, RollingReplacementChangesTheSessionsTheCorePredicts) {
  if (!NoDnsmasq().empty()) GTEST_SKIP() << NoDnsmasq();
  std::string dir = TempDir("deploy_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "deploy", "--servers", "6", "--clients", "3", "--min-aperture", "2",
               "--modes", "continuous,smooth,stable", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(240000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << LogTails(dir);
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
    oracle::Mode oracle_mode;
    const bool oracle_covers = fleet_oracle::ParseMode(mode, &oracle_mode);
    for (int i = 0; i < 6; i++) {
      SCOPED_TRACE("step " + std::to_string(i));
      const json_value *st = io_json_at(steps, static_cast<size_t>(i));
      EXPECT_EQ(1, io_json_bool(io_json_get(st, "settled"), 0));
      // every replaced server had sessions and its replacement gets some
      EXPECT_GT(Num(st, "optimum"), 0);
      EXPECT_EQ(Num(st, "predicted"), Num(st, "changed"));
      EXPECT_GE(Num(st, "changed"), Num(st, "optimum"));
      if (!oracle_covers) continue;
      // Step i swaps s<i> (slot i) for r<i> (slot 6 + i); r<0>..r<i-1> are in.
      std::vector<std::string> before, after;
      for (int pos = 0; pos < 6; pos++) {
        before.push_back(fleet_oracle::ServerHost(pos < i ? 6 + pos : pos));
        after.push_back(fleet_oracle::ServerHost(pos <= i ? 6 + pos : pos));
      }
      const oracle::SessionChange want =
          fleet_oracle::ServerChange(oracle_mode, before, after, 3, 2);
      EXPECT_EQ(want.changed, Num(st, "changed")) << "oracle";
      EXPECT_EQ(want.optimum, Num(st, "optimum")) << "oracle";
      if (i == 0) {
        EXPECT_EQ(want.sessions_before, Num(row, "sessions_before")) << "oracle";
      }
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
