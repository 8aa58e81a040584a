// The fleet's peers scenario as a real run: client processes find their
// coordinate through DNS (dnsmasq; peerTarget), one joins and one
// leaves; the sessions changed at the servers equal the core's prediction,
// no call fails, and every client ends up with the same peer fingerprint.
// The measured changes are also the oracle's (fleet_oracle.h): the core's
// math against the definitions.
#include <sys/wait.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"
#include "tests/interop/fleet_oracle.h"

namespace {

TEST(PeersFleetTest, JoinAndLeaveChangeTheSessionsTheCorePredicts) {
  if (!NoDnsmasq().empty()) GTEST_SKIP() << NoDnsmasq();
  std::string dir = TempDir("peers_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "peers", "--modes", "continuous,smooth", "--servers", "12",
               "--clients", "4", "--min-aperture", "3", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(120000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << LogTails(dir);
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  // Servers s0..s11; clients 0..3, then 4 joins, then 1 leaves
  // (fleet_peers.c: the joiner is identity C, the leaver identity 1).
  std::vector<std::string> servers, four, five, leave;
  for (int i = 0; i < 12; i++) servers.push_back(fleet_oracle::ServerHost(i));
  for (int k = 0; k < 5; k++) {
    if (k < 4) four.push_back(fleet_oracle::PeerHost(k));
    five.push_back(fleet_oracle::PeerHost(k));
    if (k != 1) leave.push_back(fleet_oracle::PeerHost(k));
  }
  for (const char *mode : {"continuous", "smooth"}) {
    SCOPED_TRACE(mode);
    oracle::Mode oracle_mode;
    ASSERT_TRUE(fleet_oracle::ParseMode(mode, &oracle_mode));
    const oracle::SessionChange want_join =
        fleet_oracle::ClientChange(oracle_mode, servers, four, five, 3);
    const oracle::SessionChange want_leave =
        fleet_oracle::ClientChange(oracle_mode, servers, five, leave, 3);
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
      const oracle::SessionChange &want = std::string(change) == "join" ? want_join : want_leave;
      EXPECT_EQ(want.sessions_before, io_json_get_number(c, "sessions_before", -1)) << "oracle";
      EXPECT_EQ(want.changed, io_json_get_number(c, "changed", -1)) << "oracle";
      EXPECT_EQ(want.optimum, io_json_get_number(c, "optimum", -1)) << "oracle";
    }
  }
}

}  // namespace
