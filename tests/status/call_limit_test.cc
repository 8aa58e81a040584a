// The bound on concurrent GetRingState calls, through real status servers
// on 127.0.0.1 and real channels: calls past the bound get
// RESOURCE_EXHAUSTED while admitted ones are still being computed (held
// inside a registry callback that blocks until the test releases it), and
// the server keeps answering other methods meanwhile.
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "grpc/health/v1/health.pb-c.h"
#include "policy/include/aperture.h"
#include "policy/registry/ap_registry.h"
#include "policy/status/ap_status_client.h"
#include "policy/status/ap_status_limits.h"
#include "tests/status/owned_server.h"
}

namespace {

constexpr char kGetRingState[] = "/aperture.v1.ApertureStatus/GetRingState";
constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";

// A registry instance whose callback blocks until released, so that the
// calls computing a snapshot stay in progress as long as the test needs.
class BlockingInstance {
 public:
  BlockingInstance() {
    if (ap_registry_add(&BlockingInstance::Snapshot, this, &entry_, nullptr) != AP_OK) abort();
  }
  ~BlockingInstance() {
    Release();
    ap_registry_remove(entry_);
  }
  // Waits (bounded) until `n` callbacks are blocked inside the instance.
  bool WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return entered_ >= n; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  static int Snapshot(void *ctx, ap_ring_state *out) {
    auto *self = static_cast<BlockingInstance *>(ctx);
    std::unique_lock<std::mutex> lock(self->mu_);
    self->entered_++;
    self->cv_.notify_all();
    self->cv_.wait(lock, [self] { return self->released_; });
    out->target = strdup("blocking-target");
    out->mode = strdup("continuous");
    out->last_status = strdup("");
    out->peer_target = strdup("");
    return out->target != nullptr && out->mode != nullptr ? AP_OK : AP_ENOMEM;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  int entered_ = 0;
  bool released_ = false;
  ap_registry_entry *entry_ = nullptr;
};

struct CallOutcome {
  int status = -1;
  std::string details;
  size_t rings = 0;
};

// One GetRingState call on a channel of its own.
CallOutcome GetRingState(int port) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  std::vector<uint8_t> bytes(aperture__v1__get_ring_state_request__get_packed_size(&req) + 1);
  size_t len = aperture__v1__get_ring_state_request__pack(&req, bytes.data());
  std::string address = "127.0.0.1:" + std::to_string(port);
  ap_status_call_result r;
  CallOutcome out;
  if (ap_status_call(address.c_str(), kGetRingState, bytes.data(), len, 60000, &r) != 0) {
    out.details = r.details;
    return out;
  }
  out.status = r.status;
  out.details = r.details;
  if (r.status == GRPC_STATUS_OK) {
    Aperture__V1__GetRingStateResponse *msg =
        aperture__v1__get_ring_state_response__unpack(nullptr, r.body_len, r.body);
    if (msg != nullptr) {
      out.rings = msg->n_rings;
      aperture__v1__get_ring_state_response__free_unpacked(msg, nullptr);
    }
  }
  ap_status_call_result_clear(&r);
  return out;
}

int HealthStatus(int port) {
  std::string address = "127.0.0.1:" + std::to_string(port);
  ap_status_call_result r;
  if (ap_status_call(address.c_str(), kHealthCheck, nullptr, 0, 60000, &r) != 0) return -1;
  int status = r.status;
  ap_status_call_result_clear(&r);
  return status;
}

// With the bound at `bound`: `bound` calls held inside the registry, one
// more is refused with a message naming the bound, health still answers,
// and once the held calls finish a new call is served again.
void ExpectBound(int port, int bound, bool check_health) {
  BlockingInstance blocking;
  std::vector<CallOutcome> held(bound);
  std::vector<std::thread> threads;
  for (int i = 0; i < bound; i++)
    threads.emplace_back([&held, i, port] { held[i] = GetRingState(port); });
  bool entered = blocking.WaitEntered(bound);
  EXPECT_TRUE(entered) << "the server did not compute " << bound << " calls at once";
  if (entered) {
    CallOutcome refused = GetRingState(port);
    EXPECT_EQ(refused.status, GRPC_STATUS_RESOURCE_EXHAUSTED) << refused.details;
    EXPECT_NE(refused.details.find("at most " + std::to_string(bound)), std::string::npos)
        << refused.details;
    EXPECT_NE(refused.details.find(AP_STATUS_MAX_CALLS_ENV), std::string::npos) << refused.details;
    if (check_health) {
      EXPECT_EQ(HealthStatus(port), GRPC_STATUS_OK);
    }
  }
  blocking.Release();
  for (auto &t : threads) t.join();
  for (const CallOutcome &c : held) {
    EXPECT_EQ(c.status, GRPC_STATUS_OK) << c.details;
    EXPECT_EQ(c.rings, 1u);
  }
  // The held calls' slots were given back before their answers were sent.
  CallOutcome again = GetRingState(port);
  EXPECT_EQ(again.status, GRPC_STATUS_OK) << again.details;
}

TEST(CallLimit, AdminServerRefusesCallsPastTheBound) {
  setenv(AP_STATUS_MAX_CALLS_ENV, "2", 1);
  aperture_status_server *server = nullptr;
  aperture_error err;
  ASSERT_EQ(aperture_status_server_start(nullptr, &server, &err), APERTURE_OK) << err.message;
  unsetenv(AP_STATUS_MAX_CALLS_ENV);
  ExpectBound(aperture_status_server_port(server), 2, true);
  aperture_status_server_stop(server);
}

TEST(CallLimit, DefaultBoundOnTheAdminServer) {
  unsetenv(AP_STATUS_MAX_CALLS_ENV);
  aperture_status_server *server = nullptr;
  aperture_error err;
  ASSERT_EQ(aperture_status_server_start(nullptr, &server, &err), APERTURE_OK) << err.message;
  ExpectBound(aperture_status_server_port(server), static_cast<int>(AP_STATUS_DEFAULT_MAX_CALLS),
              true);
  aperture_status_server_stop(server);
}

TEST(CallLimit, ApplicationOwnedServerRefusesCallsPastTheBound) {
  setenv(AP_STATUS_MAX_CALLS_ENV, "1", 1);
  grpc_init();
  grpc_server *server = grpc_server_create(nullptr, nullptr);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(nullptr);
  grpc_server_register_completion_queue(server, cq, nullptr);
  aperture_error err;
  aperture_status_service *svc = nullptr;
  ASSERT_EQ(aperture_status_register(server, &svc, &err), APERTURE_OK) << err.message;
  unsetenv(AP_STATUS_MAX_CALLS_ENV);
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(ServeOwned(server, svc, &port));
  ExpectBound(port, 1, false);
  StopOwned(server, cq, svc);
}

TEST(CallLimit, InvalidBoundFailsStartNamingTheVariable) {
  for (const char *bad : {"0", "-1", "abc", "4x", "1025", "99999999999999999999"}) {
    setenv(AP_STATUS_MAX_CALLS_ENV, bad, 1);
    aperture_status_server *server = nullptr;
    aperture_error err;
    EXPECT_EQ(aperture_status_server_start(nullptr, &server, &err), APERTURE_EINVAL) << bad;
    EXPECT_EQ(server, nullptr);
    EXPECT_NE(std::string(err.message).find(AP_STATUS_MAX_CALLS_ENV), std::string::npos)
        << err.message;
  }
  unsetenv(AP_STATUS_MAX_CALLS_ENV);
}

TEST(CallLimit, ParsesTheBound) {
  unsigned v = 0;
  char msg[160];
  EXPECT_EQ(ap_status_parse_max_calls(nullptr, &v, msg, sizeof msg), 0);
  EXPECT_EQ(v, AP_STATUS_DEFAULT_MAX_CALLS);
  EXPECT_EQ(ap_status_parse_max_calls("", &v, msg, sizeof msg), 0);
  EXPECT_EQ(v, AP_STATUS_DEFAULT_MAX_CALLS);
  EXPECT_EQ(ap_status_parse_max_calls("1", &v, msg, sizeof msg), 0);
  EXPECT_EQ(v, 1u);
  EXPECT_EQ(ap_status_parse_max_calls("1024", &v, msg, sizeof msg), 0);
  EXPECT_EQ(v, 1024u);
  EXPECT_EQ(ap_status_parse_max_calls(" 3", &v, msg, sizeof msg), -1);
  EXPECT_NE(std::string(msg).find("1..1024"), std::string::npos) << msg;
  EXPECT_EQ(ap_status_parse_max_calls("3", nullptr, msg, sizeof msg), -1);
  EXPECT_EQ(ap_status_parse_max_calls("x", &v, nullptr, 0), -1);
}

}  // namespace
