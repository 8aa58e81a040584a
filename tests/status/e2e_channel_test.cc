// End to end: real channels with the aperture policy against real backends
// on 127.0.0.1, the status server in the same process, queried through the
// protobuf-c client and through aperturectl as a process. What the status
// reports must match what the channels really did: coordinate, subset,
// states and per-backend call counts as seen by the backends themselves.
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "policy/core/stable/ap_stable.h"
#include "policy/include/aperture.h"
#include "policy/status/ap_status_client.h"
}

#include "tests/common/raw_call.h"
#include "tests/oracle/aperture_oracle.h"

namespace {

// A backend that answers every method with OK and counts the calls it got.
class CountingBackend {
 public:
  CountingBackend() {
    server_ = grpc_server_create(nullptr, nullptr);
    cq_ = grpc_completion_queue_create_for_next(nullptr);
    grpc_server_register_completion_queue(server_, cq_, nullptr);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    port_ = grpc_server_add_http2_port(server_, "127.0.0.1:0", creds);
    grpc_server_credentials_release(creds);
    grpc_server_start(server_);
    RequestNext();
    thread_ = std::thread([this] { Loop(); });
  }
  ~CountingBackend() {
    grpc_server_shutdown_and_notify(server_, cq_, &shutdown_tag_);
    grpc_server_cancel_all_calls(server_);
    thread_.join();  // ends once the shutdown tag arrived and calls are done
    grpc_server_destroy(server_);
    grpc_completion_queue_shutdown(cq_);
    while (grpc_completion_queue_next(cq_, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(cq_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  int calls() const { return calls_.load(); }

 private:
  struct Call {
    bool replying = false;
    grpc_call *call = nullptr;
    grpc_call_details details;
    grpc_metadata_array md;
    int cancelled = 0;
  };

  void RequestNext() {
    auto *c = new Call;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    if (grpc_server_request_call(server_, &c->call, &c->details, &c->md, cq_, cq_, c) !=
        GRPC_CALL_OK) {
      Free(c);
      return;
    }
    pending_++;
  }

  static void Free(Call *c) {
    if (c->call) grpc_call_unref(c->call);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    delete c;
  }

  void Loop() {
    bool shutdown = false;
    while (!shutdown || pending_ > 0) {
      grpc_event ev = grpc_completion_queue_next(cq_, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
      if (ev.type != GRPC_OP_COMPLETE) continue;
      if (ev.tag == &shutdown_tag_) {
        shutdown = true;
        continue;
      }
      auto *c = static_cast<Call *>(ev.tag);
      pending_--;
      if (c->replying || !ev.success) {
        Free(c);
        continue;
      }
      calls_++;
      if (!shutdown) RequestNext();
      grpc_op ops[4] = {};
      ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
      grpc_slice empty = grpc_empty_slice();
      grpc_byte_buffer *reply = grpc_raw_byte_buffer_create(&empty, 1);
      ops[1].op = GRPC_OP_SEND_MESSAGE;
      ops[1].data.send_message.send_message = reply;
      grpc_slice details = grpc_slice_from_static_string("");
      ops[2].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
      ops[2].data.send_status_from_server.status = GRPC_STATUS_OK;
      ops[2].data.send_status_from_server.status_details = &details;
      ops[3].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
      ops[3].data.recv_close_on_server.cancelled = &c->cancelled;
      c->replying = true;
      if (grpc_call_start_batch(c->call, ops, 4, c, nullptr) == GRPC_CALL_OK) {
        pending_++;
      } else {
        Free(c);
      }
      grpc_byte_buffer_destroy(reply);  // the batch keeps its own reference
    }
  }

  grpc_server *server_;
  grpc_completion_queue *cq_;
  int port_ = 0;
  int shutdown_tag_ = 0;
  int pending_ = 0;  // loop thread only (and before it starts)
  std::atomic<int> calls_{0};
  std::thread thread_;
};

// A channel whose service config selects the aperture policy.
class ApertureChannel {
 public:
  ApertureChannel(const std::string &target, const std::string &lb_config) {
    std::string sc = "{\"loadBalancingConfig\":[{\"aperture\":" + lb_config + "}]}";
    grpc_arg arg;
    arg.type = GRPC_ARG_STRING;
    arg.key = const_cast<char *>(GRPC_ARG_SERVICE_CONFIG);
    arg.value.string = const_cast<char *>(sc.c_str());
    grpc_channel_args args = {1, &arg};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    channel_ = grpc_channel_create(target.c_str(), creds, &args);
    grpc_channel_credentials_release(creds);
  }
  ~ApertureChannel() { grpc_channel_destroy(channel_); }

  // One unary call, waiting for ready backends; returns its status.
  grpc_status_code Call() {
    raw_call_opts o = {};
    o.method = "/test.Backend/Call";
    o.body = "x";
    o.body_len = 1;
    o.wait_for_ready = 1;
    o.timeout_ms = 10000;
    return raw_call_unary(channel_, &o, nullptr, 0);
  }

 private:
  grpc_channel *channel_;
};

Aperture__V1__GetRingStateResponse *QueryStatus(int port, const std::string &filter) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  req.target_filter = const_cast<char *>(filter.c_str());
  std::vector<uint8_t> bytes(aperture__v1__get_ring_state_request__get_packed_size(&req) + 1);
  size_t len = aperture__v1__get_ring_state_request__pack(&req, bytes.data());
  ap_status_call_result r;
  std::string addr = "127.0.0.1:" + std::to_string(port);
  EXPECT_EQ(ap_status_call(addr.c_str(), "/aperture.v1.ApertureStatus/GetRingState", bytes.data(),
                           len, 5000, &r),
            0);
  EXPECT_EQ(r.status, GRPC_STATUS_OK) << r.details;
  Aperture__V1__GetRingStateResponse *resp =
      r.status == GRPC_STATUS_OK
          ? aperture__v1__get_ring_state_response__unpack(nullptr, r.body_len, r.body)
          : nullptr;
  ap_status_call_result_clear(&r);
  return resp;
}

struct CtlOutput {
  int exit_code = -1;
  std::string out;
};

CtlOutput RunAperturectl(const std::string &args) {
  std::string cmd = std::string(getenv("TEST_SRCDIR")) + "/aperture/" + getenv("APERTURECTL") +
                    " " + args;
  CtlOutput r;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

class EndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    grpc_init();
    aperture_error err;
    ASSERT_EQ(aperture_register(&err), APERTURE_OK) << err.message;
  }
  static void TearDownTestSuite() { grpc_shutdown(); }

  void SetUp() override {
    for (int i = 0; i < kBackends; i++) backends_.push_back(std::make_unique<CountingBackend>());
    target_ = "ipv4:";
    for (int i = 0; i < kBackends; i++) target_ += (i ? "," : "") + backends_[i]->address();
    aperture_error err;
    ASSERT_EQ(aperture_status_server_start(nullptr, &status_, &err), APERTURE_OK) << err.message;
    status_port_ = aperture_status_server_port(status_);
  }
  void TearDown() override {
    aperture_status_server_stop(status_);
    backends_.clear();
  }

  // Three channels of one fleet of three in `mode`: see the test below.
  void ExpectPeersAgreeAndCover(const std::string &mode);

  static constexpr int kBackends = 6;
  std::vector<std::unique_ptr<CountingBackend>> backends_;
  std::string target_;
  aperture_status_server *status_ = nullptr;
  int status_port_ = 0;
};

TEST_F(EndToEnd, StatusMatchesWhatTheChannelDid) {
  constexpr int kCalls = 300;
  ApertureChannel channel(target_, "{\"peerIndex\":1,\"peerCount\":3,\"minAperture\":2}");
  for (int i = 0; i < kCalls; i++) ASSERT_EQ(channel.Call(), GRPC_STATUS_OK) << "call " << i;

  // Filter on this test's first backend address: only this channel matches.
  Aperture__V1__GetRingStateResponse *resp = QueryStatus(status_port_, backends_[0]->address());
  ASSERT_NE(resp, nullptr);
  ASSERT_EQ(resp->n_rings, 1u);
  const Aperture__V1__RingState *ring = resp->rings[0];
  EXPECT_NE(std::string(ring->target).find(backends_[5]->address()), std::string::npos)
      << ring->target;
  EXPECT_EQ(ring->peer_index, 1u);
  EXPECT_EQ(ring->peer_count, 3u);
  EXPECT_EQ(ring->coordinate_source, APERTURE__V1__COORDINATE_SOURCE__COORDINATE_SOURCE_CONFIG);
  EXPECT_EQ(ring->min_aperture, 2u);
  EXPECT_EQ(strlen(ring->fingerprint), 16u);
  EXPECT_GE(ring->resolver_updates, 1u);
  ASSERT_EQ(ring->endpoint_count, static_cast<uint32_t>(kBackends));
  ASSERT_EQ(ring->n_endpoints, static_cast<size_t>(kBackends));
  EXPECT_FALSE(ring->truncated);

  std::map<std::string, const CountingBackend *> by_address;
  for (auto &b : backends_) by_address[b->address()] = b.get();
  uint64_t total_picks = 0;
  uint32_t members = 0, intersecting = 0;
  std::set<std::string> seen;
  for (size_t i = 0; i < ring->n_endpoints; i++) {
    const Aperture__V1__EndpointState *e = ring->endpoints[i];
    ASSERT_TRUE(by_address.count(e->address)) << e->address;
    seen.insert(e->address);
    EXPECT_EQ(e->ring_index, i);
    const CountingBackend *b = by_address[e->address];
    // The policy's pick count equals the calls the backend really received.
    EXPECT_EQ(e->picks, static_cast<uint64_t>(b->calls())) << e->address;
    EXPECT_EQ(e->failures, 0u);
    EXPECT_EQ(e->outstanding, 0u);
    total_picks += e->picks;
    if (e->in_aperture) {
      members++;
      if (e->picks > 0) {
        EXPECT_EQ(e->connectivity, APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_READY);
      }
    } else {
      EXPECT_EQ(b->calls(), 0) << e->address << " is outside the aperture but got calls";
      EXPECT_EQ(e->picks, 0u);
    }
    if (e->intersection > 0) intersecting++;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kBackends));
  EXPECT_EQ(total_picks, static_cast<uint64_t>(kCalls));
  EXPECT_GE(members, 2u);          // minAperture
  EXPECT_LT(members, static_cast<uint32_t>(kBackends));  // a real subset
  // The subset itself, against the oracle (the definitions, not the core):
  // smooth (the policy's default), client 1 of 3, minAperture 2.
  std::vector<std::string> addresses;
  for (auto &b : backends_) addresses.push_back(b->address());
  const std::map<std::string, double> expected =
      oracle::ExpectedByAddress(oracle::Mode::kSmooth, addresses, 1, 3, 2);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ring->physical_aperture, static_cast<uint32_t>(expected.size()));
  EXPECT_EQ(members, static_cast<uint32_t>(expected.size()));
  EXPECT_EQ(intersecting, static_cast<uint32_t>(expected.size()));
  for (size_t i = 0; i < ring->n_endpoints; i++) {
    const Aperture__V1__EndpointState *e = ring->endpoints[i];
    auto it = expected.find(e->address);
    EXPECT_EQ(e->in_aperture, it != expected.end()) << e->address;
    if (it != expected.end()) {
      EXPECT_NEAR(e->pick_weight, it->second, 1e-9) << e->address;
    }
  }
  EXPECT_GE(ring->subchannels_created, members);

  // aperturectl shows the same: header and each member's row with its picks.
  CtlOutput ctl = RunAperturectl("status 127.0.0.1:" + std::to_string(status_port_) +
                                 " --target " + backends_[0]->address());
  ASSERT_EQ(ctl.exit_code, 0);
  EXPECT_NE(ctl.out.find("coordinate 1/3 (config)"), std::string::npos) << ctl.out;
  EXPECT_NE(ctl.out.find(std::string("fingerprint ") + ring->fingerprint), std::string::npos);
  for (size_t i = 0; i < ring->n_endpoints; i++) {
    const Aperture__V1__EndpointState *e = ring->endpoints[i];
    if (e->picks == 0) continue;
    // Rows follow the "INDEX ..." heading; the target line also has addresses.
    size_t row = ctl.out.find("  " + std::string(e->address) + " ", ctl.out.find("INDEX"));
    ASSERT_NE(row, std::string::npos) << e->address;
    std::string line = ctl.out.substr(row, ctl.out.find('\n', row) - row);
    EXPECT_NE(line.find("ready"), std::string::npos) << line;
    EXPECT_NE(line.find(" " + std::to_string(e->picks) + " "), std::string::npos) << line;
  }
  aperture__v1__get_ring_state_response__free_unpacked(resp, nullptr);
}

// Stable mode: GetRingState and aperturectl say "stable", and the members
// are the row of the core's plan over the backends' addresses (computed
// here in the test's own address order, peers keyed by ordinal).
TEST_F(EndToEnd, StableModeIsReportedWithItsPlanRow) {
  constexpr int kCalls = 100;
  ApertureChannel channel(target_,
                          "{\"mode\":\"stable\",\"peerIndex\":1,\"peerCount\":3,"
                          "\"minAperture\":2}");
  for (int i = 0; i < kCalls; i++) ASSERT_EQ(channel.Call(), GRPC_STATUS_OK) << "call " << i;

  std::vector<std::string> addresses;
  std::vector<uint64_t> endpoint_keys;
  for (auto &b : backends_) {
    addresses.push_back(b->address());
    endpoint_keys.push_back(ap_stable_key(b->address().c_str()));
  }
  const uint64_t peer_keys[3] = {ap_stable_ordinal_key(0), ap_stable_ordinal_key(1),
                                 ap_stable_ordinal_key(2)};
  ap_stable_plan *plan = nullptr;
  ap_error err;
  ASSERT_EQ(ap_stable_plan_create(endpoint_keys.data(), nullptr, endpoint_keys.size(), peer_keys,
                                  3, 2, &plan, &err),
            AP_OK)
      << err.message;
  std::set<std::string> expected;
  for (size_t k = 0; k < ap_stable_plan_row_size(plan, 1); k++) {
    expected.insert(addresses[ap_stable_plan_row_endpoints(plan, 1)[k]]);
  }
  ap_stable_plan_destroy(plan);
  ASSERT_GE(expected.size(), 2u);

  Aperture__V1__GetRingStateResponse *resp = QueryStatus(status_port_, backends_[0]->address());
  ASSERT_NE(resp, nullptr);
  ASSERT_EQ(resp->n_rings, 1u);
  const Aperture__V1__RingState *ring = resp->rings[0];
  EXPECT_STREQ(ring->mode, "stable");
  EXPECT_EQ(ring->peer_index, 1u);
  EXPECT_EQ(ring->peer_count, 3u);
  EXPECT_EQ(ring->logical_aperture, 2u);
  EXPECT_EQ(ring->physical_aperture, static_cast<uint32_t>(expected.size()));
  std::set<std::string> members;
  uint64_t picks = 0;
  for (size_t i = 0; i < ring->n_endpoints; i++) {
    const Aperture__V1__EndpointState *e = ring->endpoints[i];
    if (e->in_aperture) members.insert(e->address);
    picks += e->picks;
  }
  EXPECT_EQ(members, expected);
  EXPECT_EQ(picks, static_cast<uint64_t>(kCalls));
  for (auto &b : backends_) {
    if (expected.count(b->address()) == 0) {
      EXPECT_EQ(b->calls(), 0) << b->address();
    }
  }
  aperture__v1__get_ring_state_response__free_unpacked(resp, nullptr);

  CtlOutput ctl = RunAperturectl("status 127.0.0.1:" + std::to_string(status_port_) +
                                 " --target " + backends_[0]->address());
  ASSERT_EQ(ctl.exit_code, 0);
  EXPECT_NE(ctl.out.find("mode stable  coordinate 1/3 (config)"), std::string::npos) << ctl.out;
  ctl = RunAperturectl("status 127.0.0.1:" + std::to_string(status_port_) + " --target " +
                       backends_[0]->address() + " --json");
  ASSERT_EQ(ctl.exit_code, 0);
  EXPECT_NE(ctl.out.find("\"mode\":\"stable\""), std::string::npos) << ctl.out;
}

TEST_F(EndToEnd, PeersAgreeOnTheRingAndTogetherCoverIt) {
  // Three clients of one fleet of three: the same ordered endpoint list
  // (fingerprint), different windows, and together every backend covered;
  // in the default mode (smooth) and in stable (every endpoint is covered
  // by at least one client, ap_stable.h).
  for (const char *mode : {"smooth", "stable"}) {
    SCOPED_TRACE(mode);
    ExpectPeersAgreeAndCover(mode);
  }
}

void EndToEnd::ExpectPeersAgreeAndCover(const std::string &mode) {
  std::vector<std::unique_ptr<ApertureChannel>> channels;
  for (int peer = 0; peer < 3; peer++) {
    // A distinct (equivalent) target per peer so each channel is its own entry.
    std::string t = target_;
    std::string cfg = "{\"mode\":\"" + mode + "\",\"peerIndex\":" + std::to_string(peer) +
                      ",\"peerCount\":3}";
    channels.push_back(std::make_unique<ApertureChannel>(t, cfg));
    ASSERT_EQ(channels.back()->Call(), GRPC_STATUS_OK);
  }
  Aperture__V1__GetRingStateResponse *resp = QueryStatus(status_port_, backends_[0]->address());
  ASSERT_NE(resp, nullptr);
  ASSERT_EQ(resp->n_rings, 3u);
  std::set<uint32_t> peers;
  std::set<std::string> covered;
  for (size_t r = 0; r < resp->n_rings; r++) {
    const Aperture__V1__RingState *ring = resp->rings[r];
    EXPECT_STREQ(ring->fingerprint, resp->rings[0]->fingerprint);
    EXPECT_EQ(ring->mode, mode);
    EXPECT_EQ(ring->peer_count, 3u);
    peers.insert(ring->peer_index);
    for (size_t i = 0; i < ring->n_endpoints; i++)
      if (ring->endpoints[i]->in_aperture) covered.insert(ring->endpoints[i]->address);
  }
  EXPECT_EQ(peers, (std::set<uint32_t>{0, 1, 2}));
  EXPECT_EQ(covered.size(), static_cast<size_t>(kBackends));
  aperture__v1__get_ring_state_response__free_unpacked(resp, nullptr);

  // Destroying the channels removes their entries.
  channels.clear();
  resp = QueryStatus(status_port_, backends_[0]->address());
  ASSERT_NE(resp, nullptr);
  EXPECT_EQ(resp->n_rings, 0u);
  aperture__v1__get_ring_state_response__free_unpacked(resp, nullptr);
}

// Status queries from two threads while channels are created, used and
// destroyed (instances register, publish and unregister): every response
// decodes and every ring in it is whole. The readers run until the churn
// ends, and each round waits until a reader has seen that round's ring, so
// the queries provably overlap the churn.
TEST_F(EndToEnd, QueriesWhileChannelsChurn) {
  constexpr int kRounds = 15;
  constexpr int kMaxQueries = 200000;  // a bound, far above what 15 rounds take
  std::atomic<bool> done{false};
  std::atomic<int> bad{0}, queries{0}, rings_seen{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; t++) {
    readers.emplace_back([&] {
      while (!done.load() && queries.load() < kMaxQueries) {
        Aperture__V1__GetRingStateResponse *resp =
            QueryStatus(status_port_, backends_[0]->address());
        queries++;
        if (resp == nullptr) {
          bad++;
          continue;
        }
        for (size_t r = 0; r < resp->n_rings; r++) {
          if (resp->rings[r]->n_endpoints != resp->rings[r]->endpoint_count) bad++;
        }
        rings_seen += static_cast<int>(resp->n_rings);
        aperture__v1__get_ring_state_response__free_unpacked(resp, nullptr);
      }
    });
  }
  int rounds_seen = 0;
  for (int round = 0; round < kRounds; round++) {
    ApertureChannel channel(target_, "{\"peerIndex\":" + std::to_string(round % 3) +
                                         ",\"peerCount\":3}");
    for (int i = 0; i < 5; i++) EXPECT_EQ(channel.Call(), GRPC_STATUS_OK);
    // This round's channel is alive: a reader must report its ring before
    // the channel goes (bounded wait: 2000 x 5 ms).
    const int before = rings_seen.load();
    bool seen = false;
    for (int wait = 0; wait < 2000 && !seen; wait++) {
      seen = rings_seen.load() > before;
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!seen) break;  // the readers see nothing: no need to wait out every round
    rounds_seen++;
  }
  const int queries_at_end = queries.load();
  done = true;
  for (auto &th : readers) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(rounds_seen, kRounds) << "rounds whose ring no reader saw while it lived";
  EXPECT_GT(rings_seen.load(), 0);
  EXPECT_LT(queries_at_end, kMaxQueries) << "the readers stopped before the churn ended";
}

}  // namespace
