// The picker shared by several threads, as gRPC shares it between the
// threads that start calls: picks, outstanding calls and failures stay
// exact per endpoint with several calls in flight per thread, and P2C
// still reaches every endpoint. Pure atomics, no gRPC threads involved, so
// `bazel test --config=tsan //tests/lb:picker_concurrency_test` checks the
// hot path itself for races.
#include <stdint.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "policy/core/pick/ap_load_testing.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/lb/picker/picker.h"
#include "policy/lb/test_hooks.h"
#include "tests/lb/picker_fakes.h"

namespace {

using grpc_core::LoadBalancingPolicy;

using aperture_test::IdleSubchannel;
using aperture_test::ScratchCallState;

// What one thread saw, per endpoint index.
struct Tally {
  std::vector<uint64_t> picks, failures;
};

TEST(PickerConcurrency, CountersStayExactAcrossThreads) {
  const double kWeights[] = {1, 1, 1, 1, 2, 2, 2, 2};
  const size_t kEndpoints = sizeof(kWeights) / sizeof(kWeights[0]);
  const int kThreads = 4, kPicksPerThread = 20000, kInFlight = 4;

  std::vector<aperture_lb::AperturePicker::Slot> slots;
  std::map<const grpc_core::SubchannelInterface*, size_t> index_of;
  std::vector<grpc_core::RefCountedPtr<aperture_lb::EndpointCounters>> counters;
  for (size_t i = 0; i < kEndpoints; ++i) {
    auto subchannel = grpc_core::MakeRefCounted<IdleSubchannel>();
    auto c = grpc_core::MakeRefCounted<aperture_lb::EndpointCounters>();
    index_of[subchannel.get()] = i;
    counters.push_back(c);
    slots.push_back({std::move(subchannel), std::move(c), kWeights[i]});
  }
  ap_pick_table* table = nullptr;
  ASSERT_EQ(ap_pick_table_create(kWeights, kEndpoints, &table, nullptr), AP_OK);
  // Counters, not health: one call in 7 fails below, and a run of failures
  // on one endpoint would eject it (ap_health.h) and starve it for the
  // rest of this short test, so ejection and stuck detection are off.
  ap_health_config no_health_checks;
  ap_health_config_init(&no_health_checks);
  no_health_checks.eject_after_failures = 0;
  no_health_checks.stuck_call_ms = 0;
  aperture_lb::AperturePicker picker(std::move(slots),
                                     aperture_lb::PickTablePtr(table), 2, nullptr,
                                     no_health_checks);

  std::vector<Tally> tallies(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Tally& tally = tallies[t];
      tally.picks.assign(kEndpoints, 0);
      tally.failures.assign(kEndpoints, 0);
      // kInFlight calls per thread: each pick finishes the oldest call,
      // so outstanding counts move while other threads read them.
      ScratchCallState arenas[kInFlight];
      std::unique_ptr<LoadBalancingPolicy::SubchannelCallTrackerInterface>
          trackers[kInFlight];
      size_t endpoint_of[kInFlight] = {0};
      for (int n = 0; n < kPicksPerThread; ++n) {
        const int k = n % kInFlight;
        if (trackers[k] != nullptr) {
          const bool fail = n % 7 == 0;
          trackers[k]->Finish({fail ? absl::UnavailableError("x") : absl::OkStatus(),
                               nullptr, nullptr});
          if (fail) ++tally.failures[endpoint_of[k]];
          trackers[k].reset();
        }
        LoadBalancingPolicy::PickArgs args{"/test.Service/Method", nullptr, &arenas[k]};
        LoadBalancingPolicy::PickResult result = picker.Pick(args);
        auto* complete =
            absl::get_if<LoadBalancingPolicy::PickResult::Complete>(&result.result);
        ASSERT_NE(complete, nullptr);
        auto it = index_of.find(complete->subchannel.get());
        ASSERT_NE(it, index_of.end());
        endpoint_of[k] = it->second;
        ++tally.picks[it->second];
        trackers[k] = std::move(complete->subchannel_call_tracker);
        trackers[k]->Start();
      }
      for (int k = 0; k < kInFlight; ++k) {
        if (trackers[k] == nullptr) continue;
        trackers[k]->Finish({absl::OkStatus(), nullptr, nullptr});
        trackers[k].reset();
      }
    });
  }
  for (auto& th : threads) th.join();

  uint64_t total = 0;
  for (size_t i = 0; i < kEndpoints; ++i) {
    uint64_t picks = 0, failures = 0;
    for (const Tally& t : tallies) {
      picks += t.picks[i];
      failures += t.failures[i];
    }
    EXPECT_EQ(counters[i]->Picks(), picks) << "endpoint " << i;
    EXPECT_EQ(counters[i]->failures.load(), failures) << "endpoint " << i;
    // The raw counts (Outstanding() would hide more ends than starts).
    EXPECT_EQ(ap_load_calls_ended(&counters[i]->load), picks)
        << "endpoint " << i;
    // 80,000 picks over 8 endpoints: each gets thousands; none starves.
    EXPECT_GT(picks, 1000u) << "endpoint " << i;
    total += picks;
  }
  EXPECT_EQ(total, static_cast<uint64_t>(kThreads) * kPicksPerThread);
}

// peakEwma times every call, whether or not the health checks run: with
// them switched off (ejectAfterFailures and stuckCallMs 0) a call of about
// 20 ms records about 20 ms, not the time since the clock's epoch.
TEST(CallTracker, PeakEwmaTimesCallsWithTheHealthChecksOff) {
  for (const bool health_on : {true, false}) {
    auto counters = grpc_core::MakeRefCounted<aperture_lb::EndpointCounters>();
    std::vector<aperture_lb::AperturePicker::Slot> slots;
    slots.push_back({grpc_core::MakeRefCounted<IdleSubchannel>(), counters, 1});
    const double weight = 1;
    ap_pick_table* table = nullptr;
    ASSERT_EQ(ap_pick_table_create(&weight, 1, &table, nullptr), AP_OK);
    ap_health_config health;
    ap_health_config_init(&health);
    if (!health_on) {
      health.eject_after_failures = 0;
      health.stuck_call_ms = 0;
    }
    aperture_lb::AperturePicker picker(std::move(slots),
                                       aperture_lb::PickTablePtr(table), 2,
                                       nullptr, health, AP_PICK_PEAK_EWMA);
    ScratchCallState arena;
    LoadBalancingPolicy::PickArgs args{"/test.Service/Method", nullptr, &arena};
    LoadBalancingPolicy::PickResult result = picker.Pick(args);
    auto* complete =
        absl::get_if<LoadBalancingPolicy::PickResult::Complete>(&result.result);
    ASSERT_NE(complete, nullptr);
    complete->subchannel_call_tracker->Start();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    complete->subchannel_call_tracker->Finish({absl::OkStatus(), nullptr, nullptr});
    double latency_ns = -1;
    ASSERT_EQ(ap_load_latency_ns(&counters->load, &latency_ns), 1)
        << "health " << health_on;
    EXPECT_GE(latency_ns, 20e6) << "health " << health_on;
    // A sleep overshoots, on a loaded machine by a lot; 10 s does not
    // happen, the time since the clock's epoch (boot) is far above it.
    EXPECT_LT(latency_ns, 10e9) << "health " << health_on;
  }
}

// The counters' lifetime (endpoint_counters.h, Ownership) under the race
// it exists for: threads end the calls they hold open while the last
// owners (the picker and the test's own references) let go. Before the
// drop the counts are exact; in every round each endpoint's counters are
// freed exactly once (aperture_lb::LiveEndpointCounters() back to where it was; under
// --config=asan a free before the last end, or a second free, fails).
TEST(PickerConcurrency, CountersFreedOnceWhenOwnersLeaveWithCallsInFlight) {
  const double kWeights[] = {1, 1, 2, 2};
  const size_t kEndpoints = sizeof(kWeights) / sizeof(kWeights[0]);
  constexpr int kThreads = 2, kOpenPerThread = 6, kRounds = 300;
  ap_health_config no_health_checks;
  ap_health_config_init(&no_health_checks);
  no_health_checks.eject_after_failures = 0;
  no_health_checks.stuck_call_ms = 0;
  const int64_t live_before = aperture_lb::LiveEndpointCounters();
  for (int round = 0; round < kRounds; ++round) {
    std::vector<aperture_lb::AperturePicker::Slot> slots;
    std::map<const grpc_core::SubchannelInterface*, size_t> index_of;
    std::vector<grpc_core::RefCountedPtr<aperture_lb::EndpointCounters>> counters;
    for (size_t i = 0; i < kEndpoints; ++i) {
      auto subchannel = grpc_core::MakeRefCounted<IdleSubchannel>();
      auto c = grpc_core::MakeRefCounted<aperture_lb::EndpointCounters>();
      index_of[subchannel.get()] = i;
      counters.push_back(c);
      slots.push_back({std::move(subchannel), std::move(c), kWeights[i]});
    }
    ASSERT_EQ(aperture_lb::LiveEndpointCounters(),
              live_before + static_cast<int64_t>(kEndpoints));
    ap_pick_table* table = nullptr;
    ASSERT_EQ(ap_pick_table_create(kWeights, kEndpoints, &table, nullptr), AP_OK);
    auto picker = std::make_unique<aperture_lb::AperturePicker>(
        std::move(slots), aperture_lb::PickTablePtr(table), 2, nullptr,
        no_health_checks);

    // Each thread: kOpenPerThread calls picked and started, every other
    // one of them also picked but never started (gRPC dropping a pick),
    // then, once told, all of them ended (finished or dropped) after a
    // spin of a per-thread, per-round length, racing the owners' drop.
    std::atomic<int> picked{0};
    std::atomic<bool> go{false};
    std::vector<Tally> tallies(kThreads);
    std::vector<std::vector<uint64_t>> open(kThreads,
                                            std::vector<uint64_t>(kEndpoints, 0));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Tally& tally = tallies[t];
        tally.picks.assign(kEndpoints, 0);
        ScratchCallState arenas[kOpenPerThread];
        std::unique_ptr<LoadBalancingPolicy::SubchannelCallTrackerInterface>
            trackers[kOpenPerThread];
        for (int k = 0; k < kOpenPerThread; ++k) {
          LoadBalancingPolicy::PickArgs args{"/test.Service/Method", nullptr,
                                             &arenas[k]};
          LoadBalancingPolicy::PickResult result = picker->Pick(args);
          auto* complete =
              absl::get_if<LoadBalancingPolicy::PickResult::Complete>(&result.result);
          if (complete == nullptr) continue;  // counted as missing below
          const size_t e = index_of.at(complete->subchannel.get());
          ++tally.picks[e];
          ++open[t][e];
          trackers[k] = std::move(complete->subchannel_call_tracker);
          if (k % 2 == 0) trackers[k]->Start();
        }
        picked.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        for (volatile int spin = (round * 7 + t * 29) % 200; spin > 0; --spin) {
        }
        for (int k = 0; k < kOpenPerThread; ++k) {
          if (trackers[k] == nullptr) continue;
          if (k % 2 == 0) {
            trackers[k]->Finish({k % 4 == 0 ? absl::OkStatus()
                                            : absl::UnavailableError("x"),
                                 nullptr, nullptr});
          }
          trackers[k].reset();  // a dropped pick ends here
        }
      });
    }
    while (picked.load() < kThreads) std::this_thread::yield();
    for (size_t i = 0; i < kEndpoints; ++i) {
      uint64_t picks = 0, in_flight = 0;
      for (int t = 0; t < kThreads; ++t) {
        picks += tallies[t].picks[i];
        in_flight += open[t][i];
      }
      ASSERT_EQ(counters[i]->Picks(), picks) << "round " << round;
      ASSERT_EQ(static_cast<uint64_t>(counters[i]->Outstanding()), in_flight)
          << "round " << round;
    }
    go.store(true, std::memory_order_release);
    for (volatile int spin = (round * 13) % 200; spin > 0; --spin) {
    }
    picker.reset();    // the slots' owner references
    counters.clear();  // the last owners
    for (auto& th : threads) th.join();
    ASSERT_EQ(aperture_lb::LiveEndpointCounters(), live_before)
        << "round " << round;
  }
}

}  // namespace
