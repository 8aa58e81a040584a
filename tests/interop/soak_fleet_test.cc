// The fleet's soak scenario, short: real server and client processes for
// 15 s with s0 killed and restarted, s1 flapping in DNS, every client's
// status server queried in a loop and every call carrying a new sticky key.
// No call may fail on a live server, and each client's RSS growth after the
// warm-up stays within the bound the fleet checks (docs/hardening.md).
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

// Under AddressSanitizer freed memory sits in a quarantine of up to 256 MiB,
// so RSS says nothing about leaks there (ASan reports those itself).
#if defined(__SANITIZE_ADDRESS__)
constexpr const char *kRssBoundKib = "1048576";
#else
constexpr const char *kRssBoundKib = "8192";
#endif

TEST(SoakFleetTest, NoFailedCallOnLiveServersAndFlatClientMemory) {
  if (!NoDnsmasq().empty()) GTEST_SKIP() << NoDnsmasq();
  std::string dir = TempDir("soak_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "soak", "--duration-s", "15", "--rss-bound-kib", kRssBoundKib,
               "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(120000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  const json_value *soak = io_json_get(report.get(), "soak");
  ASSERT_NE(nullptr, soak);
  ASSERT_EQ(1, io_json_bool(io_json_get(soak, "complete"), 0))
      << io_json_string(io_json_get(soak, "error"));
  // Every disturbance happened at least once.
  EXPECT_GE(io_json_get_number(soak, "kills", 0), 1);
  EXPECT_GE(io_json_get_number(soak, "restarts", 0), 1);
  EXPECT_GE(io_json_get_number(soak, "flaps", 0), 1);
  EXPECT_GT(io_json_get_number(soak, "status_ok", 0), 0);
  EXPECT_EQ(0, io_json_get_number(soak, "status_failed", -1));
  // Calls went through; none failed except on the server being killed.
  EXPECT_GT(io_json_get_number(soak, "ok", 0), 0);
  EXPECT_EQ(0, io_json_get_number(soak, "failed_live", -1));
  EXPECT_EQ(io_json_get_number(soak, "failed", -1),
            io_json_get_number(soak, "failed_on_killed", -2));
  const double max_sessions = io_json_get_number(soak, "max_sessions", 0);
  const json_value *clients = io_json_get(soak, "per_client");
  ASSERT_EQ(3u, io_json_size(clients));
  for (size_t k = 0; k < io_json_size(clients); k++) {
    SCOPED_TRACE("client " + std::to_string(k));
    const json_value *c = io_json_at(clients, k);
    // The flood reached the sticky table (one fixed key would show 1) and
    // the table stayed within maxSessions.
    EXPECT_GT(io_json_get_number(c, "sessions_max", 0), 100);
    EXPECT_LE(io_json_get_number(c, "sessions_max", 1e9), max_sessions);
    const double start = io_json_get_number(c, "rss_start_kib", 0);
    const double end = io_json_get_number(c, "rss_end_kib", 0);
    EXPECT_GT(start, 0);
    EXPECT_GT(end, 0);
    EXPECT_LE(end - start, atof(kRssBoundKib));
  }
  EXPECT_EQ(1, io_json_bool(io_json_get(soak, "pass"), 0))
      << io_json_string(io_json_get(soak, "error"));
}

}  // namespace
