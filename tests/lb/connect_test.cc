// When the policy connects, through real channels to real servers on
// 127.0.0.1: a new policy connects its aperture as soon as its first
// addresses arrive (the default, as round_robin does), and with
// "eagerConnect":false only on the first call (docs/design.md, "When the
// policy connects"). Until this release false was the default; these
// cases test both meanings of the field.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/registry/ap_registry.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

TEST(Connect, ANewPolicyConnectsOnItsFirstAddresses) {
  auto backends = StartBackends(3);
  TestChannel channel("connect-default", Config("{\"mode\":\"mesh\"}"));
  channel.SetAddresses(Addresses(backends));
  // No call made: every member READY over one connection, the channel READY.
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 3));
  ASSERT_TRUE(WaitFor([&] {
    return channel.channel()->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY;
  }));
  for (const auto& b : backends) {
    EXPECT_EQ(ServerConnectionCount(b->port()), 1) << b->address();
    EXPECT_EQ(b->calls(), 0u) << b->address();
  }
}

TEST(Connect, EagerConnectFalseConnectsOnTheFirstCall) {
  auto backends = StartBackends(3);
  TestChannel channel("connect-lazy",
                      Config("{\"mode\":\"mesh\",\"eagerConnect\":false}"));
  channel.SetAddresses(Addresses(backends));
  // The ring and a subchannel per member, none asked to connect.
  ASSERT_TRUE(WaitForState(channel.target(), [](const StateView& s) {
    if (s.subchannels_created != 3 || s.endpoints.size() != 3) return false;
    for (const EndpointView& e : s.endpoints) {
      if (e.connectivity != AP_CONN_IDLE) return false;
    }
    return true;
  }));
  for (const auto& b : backends) {
    EXPECT_EQ(ServerConnectionCount(b->port()), 0) << b->address();
  }
  EXPECT_EQ(channel.channel()->GetState(/*try_to_connect=*/false), GRPC_CHANNEL_IDLE);
  // The first call connects the whole aperture.
  ASSERT_TRUE(channel.Call().ok());
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), 3));
  for (const auto& b : backends) {
    EXPECT_EQ(ServerConnectionCount(b->port()), 1) << b->address();
  }
}

}  // namespace
}  // namespace aperture_test
