// What the policy does per resolver update and per member connectivity
// change, on 100,000 and 1,000,000 endpoints, without a channel (a live
// channel with a million subchannel addresses is too heavy for this
// machine): the pure pieces that run in the policy's work serializer.
//   bazel run -c opt //tests/lb:update_benchmark
//
// BM_ResolverUpdate: the debounced membership takes a list that differs by
// one address from the last, lists its members, builds the ring snapshot
// (order, ring, aperture, address index), refills the widening mask and
// publishes the state. O(N log N), once per update.
// BM_MemberFlap: one aperture member fails and recovers: the widening mask
// marked, the aperture widened by one endpoint then narrowed back, and a
// state published after each. O(aperture); the picker and the census
// (O(aperture), need subchannels) are not included.
// BM_SnapshotByMode: see below.
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "policy/core/subset/ap_aperture.h"
#include "policy/lb/endpoints/aperture_census.h"
#include "policy/lb/endpoints/endpoint.h"
#include "policy/lb/ring/membership.h"
#include "policy/lb/ring/ring_snapshot.h"
#include "policy/lb/state/published_state.h"
#include "policy/lb/state/state_publisher.h"

namespace aperture_lb {
namespace {

std::string AddressOf(size_t i) {
  return "10." + std::to_string(i / 65536) + "." +
         std::to_string((i / 256) % 256) + "." + std::to_string(i % 256) +
         ":443";
}

grpc_core::ServerAddress AnyServerAddress() {
  grpc_resolved_address raw;
  memset(&raw, 0, sizeof(raw));
  return grpc_core::ServerAddress(raw, grpc_core::ChannelArgs());
}

ApertureSettings Settings() {
  ApertureSettings settings;
  settings.mode = AP_MODE_CONTINUOUS;
  settings.min_aperture = 12;
  return settings;
}

// Client 1/3 of n/10 peers: the usual aperture of 12-13 members.
Coordinate CoordinateFor(size_t n) {
  Coordinate c;
  c.known = true;
  c.peer_count = static_cast<uint32_t>(n / 10);
  c.peer_index = c.peer_count / 3;
  c.source = AP_COORDINATE_CONFIG;
  return c;
}

PolicyView ViewOf(const std::shared_ptr<const RingSnapshot>& ring,
                  const ApertureSettings& settings, const EndpointMap& none,
                  const std::string& status) {
  PolicyView view;
  view.settings = &settings;
  view.ring = ring;
  view.members = ring->aperture();
  view.coordinate = &ring->coordinate();
  view.endpoints = &none;
  view.last_status = &status;
  return view;
}

void BM_ResolverUpdate(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<std::string> names[2];
  std::vector<grpc_core::ServerAddress> addresses[2];
  for (size_t i = 0; i < n; ++i) {
    names[0].push_back(AddressOf(i));
    addresses[0].push_back(AnyServerAddress());
  }
  names[1] = names[0];
  addresses[1] = addresses[0];
  names[1][n / 2] = AddressOf(n);  // one member replaced
  const std::vector<double> weights(n, 1.0);
  const ApertureSettings settings = Settings();
  const Coordinate coordinate = CoordinateFor(n);
  Membership membership;
  if (!membership.Configure(0, 0).ok()) state.SkipWithError("membership");
  StatePublisher publisher("update-benchmark");
  UsableMask mask;
  EndpointMap none;
  const std::string status;
  std::shared_ptr<const RingSnapshot> ring;
  uint64_t now = 1;
  size_t list = 0;
  for (auto _ : state) {
    auto changes = membership.Offer(names[list], addresses[list], weights, now++);
    auto built = BuildRingSnapshot(membership.Members(), settings, coordinate, 7);
    if (!changes.ok() || !built.ok()) {
      state.SkipWithError("update failed");
      break;
    }
    ring = std::move(*built);
    mask.Reset(*ring);
    publisher.Publish(DescribePolicy(ViewOf(ring, settings, none, status)));
    list ^= 1;
  }
}
BENCHMARK(BM_ResolverUpdate)->Arg(100000)->Arg(1000000)
    ->Unit(benchmark::kMillisecond);

void BM_MemberFlap(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<EffectiveMember> members;
  members.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    members.push_back(EffectiveMember{AddressOf(i), AnyServerAddress(), 1.0,
                                      false});
  }
  const ApertureSettings settings = Settings();
  auto built =
      BuildRingSnapshot(std::move(members), settings, CoordinateFor(n), 7);
  if (!built.ok()) {
    state.SkipWithError("build failed");
    return;
  }
  std::shared_ptr<const RingSnapshot> ring = std::move(*built);
  const ap_aperture* base = ring->aperture();
  const uint32_t all = static_cast<uint32_t>(ap_aperture_count(base));
  StatePublisher publisher("flap-benchmark");
  UsableMask mask;
  mask.Reset(*ring);
  EndpointMap none;
  const std::string status;
  PolicyView view = ViewOf(ring, settings, none, status);
  // Down: one member short of minReady = every member, so the widening
  // adds the next endpoint; up: every member ready again.
  const uint32_t wanted[2] = {all + 1, all};
  for (auto _ : state) {
    for (uint32_t min_ready : wanted) {
      const uint8_t* usable = mask.Mark(*ring, none);
      ap_aperture* widened = nullptr;
      if (ap_aperture_widen(ring->ring(), base, usable, min_ready, &widened,
                            nullptr) != AP_OK) {
        state.SkipWithError("widen failed");
        return;
      }
      view.members = widened;
      publisher.Publish(DescribePolicy(view));
      ap_aperture_destroy(widened);
    }
  }
  state.counters["aperture"] = all;
}
BENCHMARK(BM_MemberFlap)->Arg(100000)->Arg(1000000)
    ->Unit(benchmark::kMicrosecond);

// BM_SnapshotByMode: one ring snapshot build for N endpoints and C peers in
// continuous (mode 0) and stable (mode 6), which also builds the whole
// service's plan from the address and peer keys once per rebuild.
void BM_SnapshotByMode(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const uint32_t c = static_cast<uint32_t>(state.range(1));
  ApertureSettings settings = Settings();
  settings.mode = static_cast<ap_mode>(state.range(2));
  Coordinate coordinate;
  coordinate.known = true;
  coordinate.peer_count = c;
  coordinate.peer_index = c / 3;
  coordinate.source = AP_COORDINATE_CONFIG;
  std::vector<EffectiveMember> members;
  members.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    members.push_back(EffectiveMember{AddressOf(i), AnyServerAddress(), 1.0,
                                      false});
  }
  size_t count = 0;
  for (auto _ : state) {
    auto built = BuildRingSnapshot(members, settings, coordinate, 7);
    if (!built.ok()) {
      state.SkipWithError("build failed");
      return;
    }
    count = ap_aperture_count((*built)->aperture());
  }
  state.counters["aperture"] = static_cast<double>(count);
}
BENCHMARK(BM_SnapshotByMode)
    ->Args({1000, 100, AP_MODE_CONTINUOUS})->Args({1000, 100, AP_MODE_STABLE})
    ->Args({10000, 1000, AP_MODE_CONTINUOUS})
    ->Args({10000, 1000, AP_MODE_STABLE})
    ->Args({100000, 10000, AP_MODE_CONTINUOUS})
    ->Args({100000, 10000, AP_MODE_STABLE})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aperture_lb

BENCHMARK_MAIN();
