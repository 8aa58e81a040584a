// What one publish costs, from the pure pieces: the ring snapshot shared by
// reference with the published state, the state built from the aperture
// alone, and the widening mask touched only where endpoints changed. Each
// assertion counts entries written, not time.
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/lb/endpoints/aperture_census.h"
#include "policy/lb/endpoints/endpoint.h"
#include "policy/lb/ring/ring_snapshot.h"
#include "policy/lb/state/published_state.h"
#include "policy/lb/state/state_publisher.h"
#include "policy/lb/test_hooks.h"

namespace aperture_lb {
namespace {

constexpr size_t kEndpoints = 100000;

std::vector<EffectiveMember> Members(size_t n, size_t draining_every) {
  grpc_resolved_address raw;
  memset(&raw, 0, sizeof(raw));
  std::vector<EffectiveMember> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string address = "10." + std::to_string(i / 65536) + "." +
                          std::to_string((i / 256) % 256) + "." +
                          std::to_string(i % 256) + ":443";
    out.push_back(EffectiveMember{
        address, grpc_core::ServerAddress(raw, grpc_core::ChannelArgs()), 1.0,
        draining_every != 0 && i % draining_every == 0});
  }
  return out;
}

std::shared_ptr<const RingSnapshot> Ring(size_t n, size_t draining_every) {
  ApertureSettings settings;
  settings.mode = AP_MODE_CONTINUOUS;
  settings.min_aperture = 12;
  Coordinate coordinate;
  coordinate.known = true;
  coordinate.peer_index = 3;
  coordinate.peer_count = 20000;
  coordinate.source = AP_COORDINATE_CONFIG;
  auto built =
      BuildRingSnapshot(Members(n, draining_every), settings, coordinate, 7);
  EXPECT_TRUE(built.ok()) << built.status();
  return built.ok() ? std::shared_ptr<const RingSnapshot>(std::move(*built))
                    : nullptr;
}

TEST(RingSnapshotIndex, FindsEveryMemberAndNothingElse) {
  auto ring = Ring(5000, 7);
  ASSERT_NE(ring, nullptr);
  size_t draining = 0;
  for (size_t i = 0; i < ring->size(); ++i) {
    uint32_t index = 0;
    ASSERT_TRUE(ring->IndexOf(ring->address(i), &index));
    EXPECT_EQ(index, i);
    EXPECT_EQ(ring->IsDraining(ring->address(i)), ring->draining(i));
    draining += ring->draining(i) ? 1 : 0;
  }
  EXPECT_EQ(draining, ring->draining_count());
  EXPECT_GT(draining, 0u);
  uint32_t index = 0;
  EXPECT_FALSE(ring->IndexOf("10.200.0.1:443", &index));
  EXPECT_FALSE(ring->IsDraining("10.200.0.1:443"));
}

// A publish on a 100,000-endpoint ring copies the aperture's entries only
// and shares the ring; every endpoint still reads back as before.
TEST(PublishWork, StateSharesTheRingAndCopiesOnlyTheAperture) {
  auto ring = Ring(kEndpoints, 1000);
  ASSERT_NE(ring, nullptr);
  const ap_aperture* members = ring->aperture();
  const size_t aperture = ap_aperture_count(members);
  ASSERT_GE(aperture, 12u);
  ASSERT_LT(aperture, 32u);

  ApertureSettings settings;
  EndpointMap endpoints;
  std::string last_status;
  PolicyView view;
  view.settings = &settings;
  view.ring = ring;
  view.members = members;
  view.coordinate = &ring->coordinate();
  view.endpoints = &endpoints;
  view.last_status = &last_status;

  StatePublisher publisher("publish-work");
  const PublishWork before = PublishWorkSoFar();
  for (int flap = 0; flap < 10; ++flap) publisher.Publish(DescribePolicy(view));
  const PublishWork after = PublishWorkSoFar();
  EXPECT_EQ(after.publishes - before.publishes, 10u);
  // The old publisher wrote all 100,000 entries per publish.
  EXPECT_EQ(after.endpoint_entries - before.endpoint_entries, 10 * aperture);

  auto state = DescribePolicy(view);
  EXPECT_EQ(state->ring.get(), ring.get());  // shared, not copied
  EXPECT_EQ(state->live.size(), aperture);
  EXPECT_EQ(state->endpoint_count(), kEndpoints);
  EXPECT_EQ(state->draining, ring->draining_count());
  size_t in_aperture = 0;
  for (size_t i = 0; i < state->endpoint_count(); ++i) {
    const PublishedEndpoint e = state->endpoint(i);
    ASSERT_EQ(e.ring_index, i);
    ASSERT_EQ(e.address, ring->address(i));
    ASSERT_EQ(e.draining, ring->draining(i));
    size_t slot = 0;
    const bool member = ap_aperture_find(members, static_cast<uint32_t>(i), &slot);
    ASSERT_EQ(e.in_aperture, member) << i;
    if (member) {
      ++in_aperture;
      EXPECT_EQ(e.pick_weight, ap_aperture_member(members, slot)->pick_weight);
    }
    EXPECT_EQ(e.connectivity, -1);  // no subchannel in this test
  }
  EXPECT_EQ(in_aperture, aperture);

  // The registry's deep copy lists every endpoint in ring order.
  ap_ring_state out;
  memset(&out, 0, sizeof(out));
  ASSERT_EQ(publisher.Snapshot(&out), AP_OK);
  ASSERT_EQ(out.endpoint_count, kEndpoints);
  size_t copied_members = 0;
  for (size_t i = 0; i < out.endpoint_count; ++i) {
    ASSERT_EQ(std::string(out.endpoints[i].address), ring->address(i));
    copied_members += out.endpoints[i].in_aperture ? 1 : 0;
  }
  EXPECT_EQ(copied_members, aperture);
  ap_ring_state_clear(&out);
}

// The widening mask is filled once per ring; marking with no subchannel
// writes nothing further.
TEST(PublishWork, UsableMaskIsFilledOncePerRing) {
  auto ring = Ring(kEndpoints, 1000);
  ASSERT_NE(ring, nullptr);
  UsableMask mask;
  mask.Reset(*ring);
  EXPECT_EQ(UsableMaskWrites(mask), kEndpoints);
  EndpointMap none;
  const uint8_t* usable = nullptr;
  for (int i = 0; i < 100; ++i) usable = mask.Mark(*ring, none);
  EXPECT_EQ(UsableMaskWrites(mask), kEndpoints);
  for (size_t i = 0; i < ring->size(); ++i) {
    ASSERT_EQ(usable[i], ring->draining(i) ? 0 : 1) << i;
  }
}

}  // namespace
}  // namespace aperture_lb
