// The seam's small functions against gRPC itself: the names it reads from
// gRPC's internal headers, the address weight attribute, and the execution
// context it gives a thread.
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <grpc/grpc.h>

#include "policy/lb/grpc_seam/grpc_seam.h"
#include "src/core/ext/filters/client_channel/client_channel.h"
#include "src/core/lib/address_utils/parse_address.h"
#include "src/core/lib/iomgr/closure.h"
#include "src/core/lib/iomgr/exec_ctx.h"

namespace aperture_lb {
namespace {

TEST(GrpcSeam, StateTextIsGrpcsNameAndUnknownOutsideTheEnum) {
  EXPECT_STREQ(StateText(GRPC_CHANNEL_IDLE), "IDLE");
  EXPECT_STREQ(StateText(GRPC_CHANNEL_CONNECTING), "CONNECTING");
  EXPECT_STREQ(StateText(GRPC_CHANNEL_READY), "READY");
  EXPECT_STREQ(StateText(GRPC_CHANNEL_TRANSIENT_FAILURE), "TRANSIENT_FAILURE");
  EXPECT_STREQ(StateText(GRPC_CHANNEL_SHUTDOWN), "SHUTDOWN");
  EXPECT_STREQ(StateText(static_cast<grpc_connectivity_state>(-1)), "UNKNOWN");
  EXPECT_STREQ(StateText(static_cast<grpc_connectivity_state>(5)), "UNKNOWN");
}

TEST(GrpcSeam, ChannelTargetUriReadsTheArgTheClientChannelSets) {
  grpc_core::ChannelArgs args;
  EXPECT_FALSE(ChannelTargetUri(args).has_value());
  args = args.Set(GRPC_ARG_SERVER_URI, "dns:///svc.example:443");
  ASSERT_TRUE(ChannelTargetUri(args).has_value());
  EXPECT_EQ(std::string(*ChannelTargetUri(args)), "dns:///svc.example:443");
}

// The weight attribute as gRPC 1.51's xDS attaches it (xds_endpoint.cc,
// xds_cluster_resolver.cc): read back exactly, and none on a plain address.
TEST(GrpcSeam, ResolverWeightReadsTheAddressWeightAttribute) {
  auto sockaddr = grpc_core::StringToSockaddr("127.0.0.1:443");
  ASSERT_TRUE(sockaddr.ok());
  grpc_core::ServerAddress plain(*sockaddr, grpc_core::ChannelArgs());
  EXPECT_FALSE(ResolverWeight(plain).has_value());
  for (uint32_t w : {1u, 7u, 4294967295u}) {
    grpc_core::ServerAddress weighted = plain.WithAttribute(
        grpc_core::ServerAddressWeightAttribute::kServerAddressWeightAttributeKey,
        std::make_unique<grpc_core::ServerAddressWeightAttribute>(w));
    ASSERT_TRUE(ResolverWeight(weighted).has_value()) << w;
    EXPECT_EQ(*ResolverWeight(weighted), w);
  }
}

void SetFlag(void* arg, grpc_error_handle /*error*/) {
  *static_cast<bool*>(arg) = true;
}

TEST(GrpcSeam, RunInGrpcContextGivesAThreadAContextAndRunsWhatItQueued) {
  grpc_init();
  std::thread([] {
    EXPECT_EQ(grpc_core::ExecCtx::Get(), nullptr);  // a thread of our own
    bool ran = false;
    grpc_closure closure;
    RunInGrpcContext([&]() {
      ASSERT_NE(grpc_core::ExecCtx::Get(), nullptr);
      grpc_core::ExecCtx::Run(DEBUG_LOCATION,
                              GRPC_CLOSURE_INIT(&closure, SetFlag, &ran,
                                                nullptr),
                              absl::OkStatus());
      EXPECT_FALSE(ran);  // queued on the context, not run inline
      RunInGrpcContext([]() {
        EXPECT_NE(grpc_core::ExecCtx::Get(), nullptr);  // nests
      });
    });
    EXPECT_TRUE(ran);
    EXPECT_EQ(grpc_core::ExecCtx::Get(), nullptr);
  }).join();
  grpc_shutdown();
}

}  // namespace
}  // namespace aperture_lb
