// RPC throughput on loopback through aperture, round_robin and pick_first,
// in one run against the same 12 backends: closed loop, fixed number of
// calls per round, rounds interleaved so the policies see the same machine.
//   bazel run -c opt //tests/lb:rpc_benchmark -- [calls] [concurrency] [rounds]
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/lb/lb_test_util.h"

using aperture_test::Backend;
using aperture_test::TestChannel;

int main(int argc, char** argv) {
  int calls = argc > 1 ? atoi(argv[1]) : 20000;
  int concurrency = argc > 2 ? atoi(argv[2]) : 16;
  int rounds = argc > 3 ? atoi(argv[3]) : 5;
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::string> addresses;
  for (int i = 0; i < 12; ++i) {
    backends.push_back(std::make_unique<Backend>());
    addresses.push_back(backends.back()->address());
  }
  struct Policy {
    const char* name;
    std::string config;
    std::unique_ptr<TestChannel> channel;
    std::vector<double> qps;
  };
  std::vector<Policy> policies;
  // Aperture over all 12 backends (a single client: the window is the whole
  // ring), so that it spreads over the same servers as round_robin.
  policies.push_back({"aperture",
                      "{\"loadBalancingConfig\":[{\"aperture\":{\"peerIndex\":0,"
                      "\"peerCount\":1,\"eagerConnect\":true}}]}",
                      nullptr, {}});
  policies.push_back(
      {"round_robin", "{\"loadBalancingConfig\":[{\"round_robin\":{}}]}",
       nullptr, {}});
  policies.push_back(
      {"pick_first", "{\"loadBalancingConfig\":[{\"pick_first\":{}}]}",
       nullptr, {}});
  for (auto& p : policies) {
    p.channel = std::make_unique<TestChannel>(std::string("bench-") + p.name,
                                              p.config);
    p.channel->SetAddresses(addresses);
    if (p.channel->RunLoad(2000, concurrency) != 0) {  // warm-up
      fprintf(stderr, "%s: warm-up calls failed\n", p.name);
      return 1;
    }
  }
  for (int r = 0; r < rounds; ++r) {
    // Rotate the order every round so no policy always runs first.
    for (size_t k = 0; k < policies.size(); ++k) {
      Policy& p = policies[(k + r) % policies.size()];
      auto start = std::chrono::steady_clock::now();
      int failures = p.channel->RunLoad(calls, concurrency);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      if (failures != 0) {
        fprintf(stderr, "%s: %d calls failed\n", p.name, failures);
        return 1;
      }
      p.qps.push_back(calls / seconds);
    }
  }
  printf("%d calls x %d rounds, %d in flight, 12 backends on 127.0.0.1\n",
         calls, rounds, concurrency);
  double aperture_median = 0, rr_median = 0;
  for (auto& p : policies) {
    std::sort(p.qps.begin(), p.qps.end());
    double median = p.qps[p.qps.size() / 2];
    printf("%-12s median %8.0f calls/s  (min %8.0f, max %8.0f)\n", p.name,
           median, p.qps.front(), p.qps.back());
    if (std::string(p.name) == "aperture") aperture_median = median;
    if (std::string(p.name) == "round_robin") rr_median = median;
  }
  printf("aperture / round_robin = %.3f\n", aperture_median / rr_median);
  return 0;
}
