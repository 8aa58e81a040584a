// The fleet's peers scenario as a real run: client processes find their
// coordinate through the DNS responder (peerTarget), one joins and one
// leaves; the sessions changed at the servers equal the core's prediction,
// no call fails, and every client ends up with the same peer fingerprint.
#include <sys/wait.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

TEST(PeersFleetTest, JoinAndLeaveChangeTheSessionsTheCorePredicts) {
  std::string dir = TempDir("peers_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "peers", "--modes", "continuous,smooth", "--servers", "12",
               "--clients", "4", "--min-aperture", "3", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(120000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  for (const char *mode : {"continuous", "smooth"}) {
    SCOPED_TRACE(mode);
    const json_value *row = FindRow(io_json_get(report.get(), "peers"), "mode", mode);
    ASSERT_NE(nullptr, row);
    ASSERT_EQ(1, io_json_bool(io_json_get(row, "complete"), 0)) << io_json_string(io_json_get(row, "error"));
    EXPECT_GT(io_json_get_number(row, "ok", 0), 0);
    EXPECT_EQ(0, io_json_get_number(row, "failed", -1));
    for (const char *change : {"join", "leave"}) {
      SCOPED_TRACE(change);
      const json_value *c = io_json_get(row, change);
      ASSERT_NE(nullptr, c);
      EXPECT_EQ(1, io_json_bool(io_json_get(c, "settled"), 0));
      EXPECT_GT(io_json_get_number(c, "predicted", 0), 0);
      EXPECT_EQ(io_json_get_number(c, "predicted", -1), io_json_get_number(c, "changed", -2));
      EXPECT_EQ(io_json_get_number(c, "predicted_optimum", -1),
                io_json_get_number(c, "optimum", -2));
      EXPECT_GE(io_json_get_number(c, "changed", 0), io_json_get_number(c, "optimum", 1));
      EXPECT_GE(io_json_get_number(c, "agree_ms", -1), 0);
    }
  }
}

}  // namespace
