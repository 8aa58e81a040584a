// The status service's memory bound against clients that never read, and
// the admin server's connection cap, idle time and maximum age: a real
// admin server on 127.0.0.1, real registry entries, clients that speak
// HTTP/2 on raw sockets and never read (h2_nonreader.h) beside real gRPC
// clients. Limits are shortened through ap_status_server_testing.h so
// that every case takes seconds; waits are bounded polls for a state.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <grpc/status.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "policy/include/aperture.h"
#include "policy/status/ap_status_client.h"
#include "policy/status/ap_status_server_testing.h"
#include "tests/status/h2_nonreader.h"
}
#include "tests/status/fake_instance.h"

namespace {

constexpr char kGetRingState[] = "/aperture.v1.ApertureStatus/GetRingState";
constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";

// Polls `done` every 20 ms for up to `ms` (15 s by default).
bool WaitFor(const std::function<bool()>& done, int ms = 15000) {
  for (int i = 0; i < ms / 20; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

std::string Request(uint32_t max_endpoints, bool omit = false) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  req.max_endpoints = max_endpoints;
  req.omit_endpoints = omit;
  std::string bytes(aperture__v1__get_ring_state_request__get_packed_size(&req), '\0');
  aperture__v1__get_ring_state_request__pack(&req, reinterpret_cast<uint8_t*>(&bytes[0]));
  return bytes;
}

// A connection that starts `streams` GetRingState calls and never reads.
int NonReader(int port, const std::string& request, unsigned streams) {
  std::vector<uint8_t> burst(64 * 1024);
  size_t n = h2_nonreader_burst(kGetRingState, reinterpret_cast<const uint8_t*>(request.data()),
                                request.size(), streams, burst.data(), burst.size());
  EXPECT_GT(n, 0u);
  return h2_nonreader_connect(port, burst.data(), n);
}

struct Outcome {
  int status = -1;
  std::string details;
};

Outcome Call(int port, const char* method, const std::string& request) {
  std::string address = "127.0.0.1:" + std::to_string(port);
  ap_status_call_result r;
  Outcome out;
  if (ap_status_call(address.c_str(), method, reinterpret_cast<const uint8_t*>(request.data()),
                     request.size(), 5000, &r) == 0) {
    out.status = r.status;
    out.details = r.details;
  }
  ap_status_call_result_clear(&r);
  return out;
}

class MemoryBound : public ::testing::Test {
 protected:
  void Start(const ap_status_test_limits& limits) {
    ap_status_set_limits_for_testing(&limits);
    aperture_error err;
    ASSERT_EQ(aperture_status_server_start(nullptr, &server_, &err), APERTURE_OK) << err.message;
    ap_status_set_limits_for_testing(nullptr);
    port_ = aperture_status_server_port(server_);
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
    if (server_ != nullptr) aperture_status_server_stop(server_);
  }
  aperture_status_server* server_ = nullptr;
  int port_ = 0;
  std::vector<int> fds_;
};

// Clients that ask for 1,500-endpoint pages (about 100 KB each) and never
// read, one after another: the answers they leave with the server hold at
// most the budget (1 MiB here); once what is held leaves no room for
// another page, calls are refused at once with RESOURCE_EXHAUSTED naming
// the unread answers, while health still answers; when the clients go,
// the budget is free again and calls are served.
TEST_F(MemoryBound, ClientsThatNeverReadHoldAtMostTheBudget) {
  const size_t budget = 1u << 20;
  ASSERT_NO_FATAL_FAILURE(Start({budget, 0, 0, 0, 0}));
  RegisteredInstance ring("slow-readers", 1500);
  const std::string page = Request(1500);
  size_t most = 0;
  auto held = [&] {
    most = std::max(most, ap_status_server_held_bytes(server_));
    return ap_status_server_held_bytes(server_);
  };
  Outcome probe;
  for (int i = 0; i < 12; ++i) {
    const size_t before = held();
    int fd = NonReader(port_, page, 1);
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
    // Its answer is held, or it was refused and the budget stays: a
    // moment for it to be built either way.
    WaitFor([&] { return held() > before; }, 2000);
    probe = Call(port_, kGetRingState, page);
    held();
    if (probe.status == GRPC_STATUS_RESOURCE_EXHAUSTED) break;
  }
  EXPECT_EQ(probe.status, GRPC_STATUS_RESOURCE_EXHAUSTED) << probe.details;
  EXPECT_NE(probe.details.find("not yet read by their clients"), std::string::npos)
      << probe.details;
  EXPECT_GT(most, 300u * 1024) << "the non-readers' answers were not held";
  for (int i = 0; i < 25; ++i) {  // and stay there
    held();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_LE(most, budget);
  EXPECT_EQ(Call(port_, kHealthCheck, "").status, GRPC_STATUS_OK);

  for (int fd : fds_) close(fd);
  fds_.clear();
  EXPECT_TRUE(WaitFor([&] { return ap_status_server_held_bytes(server_) == 0; }))
      << ap_status_server_held_bytes(server_);
  Outcome served = Call(port_, kGetRingState, page);
  EXPECT_EQ(served.status, GRPC_STATUS_OK) << served.details;
}

// One answer larger than the whole budget is refused, asking for fewer
// endpoints; a smaller page of the same ring is served.
TEST_F(MemoryBound, AnAnswerLargerThanTheBudgetIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Start({256u << 10, 0, 0, 0, 0}));
  RegisteredInstance ring("big-ring", 5000);
  Outcome big = Call(port_, kGetRingState, Request(5000));
  EXPECT_EQ(big.status, GRPC_STATUS_RESOURCE_EXHAUSTED) << big.details;
  EXPECT_NE(big.details.find("ask for fewer endpoints"), std::string::npos) << big.details;
  Outcome small = Call(port_, kGetRingState, Request(100));
  EXPECT_EQ(small.status, GRPC_STATUS_OK) << small.details;
  EXPECT_TRUE(WaitFor([&] { return ap_status_server_held_bytes(server_) == 0; }));
}

// At the cap a new connection is closed as soon as it is accepted (a call
// on it fails), the others stay; once one of them goes, a new connection
// is taken again.
TEST_F(MemoryBound, ConnectionsPastTheCapAreClosedAtOnce) {
  ASSERT_NO_FATAL_FAILURE(Start({0, 3, 0, 0, 0}));
  RegisteredInstance ring("capped", 4);
  const std::string tiny = Request(0, true);
  for (int i = 0; i < 3; ++i) {
    int fd = NonReader(port_, tiny, 1);
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  ASSERT_TRUE(WaitFor([&] { return ap_status_server_connections(server_) == 3; }))
      << ap_status_server_connections(server_);
  int extra = NonReader(port_, tiny, 1);
  if (extra >= 0) {
    EXPECT_TRUE(WaitFor([&] { return h2_nonreader_closed_by_server(extra) == 1; }));
    close(extra);
  }
  EXPECT_GE(ap_status_server_refused_connections(server_), 1u);
  EXPECT_NE(Call(port_, kGetRingState, tiny).status, GRPC_STATUS_OK);
  for (int fd : fds_) EXPECT_EQ(h2_nonreader_closed_by_server(fd), 0) << "a held connection closed";
  EXPECT_LE(ap_status_server_connections(server_), 3u);

  close(fds_.back());
  fds_.pop_back();
  ASSERT_TRUE(WaitFor([&] { return ap_status_server_connections(server_) == 2; }));
  const size_t refused = ap_status_server_refused_connections(server_);
  Outcome served = Call(port_, kGetRingState, tiny);
  EXPECT_EQ(served.status, GRPC_STATUS_OK) << served.details;
  EXPECT_EQ(ap_status_server_refused_connections(server_), refused);
}

// A connection without calls is closed after the idle time; one whose
// client never reads (its calls stay open) after its maximum age and the
// grace, and what its answers held is given back.
TEST_F(MemoryBound, IdleAndAgedConnectionsAreClosed) {
  ASSERT_NO_FATAL_FAILURE(Start({0, 0, 300, 800, 400}));
  RegisteredInstance ring("aging", 3000);
  int idle = NonReader(port_, "", 0);  // the preface only: no call
  ASSERT_GE(idle, 0);
  fds_.push_back(idle);
  EXPECT_TRUE(WaitFor([&] { return h2_nonreader_closed_by_server(idle) == 1; }))
      << "an idle connection stayed open";

  int slow = NonReader(port_, Request(3000), 2);
  ASSERT_GE(slow, 0);
  fds_.push_back(slow);
  EXPECT_TRUE(WaitFor([&] { return ap_status_server_held_bytes(server_) > 100u * 1024; }));
  EXPECT_TRUE(WaitFor([&] { return h2_nonreader_closed_by_server(slow) == 1; }))
      << "a connection with calls its client never reads stayed open";
  EXPECT_TRUE(WaitFor([&] { return ap_status_server_held_bytes(server_) == 0; }))
      << ap_status_server_held_bytes(server_);
  EXPECT_TRUE(WaitFor([&] { return ap_status_server_connections(server_) == 0; }));
}

}  // namespace
