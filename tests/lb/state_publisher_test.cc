// The policy's snapshot callback (StatePublisher::Snapshot) applies the
// status request's filter and page itself: a channel the filter excludes
// copies nothing, and a channel copies only the requested endpoints.
#include <string.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "policy/lb/ring/ring_snapshot.h"
#include "policy/lb/state/published_state.h"
#include "policy/lb/state/state_publisher.h"
#include "policy/registry/ap_registry.h"

namespace aperture_lb {
namespace {

// A published state over a ring of `endpoints` addresses (the ring built as
// the policy builds it, shared by the state).
std::shared_ptr<PublishedState> StateWith(size_t endpoints) {
  grpc_resolved_address raw;
  memset(&raw, 0, sizeof(raw));
  std::vector<EffectiveMember> members;
  for (size_t i = 0; i < endpoints; ++i) {
    members.push_back(EffectiveMember{
        "10.1." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ":443",
        grpc_core::ServerAddress(raw, grpc_core::ChannelArgs()), 1.0, false});
  }
  ApertureSettings settings;
  settings.mode = AP_MODE_CONTINUOUS;
  settings.min_aperture = 3;
  Coordinate coordinate;
  coordinate.known = true;
  coordinate.peer_index = 0;
  coordinate.peer_count = 1;
  coordinate.source = AP_COORDINATE_CONFIG;
  auto built = BuildRingSnapshot(std::move(members), settings, coordinate, 7);
  EXPECT_TRUE(built.ok()) << built.status();
  auto state = std::make_shared<PublishedState>();
  state->mode = "continuous";
  state->fingerprint = "00000000000000ab";
  if (built.ok()) state->ring = std::shared_ptr<const RingSnapshot>(std::move(*built));
  return state;
}

TEST(StatePublisher, FilteredOutChannelCopiesNothing) {
  StatePublisher publisher("dns:///orders.svc:443");
  publisher.Publish(StateWith(50));
  ap_snapshot_query query = {"payments", 0, 10};
  ap_ring_state out;
  memset(&out, 0, sizeof out);
  out.query = &query;
  EXPECT_EQ(publisher.Snapshot(&out), AP_SNAPSHOT_SKIP);
  EXPECT_EQ(out.target, nullptr);
  EXPECT_EQ(out.endpoints, nullptr);
  EXPECT_EQ(out.copied_endpoints, 0u);
}

TEST(StatePublisher, CopiesOnlyTheRequestedPage) {
  StatePublisher publisher("dns:///orders.svc:443");
  auto state = StateWith(5000);
  ASSERT_NE(state->ring, nullptr);
  publisher.Publish(state);
  ap_snapshot_query query = {"orders", 1200, 25};
  ap_ring_state out;
  memset(&out, 0, sizeof out);
  out.query = &query;
  ASSERT_EQ(publisher.Snapshot(&out), AP_OK);
  EXPECT_STREQ(out.target, "dns:///orders.svc:443");
  EXPECT_EQ(out.endpoint_count, 5000u);
  EXPECT_EQ(out.first_endpoint, 1200u);
  ASSERT_EQ(out.copied_endpoints, 25u);
  EXPECT_EQ(out.endpoints[0].ring_index, 1200u);
  EXPECT_EQ(out.endpoints[24].ring_index, 1224u);
  EXPECT_EQ(out.endpoints[24].address, state->ring->address(1224));
  EXPECT_STREQ(out.fingerprint, "00000000000000ab");
  ap_ring_state_clear(&out);

  // No endpoints asked for: the channel's fields only.
  ap_snapshot_query none = {"", 0, 0};
  memset(&out, 0, sizeof out);
  out.query = &none;
  ASSERT_EQ(publisher.Snapshot(&out), AP_OK);
  EXPECT_EQ(out.endpoint_count, 5000u);
  EXPECT_EQ(out.copied_endpoints, 0u);
  EXPECT_EQ(out.endpoints, nullptr);
  ap_ring_state_clear(&out);

  // Past the end: nothing copied, the page starts at the ring's end.
  ap_snapshot_query past = {nullptr, 9000, 10};
  memset(&out, 0, sizeof out);
  out.query = &past;
  ASSERT_EQ(publisher.Snapshot(&out), AP_OK);
  EXPECT_EQ(out.first_endpoint, 5000u);
  EXPECT_EQ(out.copied_endpoints, 0u);
  ap_ring_state_clear(&out);
}

TEST(StatePublisher, WithoutAQueryCopiesEverything) {
  StatePublisher publisher("t");
  publisher.Publish(StateWith(7));
  ap_ring_state out;
  memset(&out, 0, sizeof out);
  ASSERT_EQ(publisher.Snapshot(&out), AP_OK);
  EXPECT_EQ(out.first_endpoint, 0u);
  EXPECT_EQ(out.copied_endpoints, 7u);
  ap_ring_state_clear(&out);
}

// Every counter of policy/registry/ap_ring_counters.def goes from the
// policy's atomic to the registry's field of its name, and every one of
// ap_endpoint_counters.def from the endpoint's live counters to its field:
// each set to a value of its own, so a counter copied into another's field
// fails.
TEST(StatePublisher, CopiesEveryListedCounter) {
  StatePublisher publisher("dns:///orders.svc:443");
  auto state = StateWith(4);
  ASSERT_NE(state->ring, nullptr);
  PublishedEndpoint live;
  live.address = state->ring->address(1);
  live.ring_index = 1;
  live.in_aperture = true;
  live.counters = grpc_core::MakeRefCounted<EndpointCounters>();
  EndpointCounters& calls = *live.counters;
  for (int i = 0; i < 5; ++i) calls.BeginCall();
  for (int i = 0; i < 3; ++i) calls.EndCall();
  calls.failures.store(4);
  state->live.push_back(live);
  publisher.Publish(state);
  uint64_t value = 1000;
#define AP_RING_COUNTER(name, kind, metric, help, text) \
  publisher.counters().name.store(value++);
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
  ap_ring_state out;
  memset(&out, 0, sizeof out);
  ASSERT_EQ(publisher.Snapshot(&out), AP_OK);
  value = 1000;
#define AP_RING_COUNTER(name, kind, metric, help, text) \
  EXPECT_EQ(out.name, value++) << #name;
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
  ASSERT_EQ(out.copied_endpoints, 4u);
  // 5 picks, 2 of them in flight, 4 failures: a value each.
  EXPECT_EQ(out.endpoints[1].picks, 5u);
  EXPECT_EQ(out.endpoints[1].outstanding, 2u);
  EXPECT_EQ(out.endpoints[1].failures, 4u);
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) \
  EXPECT_EQ(out.endpoints[1].name, endpoint_status::name(calls)) << #name; \
  EXPECT_EQ(out.endpoints[0].name, 0u) << #name;
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
  ap_ring_state_clear(&out);
  calls.EndCall();
  calls.EndCall();
}

}  // namespace
}  // namespace aperture_lb
