// The data path under a status flood: unary call rate on a live aperture
// channel (12 backends on 127.0.0.1), and the cost of registering and
// removing a policy instance (what channel creation and shutdown do), each
// measured in rounds without and with threads that query GetRingState in a
// loop. The status server answers from the same process, whose registry
// also holds a 100,000-endpoint ring so every query copies a full page.
// Bounded: fixed calls per round, fixed rounds, the flood stops with each
// round.
//   bazel run -c opt //tests/status:status_flood_bench --
//       [calls] [rounds] [flood_threads] [endpoints_per_status_call]
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "policy/include/aperture.h"
#include "policy/registry/ap_registry.h"
}
#include "tests/lb/lb_test_util.h"
#include "tests/status/fake_instance.h"

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Threads that call GetRingState (`endpoints` endpoints a call; 0 = none)
// back to back on persistent channels until stopped.
class StatusFlood {
 public:
  StatusFlood(int port, int threads, uint32_t endpoints) {
    Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
    req.max_endpoints = endpoints;
    req.omit_endpoints = endpoints == 0;
    std::string bytes(aperture__v1__get_ring_state_request__get_packed_size(&req), '\0');
    aperture__v1__get_ring_state_request__pack(&req, reinterpret_cast<uint8_t*>(&bytes[0]));
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this, port, bytes] { Run(port, bytes); });
    }
  }
  ~StatusFlood() { Stop(); }
  void Stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  long ok() const { return ok_.load(); }
  long refused() const { return refused_.load(); }

 private:
  void Run(int port, const std::string& bytes) {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                       grpc::InsecureChannelCredentials());
    grpc::GenericStub stub(channel);
    while (!stop_) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      grpc::Slice slice(bytes);
      grpc::ByteBuffer request(&slice, 1), response;
      std::mutex mu;
      std::condition_variable cv;
      bool done = false;
      grpc::Status status;
      stub.UnaryCall(&context, "/aperture.v1.ApertureStatus/GetRingState", grpc::StubOptions(),
                     &request, &response, [&](grpc::Status s) {
                       std::lock_guard<std::mutex> lock(mu);
                       status = std::move(s);
                       done = true;
                       cv.notify_one();
                     });
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return done; });
      if (status.ok()) {
        ok_++;
      } else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        refused_++;
      }
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<long> ok_{0}, refused_{0};
  std::vector<std::thread> threads_;
};

int NoState(void*, ap_ring_state*) { return AP_SNAPSHOT_SKIP; }

// Microseconds per ap_registry_add + ap_registry_remove pair, `n` pairs.
std::vector<double> RegistryChurn(int n) {
  std::vector<double> us;
  us.reserve(n);
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    ap_registry_entry* e = nullptr;
    ap_registry_add(NoState, nullptr, &e, nullptr);
    ap_registry_remove(e);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return us;
}

struct Round {
  double calls_per_s = 0;
  double churn_p50_us = 0, churn_max_us = 0;
  long status_ok = 0, status_refused = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int calls = argc > 1 ? atoi(argv[1]) : 10000;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  int flood_threads = argc > 3 ? atoi(argv[3]) : 4;
  int page = argc > 4 ? atoi(argv[4]) : 1000;
  if (calls <= 0 || rounds <= 0 || flood_threads <= 0 || page < 0 || page > 10000) {
    fprintf(stderr,
            "usage: status_flood_bench [calls>0] [rounds>0] [flood_threads>0] "
            "[endpoints_per_status_call 0..10000]\n");
    return 2;
  }
  aperture_status_server* server = nullptr;
  aperture_error err;
  if (aperture_status_server_start(nullptr, &server, &err) != APERTURE_OK) {
    fprintf(stderr, "status server: %s\n", err.message);
    return 1;
  }
  int port = aperture_status_server_port(server);
  RegisteredInstance big_ring("fake:///big-ring", 100000);

  std::vector<std::unique_ptr<aperture_test::Backend>> backends;
  std::vector<std::string> addresses;
  for (int i = 0; i < 12; ++i) {
    backends.push_back(std::make_unique<aperture_test::Backend>());
    addresses.push_back(backends.back()->address());
  }
  aperture_test::TestChannel channel(
      "flood-bench",
      "{\"loadBalancingConfig\":[{\"aperture\":{\"peerIndex\":0,\"peerCount\":1,"
      "\"eagerConnect\":true}}]}");
  channel.SetAddresses(addresses);
  if (channel.RunLoad(2000, 16) != 0) {
    fprintf(stderr, "warm-up calls failed\n");
    return 1;
  }

  std::vector<Round> quiet, flooded;
  for (int r = 0; r < 2 * rounds; ++r) {
    // Alternate (quiet first on even rounds) so both see the same machine.
    bool flood = (r % 2 == 1) != (r / 2 % 2 == 1);
    Round round;
    std::unique_ptr<StatusFlood> f;
    if (flood) f = std::make_unique<StatusFlood>(port, flood_threads, static_cast<uint32_t>(page));
    std::vector<double> churn;
    std::thread churner([&churn] { churn = RegistryChurn(500); });
    auto start = Clock::now();
    int failures = channel.RunLoad(calls, 16);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    churner.join();
    if (f) {
      f->Stop();
      round.status_ok = f->ok();
      round.status_refused = f->refused();
    }
    if (failures != 0) {
      fprintf(stderr, "%d calls failed\n", failures);
      return 1;
    }
    round.calls_per_s = calls / seconds;
    round.churn_p50_us = Median(churn);
    round.churn_max_us = *std::max_element(churn.begin(), churn.end());
    (flood ? flooded : quiet).push_back(round);
  }

  auto report = [](const char* name, const std::vector<Round>& rs) {
    std::vector<double> qps, p50, mx;
    long ok = 0, refused = 0;
    for (const Round& r : rs) {
      qps.push_back(r.calls_per_s);
      p50.push_back(r.churn_p50_us);
      mx.push_back(r.churn_max_us);
      ok += r.status_ok;
      refused += r.status_refused;
    }
    printf("%-8s calls/s median %7.0f (min %7.0f, max %7.0f)  add+remove median %5.1f us, "
           "max per round median %7.1f us  status calls ok %ld refused %ld\n",
           name, Median(qps), *std::min_element(qps.begin(), qps.end()),
           *std::max_element(qps.begin(), qps.end()), Median(p50), Median(mx), ok, refused);
  };
  printf("%d calls x %d rounds each, 16 in flight, 12 backends; flood: %d threads of "
         "GetRingState (%d of 100,000 endpoints per call)\n",
         calls, rounds, flood_threads, page);
  report("quiet", quiet);
  report("flood", flooded);
  aperture_status_server_stop(server);
  return 0;
}
