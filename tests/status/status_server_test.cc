// The status server on real gRPC: a real admin server on 127.0.0.1, real
// registry entries, real calls through the C-core client, responses decoded
// with the protobuf-c bindings generated from status.proto.
#include <stdio.h>
#include <stdlib.h>

#include <atomic>
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
#include "policy/status/ap_status_client.h"
}
#include "tests/status/fake_instance.h"
#include "tests/status/owned_server.h"

namespace {

constexpr char kGetRingState[] = "/aperture.v1.ApertureStatus/GetRingState";
constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";

struct Response {
  int status = -1;
  std::string details;
  Aperture__V1__GetRingStateResponse *msg = nullptr;
  ~Response() {
    if (msg) aperture__v1__get_ring_state_response__free_unpacked(msg, nullptr);
  }
};

std::string Addr(int port) { return "127.0.0.1:" + std::to_string(port); }

void Query(int port, Response *out, const char *filter = "", uint32_t max = 0, uint32_t start = 0,
           bool omit = false) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  req.target_filter = const_cast<char *>(filter);
  req.max_endpoints = max;
  req.start_index = start;
  req.omit_endpoints = omit;
  std::vector<uint8_t> bytes(aperture__v1__get_ring_state_request__get_packed_size(&req) + 1);
  size_t len = aperture__v1__get_ring_state_request__pack(&req, bytes.data());
  ap_status_call_result r;
  ASSERT_EQ(ap_status_call(Addr(port).c_str(), kGetRingState, bytes.data(), len, 5000, &r), 0)
      << r.details;
  out->status = r.status;
  out->details = r.details;
  if (r.status == GRPC_STATUS_OK) {
    out->msg = aperture__v1__get_ring_state_response__unpack(nullptr, r.body_len, r.body);
    EXPECT_NE(out->msg, nullptr);
  }
  ap_status_call_result_clear(&r);
}

ap_status_call_result Raw(int port, const char *method, const std::string &bytes) {
  ap_status_call_result r;
  EXPECT_EQ(ap_status_call(Addr(port).c_str(), method,
                           reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), 5000, &r),
            0)
      << r.details;
  return r;
}

class StatusServer : public ::testing::Test {
 protected:
  void SetUp() override {
    aperture_error err;
    ASSERT_EQ(aperture_status_server_start(nullptr, &server_, &err), APERTURE_OK) << err.message;
    port_ = aperture_status_server_port(server_);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override { aperture_status_server_stop(server_); }
  aperture_status_server *server_ = nullptr;
  int port_ = 0;
};

TEST_F(StatusServer, ReportsEveryFieldOfARegisteredInstance) {
  RegisteredInstance inst("dns:///alpha.svc:443", 6);
  Response r;
  Query(port_, &r);
  ASSERT_EQ(r.status, GRPC_STATUS_OK) << r.details;
  ASSERT_EQ(r.msg->n_rings, 1u);
  const Aperture__V1__RingState *ring = r.msg->rings[0];
  EXPECT_STREQ(ring->target, "dns:///alpha.svc:443");
  EXPECT_STREQ(ring->mode, "continuous");
  EXPECT_EQ(ring->peer_index, 2u);
  EXPECT_EQ(ring->peer_count, 5u);
  EXPECT_EQ(ring->coordinate_source, APERTURE__V1__COORDINATE_SOURCE__COORDINATE_SOURCE_API);
  EXPECT_STREQ(ring->coordinate_source_name, "api");
  EXPECT_DOUBLE_EQ(ring->offset, 0.4);
  EXPECT_DOUBLE_EQ(ring->width, 0.2);
  EXPECT_EQ(ring->min_aperture, 3u);
  EXPECT_EQ(ring->logical_aperture, 4u);
  EXPECT_EQ(ring->physical_aperture, 5u);
  EXPECT_EQ(ring->widened, 1u);
  EXPECT_EQ(ring->draining, 1u);
  EXPECT_STREQ(ring->fingerprint, "000000000abc0006");
  EXPECT_EQ(ring->resolver_updates, 7u);
  EXPECT_EQ(ring->rebuilds, 1u);
  EXPECT_EQ(ring->subchannels_created, 9u);
  EXPECT_EQ(ring->subchannels_destroyed, 2u);
  EXPECT_EQ(ring->widenings, 11u);
  EXPECT_EQ(ring->snapshot_builds, 17u);
  EXPECT_STREQ(ring->peer_keys, "");
  EXPECT_EQ(ring->affinity_sessions, 13u);
  EXPECT_STREQ(ring->last_status, "");
  EXPECT_EQ(ring->endpoint_count, 6u);
  EXPECT_EQ(ring->start_index, 0u);
  EXPECT_FALSE(ring->truncated);
  EXPECT_EQ(ring->next_start_index, 6u);
  ASSERT_EQ(ring->n_endpoints, 6u);
  for (size_t i = 0; i < 6; i++) {
    const Aperture__V1__EndpointState *e = ring->endpoints[i];
    EXPECT_EQ(e->address, RegisteredInstance::Address(i));
    EXPECT_EQ(e->ring_index, i);
    EXPECT_DOUBLE_EQ(e->endpoint_weight, 1.0);
    EXPECT_DOUBLE_EQ(e->intersection, i < 4 ? 0.5 : 0.0);
    EXPECT_DOUBLE_EQ(e->pick_weight, i < 4 ? 0.25 : 0.0);
    EXPECT_EQ(e->in_aperture, i < 4);
    EXPECT_EQ(e->widened, i == 3);
    EXPECT_EQ(e->draining, i == 2);
    // ap_connectivity + 1; -1 (no subchannel) -> NO_SUBCHANNEL (0).
    EXPECT_EQ(static_cast<int>(e->connectivity), i < 4 ? static_cast<int>(i % 4) + 1 : 0);
    EXPECT_EQ(e->outstanding, i);
    EXPECT_EQ(e->picks, 100 + i);
    EXPECT_EQ(e->failures, i % 3);
    EXPECT_STREQ(e->health, i == 3 ? "ejected" : "ok");
    EXPECT_EQ(e->ejections, i == 3 ? 2u : 0u);
  }
}


// proto3 strings must be UTF-8: a channel's target, its last status and
// its addresses come from applications and resolvers, and one bad byte
// would make a strict client (Python's protobuf here, on code protoc
// generates from status.proto) refuse the whole response. The server sends
// each such byte as U+FFFD and keeps the rest, controls included.
TEST_F(StatusServer, EveryStringIsSentAsUtf8) {
  const std::string bad = "\x1b[2J\xff\xfe\xc0\xaf\xed\xa0\x80\xe2\x82";
  RegisteredInstance inst("dns:///bad\xff.svc:443", 3);
  inst.SetText(bad);
  inst.SetPeers("dns:///peers\x80:1", "\xf8\xf9", 1);
  inst.SetPickMetric("orca\xfe");
  inst.SetPeerKeys("\xc3");
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  std::string request(aperture__v1__get_ring_state_request__get_packed_size(&req), '\0');
  aperture__v1__get_ring_state_request__pack(&req, reinterpret_cast<uint8_t *>(&request[0]));
  ap_status_call_result r = Raw(port_, kGetRingState, request);
  ASSERT_EQ(r.status, GRPC_STATUS_OK) << r.details;
  const std::string body(reinterpret_cast<const char *>(r.body), r.body_len);
  ap_status_call_result_clear(&r);

  Aperture__V1__GetRingStateResponse *msg = aperture__v1__get_ring_state_response__unpack(
      nullptr, body.size(), reinterpret_cast<const uint8_t *>(body.data()));
  ASSERT_NE(msg, nullptr);
  ASSERT_EQ(msg->n_rings, 1u);
  const Aperture__V1__RingState *ring = msg->rings[0];
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(std::string(ring->target), "dns:///bad" + fffd + ".svc:443");
  // \xc0\xaf is overlong, \xed\xa0\x80 a surrogate, \xe2\x82 cut short:
  // a replacement for every byte.
  const std::string repaired = "\x1b[2J" + fffd + fffd + fffd + fffd + fffd + fffd + fffd + fffd + fffd;
  EXPECT_EQ(std::string(ring->last_status), repaired);
  EXPECT_EQ(std::string(ring->peer_target), "dns:///peers" + fffd + ":1");
  // Fixed-size fields keep their size: '?' for a bad byte.
  EXPECT_STREQ(ring->peer_fingerprint, "??");
  EXPECT_STREQ(ring->pick_metric, "orca?");
  EXPECT_STREQ(ring->peer_keys, "?");
  ASSERT_EQ(ring->n_endpoints, 3u);
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(std::string(ring->endpoints[i]->address), RegisteredInstance::Address(i) + repaired);
  }
  aperture__v1__get_ring_state_response__free_unpacked(msg, nullptr);

  const char *srcdir = getenv("TEST_SRCDIR");
  const char *tmp = getenv("TEST_TMPDIR");
  ASSERT_NE(srcdir, nullptr);
  ASSERT_NE(tmp, nullptr);
  const std::string path = std::string(tmp) + "/utf8_response.bin";
  FILE *f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  fwrite(body.data(), 1, body.size(), f);
  fclose(f);
  const std::string root = std::string(srcdir) + "/aperture";
  const std::string cmd = "/usr/bin/python3 '" + root + "/tests/status/strict_parse.py' '" + root +
                          "/proto' '" + path + "' > /dev/null";
  EXPECT_EQ(system(cmd.c_str()), 0) << "a strict proto3 parser refused the response";
}

TEST_F(StatusServer, FiltersByTargetSubstring) {
  RegisteredInstance a("dns:///alpha.svc:443", 1), b("dns:///beta.svc:443", 2);
  Response all, beta, none;
  Query(port_, &all);
  Query(port_, &beta, "beta");
  Query(port_, &none, "gamma");
  ASSERT_EQ(all.status, GRPC_STATUS_OK);
  EXPECT_EQ(all.msg->n_rings, 2u);
  ASSERT_EQ(beta.status, GRPC_STATUS_OK);
  ASSERT_EQ(beta.msg->n_rings, 1u);
  EXPECT_STREQ(beta.msg->rings[0]->target, "dns:///beta.svc:443");
  ASSERT_EQ(none.status, GRPC_STATUS_OK);
  EXPECT_EQ(none.msg->n_rings, 0u);
}

TEST_F(StatusServer, LargeRingIsCappedAndPaged) {
  RegisteredInstance big("dns:///big.svc:443", 12000);
  Response def, max, page, past, omit;
  Query(port_, &def);  // default cap 1000
  ASSERT_EQ(def.status, GRPC_STATUS_OK) << def.details;
  const Aperture__V1__RingState *ring = def.msg->rings[0];
  EXPECT_EQ(ring->endpoint_count, 12000u);
  EXPECT_EQ(ring->n_endpoints, 1000u);
  EXPECT_TRUE(ring->truncated);
  EXPECT_EQ(ring->next_start_index, 1000u);

  Query(port_, &max, "", 50000);  // above the hard cap: 10000
  ASSERT_EQ(max.status, GRPC_STATUS_OK);
  EXPECT_EQ(max.msg->rings[0]->n_endpoints, 10000u);
  EXPECT_TRUE(max.msg->rings[0]->truncated);

  Query(port_, &page, "", 10000, 10000);  // the last page
  ASSERT_EQ(page.status, GRPC_STATUS_OK);
  ring = page.msg->rings[0];
  EXPECT_EQ(ring->start_index, 10000u);
  ASSERT_EQ(ring->n_endpoints, 2000u);
  EXPECT_EQ(ring->endpoints[0]->ring_index, 10000u);
  EXPECT_EQ(ring->endpoints[1999]->address, RegisteredInstance::Address(11999));
  EXPECT_FALSE(ring->truncated);
  EXPECT_EQ(ring->next_start_index, 12000u);

  Query(port_, &past, "", 0, 20000);
  ASSERT_EQ(past.status, GRPC_STATUS_OK);
  EXPECT_EQ(past.msg->rings[0]->n_endpoints, 0u);
  EXPECT_EQ(past.msg->rings[0]->start_index, 12000u);
  EXPECT_FALSE(past.msg->rings[0]->truncated);

  Query(port_, &omit, "", 0, 0, true);
  ASSERT_EQ(omit.status, GRPC_STATUS_OK);
  EXPECT_EQ(omit.msg->rings[0]->n_endpoints, 0u);
  EXPECT_EQ(omit.msg->rings[0]->endpoint_count, 12000u);
  EXPECT_TRUE(omit.msg->rings[0]->truncated);
}

TEST_F(StatusServer, ResponseEndpointBudgetSpansChannels) {
  RegisteredInstance a("ring-a", 10000), b("ring-b", 10000), c("ring-c", 10000);
  Response r;
  Query(port_, &r, "ring-", 10000);
  ASSERT_EQ(r.status, GRPC_STATUS_OK) << r.details;
  ASSERT_EQ(r.msg->n_rings, 3u);
  EXPECT_EQ(r.msg->rings[0]->n_endpoints, 10000u);
  EXPECT_FALSE(r.msg->rings[0]->truncated);
  EXPECT_EQ(r.msg->rings[1]->n_endpoints, 10000u);
  EXPECT_EQ(r.msg->rings[2]->n_endpoints, 0u);  // 20000-endpoint budget spent
  EXPECT_TRUE(r.msg->rings[2]->truncated);
  EXPECT_EQ(r.msg->rings[2]->next_start_index, 0u);
}

TEST_F(StatusServer, MalformedRequestIsInvalidArgument) {
  // Field 1 (string) claiming 100 bytes with only 3 present; then a bad tag.
  for (const std::string &bytes : {std::string("\x0a\x64" "abc", 5), std::string("\xff\xff\xff", 3),
                                   std::string("\x10", 1)}) {
    ap_status_call_result r = Raw(port_, kGetRingState, bytes);
    EXPECT_EQ(r.status, GRPC_STATUS_INVALID_ARGUMENT) << r.details;
    EXPECT_NE(std::string(r.details).find("malformed"), std::string::npos) << r.details;
    ap_status_call_result_clear(&r);
  }
  // The server still answers afterwards.
  Response ok;
  Query(port_, &ok);
  EXPECT_EQ(ok.status, GRPC_STATUS_OK);
}

TEST_F(StatusServer, UnknownMethodIsUnimplemented) {
  ap_status_call_result r = Raw(port_, "/aperture.v1.ApertureStatus/NoSuchMethod", "");
  EXPECT_EQ(r.status, GRPC_STATUS_UNIMPLEMENTED) << r.details;
  EXPECT_NE(std::string(r.details).find("NoSuchMethod"), std::string::npos) << r.details;
  ap_status_call_result_clear(&r);
  r = Raw(port_, "/other.Service/Get", "\x0a\x01x");
  EXPECT_EQ(r.status, GRPC_STATUS_UNIMPLEMENTED) << r.details;
  ap_status_call_result_clear(&r);
}

TEST_F(StatusServer, OversizedRequestIsResourceExhausted) {
  // A valid request (a 100 KiB filter) above the 64 KiB receive limit.
  std::string filter(100 * 1024, 'x');
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  req.target_filter = const_cast<char *>(filter.c_str());
  std::string bytes(aperture__v1__get_ring_state_request__get_packed_size(&req), '\0');
  aperture__v1__get_ring_state_request__pack(&req, reinterpret_cast<uint8_t *>(&bytes[0]));
  ap_status_call_result r = Raw(port_, kGetRingState, bytes);
  EXPECT_EQ(r.status, GRPC_STATUS_RESOURCE_EXHAUSTED) << r.details;
  ap_status_call_result_clear(&r);
  Response ok;
  Query(port_, &ok);
  EXPECT_EQ(ok.status, GRPC_STATUS_OK);
}

TEST_F(StatusServer, HealthCheck) {
  for (const char *service : {"", "aperture.v1.ApertureStatus"}) {
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    req.service = const_cast<char *>(service);
    std::string bytes(grpc__health__v1__health_check_request__get_packed_size(&req), '\0');
    grpc__health__v1__health_check_request__pack(&req, reinterpret_cast<uint8_t *>(&bytes[0]));
    ap_status_call_result r = Raw(port_, kHealthCheck, bytes);
    ASSERT_EQ(r.status, GRPC_STATUS_OK) << r.details;
    Grpc__Health__V1__HealthCheckResponse *resp =
        grpc__health__v1__health_check_response__unpack(nullptr, r.body_len, r.body);
    ASSERT_NE(resp, nullptr);
    EXPECT_EQ(resp->status, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
    grpc__health__v1__health_check_response__free_unpacked(resp, nullptr);
    ap_status_call_result_clear(&r);
  }
  ap_status_call_result r = Raw(port_, kHealthCheck, std::string("\x0a\x03" "foo", 5));
  EXPECT_EQ(r.status, GRPC_STATUS_NOT_FOUND) << r.details;
  ap_status_call_result_clear(&r);
}

// Queries from several threads while instances are created, changed and
// destroyed: every response is whole (count and endpoints agree).
TEST_F(StatusServer, ConcurrentQueriesWhileInstancesChurn) {
  std::atomic<bool> stop{false};
  std::thread churn([&stop] {
    for (int i = 0; i < 300 && !stop.load(); i++) {
      RegisteredInstance inst("churn-" + std::to_string(i), static_cast<size_t>(i % 50));
      inst.SetRebuilds(static_cast<uint64_t>(i));
      std::this_thread::yield();
    }
  });
  RegisteredInstance steady("steady", 20);
  std::vector<std::thread> readers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 2; t++) {
    readers.emplace_back([this, &failures] {
      for (int q = 0; q < 40; q++) {
        Response r;
        Query(port_, &r);
        if (r.status != GRPC_STATUS_OK || r.msg == nullptr) {
          failures++;
          continue;
        }
        bool steady_seen = false;
        for (size_t i = 0; i < r.msg->n_rings; i++) {
          const Aperture__V1__RingState *ring = r.msg->rings[i];
          if (ring->n_endpoints != ring->endpoint_count) failures++;
          for (size_t k = 0; k < ring->n_endpoints; k++)
            if (ring->endpoints[k]->ring_index != k) failures++;
          if (std::string(ring->target) == "steady") steady_seen = true;
        }
        if (!steady_seen) failures++;
      }
    });
  }
  for (auto &th : readers) th.join();
  stop = true;
  churn.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(StatusServerApi, RejectsBadArgumentsAndBusyAddress) {
  aperture_error err;
  aperture_status_server *s = nullptr;
  EXPECT_EQ(aperture_status_server_start("", &s, &err), APERTURE_EINVAL);
  EXPECT_NE(std::string(err.message).find("address"), std::string::npos);
  EXPECT_EQ(aperture_status_server_start(nullptr, nullptr, &err), APERTURE_EINVAL);
  EXPECT_EQ(aperture_status_server_port(nullptr), -1);
  aperture_status_server_stop(nullptr);

  ASSERT_EQ(aperture_status_server_start("127.0.0.1:0", &s, &err), APERTURE_OK) << err.message;
  std::string busy = Addr(aperture_status_server_port(s));
  aperture_status_server *second = nullptr;
  EXPECT_EQ(aperture_status_server_start(busy.c_str(), &second, &err), APERTURE_EUNAVAIL);
  EXPECT_EQ(second, nullptr);
  aperture_status_server_stop(second);
  EXPECT_NE(std::string(err.message).find(busy), std::string::npos) << err.message;
  EXPECT_EQ(aperture_status_server_start("not an address:xx", &second, &err), APERTURE_EUNAVAIL);
  EXPECT_EQ(second, nullptr);
  aperture_status_server_stop(second);
  aperture_status_server_stop(s);
}

TEST(StatusServerApi, ConnectionRefusedAfterStop) {
  aperture_error err;
  aperture_status_server *s = nullptr;
  ASSERT_EQ(aperture_status_server_start(nullptr, &s, &err), APERTURE_OK) << err.message;
  int port = aperture_status_server_port(s);
  aperture_status_server_stop(s);
  ap_status_call_result r = Raw(port, kGetRingState, "");
  EXPECT_EQ(r.status, GRPC_STATUS_UNAVAILABLE) << r.details;
  ap_status_call_result_clear(&r);
}

// The service on a server the application owns and drives with its own
// completion queue (only for its shutdown tag here).
TEST(StatusServerApi, ServesOnApplicationOwnedServer) {
  grpc_init();
  grpc_server *server = grpc_server_create(nullptr, nullptr);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(nullptr);
  grpc_server_register_completion_queue(server, cq, nullptr);
  aperture_error err;
  aperture_status_service *svc = nullptr;
  ASSERT_EQ(aperture_status_register(server, &svc, &err), APERTURE_OK) << err.message;
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(ServeOwned(server, svc, &port));
  {
    RegisteredInstance inst("owned-server-target", 3);
    Response r;
    Query(port, &r, "owned");
    ASSERT_EQ(r.status, GRPC_STATUS_OK) << r.details;
    ASSERT_EQ(r.msg->n_rings, 1u);
    EXPECT_EQ(r.msg->rings[0]->n_endpoints, 3u);
    ap_status_call_result bad = Raw(port, kGetRingState, std::string("\xff", 1));
    EXPECT_EQ(bad.status, GRPC_STATUS_INVALID_ARGUMENT) << bad.details;
    ap_status_call_result_clear(&bad);
  }
  StopOwned(server, cq, svc);
}

// On a server the application owns, Health/Check stays the application's:
// it can register its own after the status service.
TEST(StatusServerApi, ApplicationOwnedServerKeepsItsHealthMethod) {
  grpc_init();
  grpc_server *server = grpc_server_create(nullptr, nullptr);
  aperture_error err;
  aperture_status_service *svc = nullptr;
  ASSERT_EQ(aperture_status_register(server, &svc, &err), APERTURE_OK) << err.message;
  void *own_health = grpc_server_register_method(server, kHealthCheck, nullptr,
                                                 GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
  EXPECT_NE(own_health, nullptr) << "the status service took Health/Check";
  grpc_server_destroy(server);
  aperture_status_service_destroy(svc);
  grpc_shutdown();
}

// Health on an application-owned server is opt-in, and served when asked.
TEST(StatusServerApi, HealthOnApplicationOwnedServerIsOptIn) {
  aperture_error err;
  aperture_status_service *svc = nullptr;
  grpc_init();
  grpc_server *server = grpc_server_create(nullptr, nullptr);
  EXPECT_EQ(aperture_status_register_with(server, 0x80, &svc, &err), APERTURE_EINVAL);
  EXPECT_NE(std::string(err.message).find("flags"), std::string::npos) << err.message;
  EXPECT_EQ(svc, nullptr);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(nullptr);
  grpc_server_register_completion_queue(server, cq, nullptr);
  ASSERT_EQ(aperture_status_register_with(server, APERTURE_STATUS_WITH_HEALTH, &svc, &err),
            APERTURE_OK)
      << err.message;
  EXPECT_EQ(grpc_server_register_method(server, kHealthCheck, nullptr,
                                        GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0),
            nullptr);
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(ServeOwned(server, svc, &port));
  ap_status_call_result r = Raw(port, kHealthCheck, "");
  EXPECT_EQ(r.status, GRPC_STATUS_OK) << r.details;
  ap_status_call_result_clear(&r);
  StopOwned(server, cq, svc);
}

TEST(StatusServerApi, RegisterRejectsNullAndDuplicateRegistration) {
  aperture_error err;
  aperture_status_service *svc = nullptr;
  EXPECT_EQ(aperture_status_register(nullptr, &svc, &err), APERTURE_EINVAL);
  EXPECT_NE(std::string(err.message).find("server"), std::string::npos);
  EXPECT_EQ(svc, nullptr);
  EXPECT_EQ(aperture_status_service_start(nullptr, &err), APERTURE_EINVAL);
  aperture_status_service_destroy(nullptr);

  // A second registration on the same server fails (gRPC refuses duplicate
  // methods); both handles are freed after the never-started server.
  grpc_init();
  grpc_server *server = grpc_server_create(nullptr, nullptr);
  aperture_status_service *first = nullptr, *second = nullptr;
  ASSERT_EQ(aperture_status_register(server, &first, &err), APERTURE_OK) << err.message;
  EXPECT_EQ(aperture_status_register(server, &second, &err), APERTURE_ESTATE);
  EXPECT_NE(std::string(err.message).find("GetRingState"), std::string::npos) << err.message;
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(aperture_status_service_start(second, &err), APERTURE_ESTATE);
  grpc_server_destroy(server);
  aperture_status_service_destroy(second);
  aperture_status_service_destroy(first);
  grpc_shutdown();
}

}  // namespace
