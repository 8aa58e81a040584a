// One member of a 1,000-endpoint channel goes down and comes back: every
// state the policy publishes meanwhile copies the aperture's entries (and
// the widened ones), never the ring's 1,000. Real channel, real servers on
// 127.0.0.1; the other 999 endpoints are ports of one listening server.
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/generic/async_generic_service.h>
#include <gtest/gtest.h>

#include "policy/lb/test_hooks.h"
#include "tests/lb/lb_test_util.h"

namespace aperture_test {
namespace {

constexpr int kEndpoints = 1000;
constexpr uint32_t kPeerCount = 300;
constexpr uint32_t kMinAperture = 3;

// One server listening on `count` ephemeral 127.0.0.1 ports: enough for a
// subchannel to reach READY on any of them.
class ManyPortServer {
 public:
  explicit ManyPortServer(int count) : ports_(count, 0) {
    grpc::ServerBuilder builder;
    builder.RegisterCallbackGenericService(&unimplemented_);
    for (int& port : ports_) {
      builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                               &port);
    }
    server_ = builder.BuildAndStart();
  }
  ~ManyPortServer() {
    if (server_ != nullptr) server_->Shutdown();
  }
  std::vector<std::string> Addresses() const {
    std::vector<std::string> out;
    for (int port : ports_) {
      if (port > 0) out.push_back("127.0.0.1:" + std::to_string(port));
    }
    return out;
  }

 private:
  std::vector<int> ports_;
  // Answers UNIMPLEMENTED; no call goes there, but a server needs a service.
  grpc::CallbackGenericService unimplemented_;
  std::unique_ptr<grpc::Server> server_;
};

TEST(FlapWork, OneMemberFlappingPublishesOnlyTheAperture) {
  ManyPortServer fillers(kEndpoints - 1);
  std::vector<std::string> addresses = fillers.Addresses();
  ASSERT_EQ(addresses.size(), static_cast<size_t>(kEndpoints - 1));
  auto backends = StartBackends(1);
  Backend* victim = backends[0].get();
  addresses.push_back(victim->address());

  // The coordinate whose aperture holds the victim (from the oracle).
  int peer_index = -1;
  size_t members = 0;
  for (uint32_t i = 0; i < kPeerCount && peer_index < 0; ++i) {
    auto expected = ExpectedMembers(addresses, oracle::Mode::kContinuous, i,
                                    kPeerCount, kMinAperture);
    if (expected.count(victim->address()) != 0) {
      peer_index = static_cast<int>(i);
      members = expected.size();
    }
  }
  ASSERT_GE(peer_index, 0);
  ASSERT_LT(members, 16u);

  TestChannel channel("flap-work", Config(
      "{\"mode\":\"continuous\",\"peerIndex\":" + std::to_string(peer_index) +
      ",\"peerCount\":" + std::to_string(kPeerCount) +
      ",\"minAperture\":" + std::to_string(kMinAperture) +
      ",\"minReady\":" + std::to_string(members) +  // losing one widens
      ",\"eagerConnect\":true}"), /*retries=*/false);
  channel.SetAddresses(addresses);
  ASSERT_TRUE(WaitAllMembersReady(channel.target(), members));
  StateView s;
  ASSERT_TRUE(Snapshot(channel.target(), &s));
  ASSERT_EQ(s.endpoints.size(), static_cast<size_t>(kEndpoints));
  ASSERT_TRUE(s.IsMember(victim->address()));
  ASSERT_EQ(s.widened, 0u);

  const aperture_lb::PublishWork before = aperture_lb::PublishWorkSoFar();
  victim->Stop();
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.widened >= 1 && v.Find(victim->address())->connectivity != 2;
  }, 30000));
  victim->Restart();
  ASSERT_TRUE(WaitForState(channel.target(), [&](const StateView& v) {
    return v.widened == 0 && v.MemberReady(victim->address());
  }, 30000));
  const aperture_lb::PublishWork after = aperture_lb::PublishWorkSoFar();

  const uint64_t publishes = after.publishes - before.publishes;
  const uint64_t entries = after.endpoint_entries - before.endpoint_entries;
  ASSERT_GE(publishes, 2u);  // down, widened, back, narrowed
  // Each publish holds the members and the widened ones: a handful, where
  // the whole ring would be 1,000 per publish.
  EXPECT_LE(entries, publishes * (members + 4))
      << publishes << " publishes, " << entries << " entries";
  // The member serves again (the other ports answer UNIMPLEMENTED).
  const uint64_t served = victim->calls();
  for (int i = 0; i < 200 && victim->calls() == served; ++i) channel.Call();
  EXPECT_GT(victim->calls(), served);
}

}  // namespace
}  // namespace aperture_test
