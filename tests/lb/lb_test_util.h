// Test helpers for the aperture policy: real backends on 127.0.0.1 that
// answer with their own address, client channels through gRPC's fake
// resolver (calls optionally carrying a request header), registry
// snapshots, channelz connection counts, and expected subsets from the
// independent oracle in tests/oracle (never from the core under test).
#ifndef APERTURE_TESTS_LB_TEST_UTIL_H
#define APERTURE_TESTS_LB_TEST_UTIL_H

#include <stdint.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>

#include "absl/status/status.h"
#include "tests/oracle/aperture_oracle.h"
#include "src/core/ext/filters/client_channel/resolver/fake/fake_resolver.h"

namespace aperture_test {

// Trailing metadata a Backend sends with every answer (key, value; a
// "-bin" key takes raw bytes).
using Trailers = std::vector<std::pair<std::string, std::string>>;

// A unary server for any method that answers every call with its own
// address ("127.0.0.1:<port>"), so the client sees which backend served it;
// counts its calls; optional delay and trailing metadata.
class Backend {
 public:
  explicit Backend(int delay_ms = 0, Trailers trailers = {});
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:<port>"
  uint64_t calls() const { return calls_.load(); }
  void ResetCalls() { calls_.store(0); }
  bool running() const { return server_ != nullptr; }
  // Graceful stop (in-flight calls finish), then the port is free.
  void Stop();
  // Starts again on the same port.
  void Restart();
  // Frozen: calls are accepted and held unanswered, connections stay up
  // (a hung process); unfreezing answers the held calls.
  void Freeze(bool frozen);
  // Calls held now by a freeze.
  size_t held() const;
  // A latency tail: from now on a share of the calls (the seed's draws,
  // interop/testing/latency_tail.h) answers `delay_ms` late, the others as
  // before; share 0 ends it.
  void SetTail(double share, int delay_ms, uint64_t seed);

 private:
  class Service;
  // Serves on exactly `port`; false (nothing running) when it cannot.
  bool Listen(int port);

  const int delay_ms_;
  const Trailers trailers_;
  int port_ = 0;
  std::atomic<uint64_t> calls_{0};
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

// Server-side connection count of the backend listening on `port`, from
// channelz; -1 when no server listens there.
int ServerConnectionCount(int port);

// A channel whose addresses the test sets through the fake resolver.
class TestChannel {
 public:
  // `name` makes the target "fake:///<name>" (the registry filter);
  // `service_config` is the channel's default config ("" for none).
  // `retries` false turns gRPC's retries off, transparent ones included, so
  // every call is exactly one attempt (one pick, one tracked result).
  // `int_args` are extra integer channel args (e.g. the coordinate).
  TestChannel(const std::string& name, const std::string& service_config,
              bool retries = true,
              const std::vector<std::pair<std::string, int>>& int_args = {});
  // A resolver result; with a non-empty `service_config` the result carries
  // it, as DNS TXT records or xDS would.
  void SetAddresses(const std::vector<std::string>& addresses,
                    const std::string& service_config = "");
  // A resolver result whose addresses carry the weight attribute gRPC's
  // xDS attaches from EDS (0: no attribute), as an xDS resolver would.
  void SetWeightedAddresses(
      const std::vector<std::pair<std::string, uint32_t>>& addresses);
  // What the resolver answers from now on when the policy asks it again
  // (RequestReresolution); nothing is sent until it asks.
  void SetReresolutionAddresses(const std::vector<std::string>& addresses);
  void SetResolverError(const std::string& message);
  grpc::Status Call(int timeout_ms = 5000);
  // One call with the metadata `header: value` (none when `value` is
  // empty). Returns the address of the backend that answered; "" when the
  // call failed, and then *status (when given) says why.
  std::string CallServedBy(const std::string& header, const std::string& value,
                           grpc::Status* status = nullptr,
                           int timeout_ms = 5000);
  // `count` calls with up to `concurrency` in flight, each with a deadline
  // of `call_timeout_ms`; returns failures and fills `failures_by_code`
  // when given.
  int RunLoad(int count, int concurrency,
              std::map<int, int>* failures_by_code = nullptr,
              std::string* first_error = nullptr, int call_timeout_ms = 5000);
  const std::string& target() const { return target_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }

 private:
  // One unary call; fills *reply with the response body when given.
  grpc::Status Unary(const std::string& header, const std::string& value,
                     int timeout_ms, std::string* reply);

  std::string target_;
  grpc_core::RefCountedPtr<grpc_core::FakeResolverResponseGenerator> generator_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

// C++ copy of one registry snapshot.
struct EndpointView {
  std::string address;
  uint32_t ring_index;
  double intersection, pick_weight;
  bool in_aperture, widened;
  int connectivity;
  uint64_t outstanding, picks, failures;
  bool draining;
  std::string health;  // ap_health_state_name()
  uint64_t ejections;
  double utilization, latency_ewma_ms;  // -1: none (ap_registry.h)
  std::string ejection_reason;          // ap_health_ejection_reason()
  uint32_t stuck_after_ms;
  double endpoint_weight;  // its weight on the ring
  // The skew balance: weight factor, reported rate, this client's rate
  // (-1: none).
  double weight_factor, reported_rps, own_rate;
};
struct StateView {
  std::string target, mode, coordinate_source, last_status, fingerprint;
  std::string pick_metric;
  uint32_t peer_index, peer_count, logical_aperture, physical_aperture, widened,
      draining;
  uint64_t resolver_updates, rebuilds, subchannels_created,
      subchannels_destroyed, widenings;
  uint64_t affinity_sessions;  // entries in the sticky session table
  // Ring snapshots computed (changed or not); stable peer keying.
  uint64_t snapshot_builds;
  std::string peer_keys;
  std::vector<std::string> config_warnings;  // ignored config fields
  // Peer discovery: watched target, peer list fingerprint, changes.
  std::string peer_target, peer_fingerprint;
  uint64_t coordinate_changes;
  // The skew balance (ap_ring_state's skew_*).
  std::string skew_reason;
  double skew_own_rate, skew_others_rate, skew_ratio, skew_multiplier;
  // Gray failures' bound: maxEjectionPercent, members out now, the most
  // that may be out at this aperture size.
  uint32_t max_ejection_percent, members_out, max_members_out;
  double peer_failure_share;  // the health sweep's; -1 unknown
  std::vector<EndpointView> endpoints;
  const EndpointView* Find(const std::string& address) const;
  std::vector<std::string> Members() const;
  // True when `address` is in the aperture.
  bool IsMember(const std::string& address) const;
  // True when `address` is in the aperture and its subchannel is READY.
  bool MemberReady(const std::string& address) const;
};
// Snapshot of the single live policy whose target contains `filter`; false
// when there is none (or more than one).
bool Snapshot(const std::string& filter, StateView* out);

// Polls `condition` every 10 ms for up to `timeout_ms`.
bool WaitFor(const std::function<bool()>& condition, int timeout_ms = 10000);

// Polls the snapshot of the single live policy whose target contains
// `filter` until `condition` holds for it (as WaitFor).
bool WaitForState(const std::string& filter,
                  const std::function<bool(const StateView&)>& condition,
                  int timeout_ms = 10000);

// Starts n backends on ephemeral 127.0.0.1 ports.
std::vector<std::unique_ptr<Backend>> StartBackends(int n);

// The backends' "127.0.0.1:port" addresses, in the same order.
std::vector<std::string> Addresses(
    const std::vector<std::unique_ptr<Backend>>& backends);

// The backend listening on `address`; nullptr when none does. The vector
// keeps ownership.
Backend* FindBackend(const std::vector<std::unique_ptr<Backend>>& backends,
                     const std::string& address);

// {"loadBalancingConfig":[{"aperture":<aperture_json>}]}
std::string Config(const std::string& aperture_json);

// Waits until the aperture of the policy whose target contains `target` has
// exactly `members` members and all of them are READY.
bool WaitAllMembersReady(const std::string& target, size_t members);

// Parses `aperture_json` as the "aperture" entry of a loadBalancingConfig
// list through gRPC's LB policy registry, as a channel does.
absl::Status ParseThroughRegistry(const std::string& aperture_json);

// Expected members (address -> pick weight) of client `peer_index` of
// `peer_count`, computed by the oracle from the definitions; `weights` (when
// given) is parallel to `addresses`. Every address must be on one host
// (the tests' backends all listen on 127.0.0.1).
std::map<std::string, double> ExpectedMembers(
    const std::vector<std::string>& addresses, oracle::Mode mode,
    uint32_t peer_index, uint32_t peer_count, uint32_t min_aperture,
    const std::vector<double>* weights = nullptr);

}  // namespace aperture_test

#endif  // APERTURE_TESTS_LB_TEST_UTIL_H
