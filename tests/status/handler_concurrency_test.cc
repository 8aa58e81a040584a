// Response building under concurrency, without gRPC (so ThreadSanitizer sees
// every access): readers build GetRingState responses while instances are
// created, changed and destroyed. Every response must decode and be whole.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <grpc/status.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "policy/status/ap_status_handler.h"
}
#include "tests/status/fake_instance.h"

namespace {

TEST(HandlerConcurrency, ResponsesStayWholeWhileInstancesChurn) {
  constexpr int kChurners = 2, kReaders = 2, kRounds = 150;
  RegisteredInstance steady("steady", 30);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kChurners; t++) {
    threads.emplace_back([t] {
      for (int i = 0; i < kRounds; i++) {
        RegisteredInstance inst("churn-" + std::to_string(t) + "-" + std::to_string(i),
                                static_cast<size_t>(i % 40));
        inst.SetRebuilds(static_cast<uint64_t>(i));
        std::this_thread::yield();
      }
    });
  }
  for (int t = 0; t < kReaders; t++) {
    threads.emplace_back([t, &failures] {
      Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
      req.max_endpoints = 25;
      uint8_t bytes[64];
      for (int i = 0; i < kRounds; i++) {
        req.target_filter = const_cast<char *>(t == 0 ? "" : "churn-1");
        size_t len = aperture__v1__get_ring_state_request__pack(&req, bytes);
        ap_status_reply reply;
        ap_status_handle_get_ring_state(bytes, len, &reply);
        if (reply.code != GRPC_STATUS_OK) {
          failures++;
          ap_status_reply_clear(&reply);
          continue;
        }
        Aperture__V1__GetRingStateResponse *resp =
            aperture__v1__get_ring_state_response__unpack(nullptr, reply.body_len, reply.body);
        ap_status_reply_clear(&reply);
        if (resp == nullptr) {
          failures++;
          continue;
        }
        bool steady_seen = false;
        for (size_t r = 0; r < resp->n_rings; r++) {
          const Aperture__V1__RingState *ring = resp->rings[r];
          size_t expect = ring->endpoint_count < 25 ? ring->endpoint_count : 25;
          if (ring->n_endpoints != expect) failures++;
          if (ring->truncated != (ring->endpoint_count > 25)) failures++;
          for (size_t k = 0; k < ring->n_endpoints; k++)
            if (ring->endpoints[k]->ring_index != k ||
                ring->endpoints[k]->address != RegisteredInstance::Address(k))
              failures++;
          if (std::string(ring->target) == "steady") steady_seen = true;
          if (t == 1 && std::string(ring->target).find("churn-1") == std::string::npos)
            failures++;
        }
        if (t == 0 && !steady_seen) failures++;
        aperture__v1__get_ring_state_response__free_unpacked(resp, nullptr);
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Handler, DecodingEdgeCases) {
  ap_status_reply reply;
  ap_status_handle_get_ring_state(nullptr, 0, &reply);  // empty message: all defaults
  EXPECT_EQ(reply.code, GRPC_STATUS_OK) << reply.message;
  ap_status_reply_clear(&reply);
  ap_status_handle_get_ring_state(nullptr, 3, &reply);
  EXPECT_EQ(reply.code, GRPC_STATUS_INVALID_ARGUMENT);
  ap_status_reply_clear(&reply);
  std::vector<uint8_t> big(AP_STATUS_MAX_REQUEST_BYTES + 1, 0);
  ap_status_handle_get_ring_state(big.data(), big.size(), &reply);
  EXPECT_EQ(reply.code, GRPC_STATUS_RESOURCE_EXHAUSTED);
  ap_status_reply_clear(&reply);
  // Unknown fields are skipped, as protobuf requires.
  const uint8_t unknown_field[] = {0x78, 0x05};  // field 15, varint 5
  ap_status_handle_get_ring_state(unknown_field, sizeof unknown_field, &reply);
  EXPECT_EQ(reply.code, GRPC_STATUS_OK) << reply.message;
  ap_status_reply_clear(&reply);
  // Wrong wire type for target_filter (varint instead of bytes).
  const uint8_t wrong_type[] = {0x08, 0x01};
  ap_status_handle_get_ring_state(wrong_type, sizeof wrong_type, &reply);
  EXPECT_EQ(reply.code, GRPC_STATUS_INVALID_ARGUMENT);
  ap_status_reply_clear(&reply);
  ap_status_handle_health_check(wrong_type, sizeof wrong_type, &reply);
  EXPECT_EQ(reply.code, GRPC_STATUS_INVALID_ARGUMENT);
  ap_status_reply_clear(&reply);
  ap_status_handle_get_ring_state(nullptr, 0, nullptr);  // ignored, no crash
  ap_status_reply_clear(nullptr);
}

}  // namespace
