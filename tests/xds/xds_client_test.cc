// The aperture policy as the endpoint-picking policy of an xDS cluster,
// through gRPC's real xDS client: the interop client dials
// xds:///aperture-xds with a bootstrap pointing at the test management
// server (//interop/xds), which serves Listener -> RouteConfiguration ->
// Cluster (load_balancing_policy: aperture as a TypedStruct) ->
// ClusterLoadAssignment over ADS. EDS changes move the ring; CDS changes
// move the config; EDS endpoint weights shape the ring; the client's status
// server shows all three.
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <grpc/grpc.h>
#include <gtest/gtest.h>

#include "aperture/v1/status.pb-c.h"
#include "grpc/testing/messages.pb-c.h"
#include "interop/common/unary_call.h"
#include "interop/xds/xds_server.h"
#include "tests/interop/fleet_helper.h"

namespace {

constexpr char kListener[] = "aperture-xds";

int PortOf(const std::string &address) {
  size_t colon = address.rfind(':');
  return colon == std::string::npos ? -1 : atoi(address.c_str() + colon + 1);
}

// What the client's status server says about its one aperture ring.
struct Ring {
  bool ok = false;
  std::string mode, fingerprint;
  uint32_t min_aperture = 0, physical = 0, endpoint_count = 0;
  std::set<int> endpoints, members;  // ports
  std::map<int, double> weights;     // port -> endpoint_weight
};

Ring GetRing(const std::string &status_addr) {
  Ring out;
  grpc_channel *ch = io_unary_channel_create(("ipv4:" + status_addr).c_str(), nullptr);
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  unary_result r;
  if (io_unary_call(ch, "/aperture.v1.ApertureStatus/GetRingState", &req.base,
                 &aperture__v1__get_ring_state_response__descriptor, nullptr, nullptr, 5000,
                 &r) == 0) {
    auto *resp = reinterpret_cast<Aperture__V1__GetRingStateResponse *>(r.response);
    if (r.code == GRPC_STATUS_OK && resp != nullptr && resp->n_rings == 1) {
      const Aperture__V1__RingState *ring = resp->rings[0];
      out.ok = true;
      out.mode = ring->mode;
      out.min_aperture = ring->min_aperture;
      out.physical = ring->physical_aperture;
      out.endpoint_count = ring->endpoint_count;
      out.fingerprint = ring->fingerprint;
      for (size_t e = 0; e < ring->n_endpoints; e++) {
        int port = PortOf(ring->endpoints[e]->address);
        out.endpoints.insert(port);
        out.weights[port] = ring->endpoints[e]->endpoint_weight;
        if (ring->endpoints[e]->in_aperture) out.members.insert(port);
      }
    }
    io_unary_result_free(&r);
  }
  grpc_channel_destroy(ch);
  return out;
}

// Polls the ring (every 50 ms, up to 20 s) until its endpoints are `ports`.
Ring WaitForEndpoints(const std::string &status_addr, const std::set<int> &ports) {
  Ring ring;
  for (int attempt = 0; attempt < 400; attempt++) {
    ring = GetRing(status_addr);
    if (ring.ok && ring.endpoints == ports) break;
    usleep(50000);
  }
  return ring;
}

// Calls per hostname ("s<i>") among the client's next `n` calls.
std::map<std::string, long> CallsOfNextCalls(const std::string &stats_addr, int n,
                                             int *failures) {
  std::map<std::string, long> peers;
  grpc_channel *ch = io_unary_channel_create(("ipv4:" + stats_addr).c_str(), nullptr);
  Grpc__Testing__LoadBalancerStatsRequest req = GRPC__TESTING__LOAD_BALANCER_STATS_REQUEST__INIT;
  req.num_rpcs = n;
  req.timeout_sec = 20;
  unary_result r;
  *failures = -1;
  if (io_unary_call(ch, "/grpc.testing.LoadBalancerStatsService/GetClientStats", &req.base,
                 &grpc__testing__load_balancer_stats_response__descriptor, nullptr, nullptr,
                 30000, &r) == 0) {
    auto *stats = reinterpret_cast<Grpc__Testing__LoadBalancerStatsResponse *>(r.response);
    if (r.code == GRPC_STATUS_OK && stats != nullptr) {
      *failures = stats->num_failures;
      for (size_t i = 0; i < stats->n_rpcs_by_peer; i++)
        peers[stats->rpcs_by_peer[i]->key] += stats->rpcs_by_peer[i]->value;
    }
    io_unary_result_free(&r);
  }
  grpc_channel_destroy(ch);
  return peers;
}

// Hostnames ("s<i>") of the servers that the client's next `n` calls reached.
std::set<std::string> PeersOfNextCalls(const std::string &stats_addr, int n, int *failures) {
  std::set<std::string> peers;
  for (const auto &kv : CallsOfNextCalls(stats_addr, n, failures)) peers.insert(kv.first);
  return peers;
}

class XdsClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { grpc_init(); }
  static void TearDownTestSuite() { grpc_shutdown(); }

  void TearDown() override {
    client_.reset();
    second_.reset();
    xds_server_stop(xds_);
    xds_ = nullptr;
  }

  // Starts the management server with servers [first, last) and `policy`;
  // with `weights`, server i's EDS load_balancing_weight is weights[i - first].
  void StartXds(const ServerSet &servers, int first, int last, const std::string &policy,
                const std::vector<uint32_t> &weights = {}) {
    std::vector<std::string> addrs;
    for (int i = first; i < last; i++) addrs.push_back(servers.Address(i));
    std::vector<const char *> ptrs;
    for (auto &a : addrs) ptrs.push_back(a.c_str());
    xds_server_options o = {};
    o.listener_name = kListener;
    o.cluster_name = "aperture-cluster";
    o.policy_name = "aperture";
    o.policy_json = policy.c_str();
    o.endpoints = ptrs.data();
    o.n_endpoints = ptrs.size();
    o.endpoint_weights = weights.empty() ? nullptr : weights.data();
    char err[256] = "";
    ASSERT_EQ(0, xds_server_start(&o, &xds_, err, sizeof err)) << err;
  }

  void SetEndpoints(const ServerSet &servers, const std::vector<int> &which) {
    std::vector<std::string> addrs;
    for (int i : which) addrs.push_back(servers.Address(i));
    std::vector<const char *> ptrs;
    for (auto &a : addrs) ptrs.push_back(a.c_str());
    char err[256] = "";
    ASSERT_EQ(0, xds_server_set_endpoints(xds_, ptrs.data(), ptrs.size(), err, sizeof err)) << err;
    EXPECT_EQ(0, xds_server_wait_acked(xds_, XDS_EDS, 20000));
  }

  // The interop client on xds:///aperture-xds, peer 0 of 2, about 100
  // calls/s for at most 60 s; the bootstrap comes from the environment.
  void StartClient(const ServerSet &servers) {
    client_ = StartPeer(servers, 0, 100, &stats_addr_, &status_addr_);
  }

  // Peer `index` of 2 on xds:///aperture-xds at `rate` calls/s, with its
  // stats and status addresses.
  std::unique_ptr<Child> StartPeer(const ServerSet &servers, int index, int rate,
                                   std::string *stats_addr, std::string *status_addr) {
    std::string bootstrap =
        "{\"xds_servers\":[{\"server_uri\":\"127.0.0.1:" + std::to_string(xds_server_port(xds_)) +
        "\",\"channel_creds\":[{\"type\":\"insecure\"}],\"server_features\":[\"xds_v3\"]}],"
        "\"node\":{\"id\":\"aperture-client-" + std::to_string(index) +
        "\",\"cluster\":\"aperture-test\"}}";
    setenv("GRPC_XDS_BOOTSTRAP_CONFIG", bootstrap.c_str(), 1);
    setenv("GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG", "true", 1);
    const std::string name = index == 0 ? "" : std::to_string(index);
    auto child = std::make_unique<Child>(
        InteropBinary("client"),
        std::vector<std::string>{"--target", std::string("xds:///") + kListener, "--peer-index",
                                 std::to_string(index), "--peer-count", "2", "--calls", "0",
                                 "--rate", std::to_string(rate), "--duration-s", "60",
                                 "--stats-port", "0", "--status-port", "0", "--summary-file",
                                 servers.dir() + "/summary" + name + ".json"},
        servers.dir() + "/client" + name + ".log");
    unsetenv("GRPC_XDS_BOOTSTRAP_CONFIG");
    unsetenv("GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG");
    *stats_addr = child->WaitLine("stats listening ");
    *status_addr = child->WaitLine("status listening ");
    EXPECT_FALSE(stats_addr->empty());
    EXPECT_FALSE(status_addr->empty());
    return child;
  }

  // Waits until each server's open connections are 1 for members, 0 else.
  void ExpectConnectionsOnlyToMembers(ServerSet &servers, const std::set<int> &members) {
    std::vector<int> conns(servers.size(), -1);
    for (int attempt = 0; attempt < 400; attempt++) {
      bool match = true;
      for (int i = 0; i < servers.size(); i++) {
        Json snap = servers.Snapshot(i);
        conns[i] = static_cast<int>(io_json_get_number(snap.get(), "connections_current", -1));
        if (conns[i] != (members.count(servers.port(i)) ? 1 : 0)) match = false;
      }
      if (match) break;
      usleep(50000);
    }
    for (int i = 0; i < servers.size(); i++)
      EXPECT_EQ(members.count(servers.port(i)) ? 1 : 0, conns[i]) << "server s" << i;
  }

  // The next 100 calls go only to members of the aperture, none fails.
  void ExpectCallsOnlyToMembers(const ServerSet &servers, const std::set<int> &members) {
    std::set<std::string> member_names;
    for (int i = 0; i < servers.size(); i++)
      if (members.count(servers.port(i))) member_names.insert(servers.hostname(i));
    int failures = -1;
    std::set<std::string> peers = PeersOfNextCalls(stats_addr_, 100, &failures);
    EXPECT_EQ(0, failures);
    EXPECT_FALSE(peers.empty());
    for (const auto &p : peers) EXPECT_EQ(1u, member_names.count(p)) << p << " is not a member";
  }

  // Stops the client; its summary counts no failed call.
  void ExpectNoFailedCalls(const ServerSet &servers) {
    ASSERT_NE(nullptr, client_);
    int status = client_->Terminate();
    EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    client_.reset();
    Json summary = ReadJson(servers.dir() + "/summary.json");
    ASSERT_TRUE(summary);
    EXPECT_GT(io_json_get_number(summary.get(), "ok", 0), 0);
    EXPECT_EQ(0, io_json_get_number(summary.get(), "failed", -1));
  }

  xds_server *xds_ = nullptr;
  std::unique_ptr<Child> client_, second_;
  std::string stats_addr_, status_addr_;
};

std::set<int> Ports(const ServerSet &servers, const std::vector<int> &which) {
  std::set<int> out;
  for (int i : which) out.insert(servers.port(i));
  return out;
}

TEST_F(XdsClientTest, EdsAddsAndRemovesEndpointsAndTheApertureFollows) {
  // 6 servers, EDS first lists s0..s3. Peer 0 of 2, continuous, minAperture
  // 2 over 4 endpoints: the window is 1/2 of the ring = 2 arcs exactly, so
  // 2 members; eagerConnect connects them without waiting for picks.
  ServerSet servers(6, {}, "xds_eds");
  StartXds(servers, 0, 4, "{\"mode\":\"continuous\",\"minAperture\":2,\"eagerConnect\":true}");
  StartClient(servers);
  Ring ring = WaitForEndpoints(status_addr_, Ports(servers, {0, 1, 2, 3}));
  ASSERT_TRUE(ring.ok);
  ASSERT_EQ(Ports(servers, {0, 1, 2, 3}), ring.endpoints);
  EXPECT_EQ("continuous", ring.mode);
  EXPECT_EQ(2u, ring.min_aperture);
  EXPECT_EQ(2u, ring.members.size());
  EXPECT_EQ(ring.physical, ring.members.size());
  ExpectCallsOnlyToMembers(servers, ring.members);
  ExpectConnectionsOnlyToMembers(servers, ring.members);

  // EDS adds s4, s5 (6 endpoints): window 1/2 = 3 arcs, 3 members.
  SetEndpoints(servers, {0, 1, 2, 3, 4, 5});
  ring = WaitForEndpoints(status_addr_, Ports(servers, {0, 1, 2, 3, 4, 5}));
  ASSERT_EQ(Ports(servers, {0, 1, 2, 3, 4, 5}), ring.endpoints);
  EXPECT_EQ(3u, ring.members.size());
  ExpectCallsOnlyToMembers(servers, ring.members);
  ExpectConnectionsOnlyToMembers(servers, ring.members);

  // EDS removes s0, s1, s2: the ring shrinks to s3..s5, connections to the
  // removed servers close.
  SetEndpoints(servers, {3, 4, 5});
  ring = WaitForEndpoints(status_addr_, Ports(servers, {3, 4, 5}));
  ASSERT_EQ(Ports(servers, {3, 4, 5}), ring.endpoints);
  EXPECT_GE(ring.members.size(), 2u);
  for (int p : ring.members) EXPECT_EQ(1u, Ports(servers, {3, 4, 5}).count(p));
  ExpectCallsOnlyToMembers(servers, ring.members);
  ExpectConnectionsOnlyToMembers(servers, ring.members);

  xds_server_counts counts;
  xds_server_get_counts(xds_, &counts);
  EXPECT_EQ(1u, counts.streams);
  EXPECT_EQ(3u, counts.acked[XDS_EDS]);
  EXPECT_EQ(0u, counts.nacks[XDS_CDS] + counts.nacks[XDS_EDS]);
  ExpectNoFailedCalls(servers);
}

TEST_F(XdsClientTest, CdsConfigChangesApplyAndABadConfigIsRejectedNamingTheField) {
  // 6 servers, all in EDS, continuous with minAperture 2: window 1/2 of the
  // ring = 3 members.
  ServerSet servers(6, {}, "xds_cds");
  StartXds(servers, 0, 6, "{\"mode\":\"continuous\",\"minAperture\":2,\"eagerConnect\":true}");
  StartClient(servers);
  std::set<int> all = Ports(servers, {0, 1, 2, 3, 4, 5});
  Ring ring = WaitForEndpoints(status_addr_, all);
  ASSERT_EQ(all, ring.endpoints);
  EXPECT_EQ(3u, ring.members.size());
  ExpectConnectionsOnlyToMembers(servers, ring.members);

  // CDS: minAperture 4 -> the window is 4/6 of the ring... per peer
  // ceil(4*2/6)/2 = 1, i.e. the whole ring: every endpoint is a member.
  char err[256] = "";
  ASSERT_EQ(0, xds_server_set_policy_json(
                   xds_, "{\"mode\":\"continuous\",\"minAperture\":4,\"eagerConnect\":true}", err,
                   sizeof err))
      << err;
  ASSERT_EQ(0, xds_server_wait_acked(xds_, XDS_CDS, 20000));
  for (int attempt = 0; attempt < 400 && ring.min_aperture != 4; attempt++) {
    usleep(50000);
    ring = GetRing(status_addr_);
  }
  EXPECT_EQ(4u, ring.min_aperture);
  EXPECT_EQ(6u, ring.members.size());
  ExpectCallsOnlyToMembers(servers, ring.members);
  ExpectConnectionsOnlyToMembers(servers, ring.members);

  // CDS: mode mesh (every endpoint, no subsetting) applies as well.
  ASSERT_EQ(0, xds_server_set_policy_json(xds_, "{\"mode\":\"mesh\",\"eagerConnect\":true}", err,
                                          sizeof err))
      << err;
  ASSERT_EQ(0, xds_server_wait_acked(xds_, XDS_CDS, 20000));
  for (int attempt = 0; attempt < 400 && ring.mode != "mesh"; attempt++) {
    usleep(50000);
    ring = GetRing(status_addr_);
  }
  EXPECT_EQ("mesh", ring.mode);
  EXPECT_EQ(6u, ring.members.size());

  // A config the policy rejects: the client NACKs the Cluster with the
  // policy's message (naming the field) and keeps the last good config.
  ASSERT_EQ(0, xds_server_set_policy_json(xds_, "{\"minAperture\":0}", err, sizeof err)) << err;
  EXPECT_EQ(-1, xds_server_wait_acked(xds_, XDS_CDS, 20000));
  xds_server_counts counts;
  xds_server_get_counts(xds_, &counts);
  EXPECT_EQ(1u, counts.nacks[XDS_CDS]);
  EXPECT_NE(nullptr, strstr(counts.last_nack, "minAperture")) << counts.last_nack;
  ring = GetRing(status_addr_);
  EXPECT_EQ("mesh", ring.mode);
  ExpectCallsOnlyToMembers(servers, ring.members);
  ExpectNoFailedCalls(servers);
}

// EDS gives the 4 endpoints unequal load_balancing_weights (1, 2, 3, 4):
// both peers of a fleet of 2 show each endpoint with its EDS weight and the
// same fingerprint, and the calls of the two together reach each server in
// proportion to its weight (each client's window covers half of the ring,
// the arcs are the weights' shares, and the two windows tile it).
TEST_F(XdsClientTest, EdsWeightsShapeTheRingAndTheShareOfCalls) {
  const std::vector<uint32_t> weights = {1, 2, 3, 4};
  ServerSet servers(4, {}, "xds_weights");
  StartXds(servers, 0, 4, "{\"mode\":\"continuous\",\"minAperture\":2}", weights);
  std::string stats[2], status[2];
  client_ = StartPeer(servers, 0, 300, &stats[0], &status[0]);
  second_ = StartPeer(servers, 1, 300, &stats[1], &status[1]);
  ASSERT_FALSE(stats[1].empty());
  std::set<int> all = Ports(servers, {0, 1, 2, 3});
  Ring rings[2];
  for (int k = 0; k < 2; k++) {
    rings[k] = WaitForEndpoints(status[k], all);
    ASSERT_EQ(all, rings[k].endpoints) << "peer " << k;
    for (int i = 0; i < servers.size(); i++) {
      EXPECT_EQ(static_cast<double>(weights[i]), rings[k].weights[servers.port(i)])
          << "peer " << k << " server s" << i;
    }
  }
  EXPECT_EQ(rings[0].fingerprint, rings[1].fingerprint);

  // The next 1000 calls of each peer, added up per server.
  const int kCalls = 1000;
  std::map<std::string, long> total;
  for (int k = 0; k < 2; k++) {
    int failures = -1;
    for (const auto &kv : CallsOfNextCalls(stats[k], kCalls, &failures)) total[kv.first] += kv.second;
    EXPECT_EQ(0, failures) << "peer " << k;
  }
  const double n = 2 * kCalls, sum = 1 + 2 + 3 + 4;
  for (int i = 0; i < servers.size(); i++) {
    // Each client's calls are multinomial over its members; the sum's
    // variance is at most the binomial one at the mean share. 6 standard
    // deviations plus 10.
    const double p = weights[i] / sum;
    const double tolerance = 6 * sqrt(n * p * (1 - p)) + 10;
    EXPECT_NEAR(static_cast<double>(total[servers.hostname(i)]), n * p, tolerance)
        << "server s" << i << " EDS weight " << weights[i];
  }
  // Unweighted, each would get a quarter: the heaviest gets about 4 times
  // the lightest.
  EXPECT_GT(total[servers.hostname(3)], 2 * total[servers.hostname(0)]);
  xds_server_counts counts;
  xds_server_get_counts(xds_, &counts);
  EXPECT_EQ(0u, counts.nacks[XDS_CDS] + counts.nacks[XDS_EDS]);
}

}  // namespace
