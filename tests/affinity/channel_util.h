// Helpers for the request-affinity tests through real channels: backends on
// 127.0.0.1 that answer every call with their own address, client channels
// whose addresses the test sets through gRPC's fake resolver, and the
// policy's registry snapshot.
#ifndef APERTURE_TESTS_AFFINITY_CHANNEL_UTIL_H
#define APERTURE_TESTS_AFFINITY_CHANNEL_UTIL_H

#include <stdint.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "src/core/ext/filters/client_channel/resolver/fake/fake_resolver.h"

namespace affinity_test {

// A server on an ephemeral 127.0.0.1 port whose every unary call returns
// the server's address ("127.0.0.1:<port>") as the response body.
class Backend {
 public:
  Backend();
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const std::string& address() const { return address_; }
  uint64_t calls() const { return calls_.load(); }
  // Shuts the server down (connections close); idempotent.
  void Stop();

 private:
  class Service;
  std::string address_;
  std::atomic<uint64_t> calls_{0};
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

std::vector<std::string> Addresses(
    const std::vector<std::unique_ptr<Backend>>& backends);

// {"loadBalancingConfig":[{"aperture":<aperture_json>}]}
std::string ServiceConfig(const std::string& aperture_json);

// A channel to "fake:///<name>" with the given default service config
// ("" for none).
class TestChannel {
 public:
  TestChannel(const std::string& name, const std::string& service_config);
  void SetAddresses(const std::vector<std::string>& addresses);
  // Like SetAddresses(), with a service config delivered by the resolver
  // (parsed as a resolver would: a bad one arrives as an error).
  void SetAddressesAndConfig(const std::vector<std::string>& addresses,
                             const std::string& service_config);
  // One unary call, with the metadata `header: key` unless key is empty.
  // Returns the address of the backend that answered, "" on failure (then
  // *status, when given, says why).
  std::string Call(const std::string& header, const std::string& key,
                   grpc::Status* status = nullptr, int timeout_ms = 5000);
  const std::string& target() const { return target_; }

 private:
  std::string target_;
  grpc_core::RefCountedPtr<grpc_core::FakeResolverResponseGenerator>
      generator_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

// What the registry reports for the policy instance of one channel.
struct PolicyView {
  std::map<std::string, int> connectivity;  // aperture members only
  uint64_t affinity_sessions = 0;
  bool Ready(const std::string& address) const;
  size_t ReadyCount() const;
};

// Snapshot of the single live policy whose target contains `target`.
bool Snapshot(const std::string& target, PolicyView* out);

// Polls `condition` every 10 ms for up to `timeout_ms`.
bool WaitFor(const std::function<bool()>& condition, int timeout_ms = 10000);

}  // namespace affinity_test

#endif  // APERTURE_TESTS_AFFINITY_CHANNEL_UTIL_H
