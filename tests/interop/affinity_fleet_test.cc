// The fleet's affinity scenario as a real run: four client processes send
// sticky, then hash, keys (--metadata RPC:KEY:VALUE) through eight
// servers; per key and client, the clients' own per-method stats show one
// server, inside that client's aperture (from its status server), and no
// call fails.
#include <sys/wait.h>

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

TEST(AffinityFleetTest, EachKeyStaysOnOneOwnerInsideItsClientsAperture) {
  std::string dir = TempDir("affinity_fleet");
  Child fleet(InteropBinary("fleet"),
              {"--scenario", "affinity", "--affinity", "sticky,hash", "--servers", "8",
               "--clients", "4", "--min-aperture", "3", "--out-dir", dir},
              dir + "/fleet.log");
  int status = fleet.Wait(180000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Json report = ReadJson(dir + "/report.json");
  ASSERT_TRUE(report);
  for (const char *kind : {"sticky", "hash"}) {
    SCOPED_TRACE(kind);
    const json_value *row = FindRow(io_json_get(io_json_get(report.get(), "affinity"), "rows"), "kind", kind);
    ASSERT_NE(nullptr, row);
    ASSERT_EQ(1, io_json_bool(io_json_get(row, "complete"), 0)) << io_json_string(io_json_get(row, "error"));
    EXPECT_GT(io_json_get_number(row, "ok", 0), 0);
    EXPECT_EQ(0, io_json_get_number(row, "failed", -1));
    const json_value *apertures = io_json_get(row, "apertures");
    ASSERT_EQ(4u, io_json_size(apertures));
    for (size_t c = 0; c < 4; c++) {
      const json_value *members = io_json_at(apertures, c);
      EXPECT_GT(io_json_size(members), 0u);
      EXPECT_LT(io_json_size(members), 8u) << "client " << c << " holds every server";
    }
    const json_value *keys = io_json_get(row, "keys");
    ASSERT_EQ(8u, io_json_size(keys));  // two keys per client
    for (size_t j = 0; j < io_json_size(keys); j++) {
      const json_value *k = io_json_at(keys, j);
      int client = static_cast<int>(io_json_get_number(k, "client", -1));
      SCOPED_TRACE(std::string(io_json_string(io_json_get(k, "key"))) + " from client " +
                   std::to_string(client));
      ASSERT_GE(client, 0);
      ASSERT_LT(client, 4);
      const json_value *calls = io_json_get(k, "calls");
      ASSERT_EQ(1u, io_json_size(calls)) << "served by more than one server";
      EXPECT_GT(io_json_number(io_json_at(calls, 0), 0), 0);
      std::string owner = io_json_key_at(calls, 0);
      EXPECT_EQ(owner, io_json_string(io_json_get(k, "owner")));
      std::set<std::string> members;
      const json_value *ap = io_json_at(apertures, static_cast<size_t>(client));
      for (size_t m = 0; m < io_json_size(ap); m++) members.insert(io_json_string(io_json_at(ap, m)));
      EXPECT_EQ(1u, members.count(owner)) << owner << " is outside the client's aperture";
    }
    EXPECT_EQ(8, io_json_get_number(row, "keys_one_owner", -1));
    EXPECT_EQ(8, io_json_get_number(row, "keys_in_aperture", -1));
  }
}

TEST(AffinityFleetTest, UnknownKindOrOneClientIsAUsageError) {
  std::string dir = TempDir("affinity_fleet_usage");
  for (const auto &args : {std::vector<std::string>{"--affinity", "ring"},
                           std::vector<std::string>{"--clients", "1"}}) {
    std::vector<std::string> argv = {"--scenario", "affinity", "--out-dir", dir};
    argv.insert(argv.end(), args.begin(), args.end());
    Child fleet(InteropBinary("fleet"), argv, dir + "/fleet.log");
    int status = fleet.Wait(30000);
    EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2) << args[0];
  }
}

}  // namespace
