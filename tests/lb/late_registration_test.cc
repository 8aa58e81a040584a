// Registering after gRPC built its configuration returns APERTURE_ESTATE
// instead of aborting. Runs with APERTURE_NO_AUTOREGISTER=1 (main re-execs
// itself with it) so that loading the library does not register first.
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <gtest/gtest.h>

#include "aperture.h"

namespace {

TEST(LateRegistration, ReturnsEstateWithoutAbort) {
  ASSERT_EQ(aperture_is_registered(), 0) << "auto-registration not disabled";
  grpc_init();
  // Creating a channel makes gRPC build its core configuration.
  grpc_channel_credentials* creds = grpc_insecure_credentials_create();
  grpc_channel* channel = grpc_channel_create("127.0.0.1:1", creds, nullptr);
  grpc_channel_credentials_release(creds);
  aperture_error err;
  EXPECT_EQ(aperture_register(&err), APERTURE_ESTATE);
  EXPECT_EQ(err.code, APERTURE_ESTATE);
  EXPECT_NE(std::string(err.message).find("too late"), std::string::npos)
      << err.message;
  EXPECT_EQ(aperture_is_registered(), 0);
  // Still no abort on a second try, and the process keeps working.
  EXPECT_EQ(aperture_register(nullptr), APERTURE_ESTATE);
  grpc_channel_destroy(channel);
  grpc_shutdown();
}

}  // namespace

int main(int argc, char** argv) {
  const char* off = getenv("APERTURE_NO_AUTOREGISTER");
  if (off == nullptr || std::string(off) != "1") {
    setenv("APERTURE_NO_AUTOREGISTER", "1", 1);
    execv("/proc/self/exe", argv);
    perror("execv");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
