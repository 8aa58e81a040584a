// The options of a client the runner stops itself (fleet_client): the
// given fields, the shared pacing, and nothing optional set.
#include <string>

#include <gtest/gtest.h>

#include "interop/fleet/fleet_client.h"

namespace {

TEST(FleetClientOptsTest, UntilStoppedKeepsTheGivenFieldsAndLeavesTheOptionalOnesOut) {
  fleet_client_opts o =
      io_fleet_client_until_stopped("bin", "dns:///x:1", "{}", "20", "/tmp/summary.json");
  EXPECT_EQ(std::string(o.bin), "bin");
  EXPECT_EQ(std::string(o.target), "dns:///x:1");
  EXPECT_EQ(std::string(o.service_config), "{}");
  EXPECT_EQ(std::string(o.rate), "20");
  EXPECT_EQ(std::string(o.summary_file), "/tmp/summary.json");
  EXPECT_EQ(std::string(o.duration_s), "3600");
  EXPECT_EQ(std::string(o.concurrency), "2");
  EXPECT_EQ(std::string(o.linger_s), "0");
  EXPECT_EQ(o.peer_index, nullptr);
  EXPECT_EQ(o.peer_count, nullptr);
  EXPECT_EQ(o.max_backoff_ms, nullptr);
  EXPECT_EQ(o.dns_min_interval_ms, nullptr);
  EXPECT_EQ(o.status_server, 0);
  EXPECT_EQ(o.extra, nullptr);
  EXPECT_EQ(o.unique_metadata, nullptr);
}

TEST(FleetClientOptsTest, AMissingFieldStaysMissingAndTheClientDoesNotStart) {
  fleet_client_opts o = io_fleet_client_until_stopped(nullptr, "dns:///x:1", "{}", "20", "s.json");
  EXPECT_EQ(o.bin, nullptr);
  EXPECT_EQ(io_fleet_client_start(&o, "/dev/null"), nullptr);
}

}  // namespace
