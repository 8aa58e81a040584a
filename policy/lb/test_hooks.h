// Test hooks: what the shim counts only so that tests can check the work it
// does (no product code reads these). Tests include this header; product
// headers declare none of it.
#ifndef APERTURE_LB_TEST_HOOKS_H
#define APERTURE_LB_TEST_HOOKS_H

#include <stddef.h>
#include <stdint.h>

namespace aperture_lb {

class UsableMask;

// Process-wide work of the state publishers: how many states were
// published and how many per-endpoint entries they copied in all.
struct PublishWork {
  uint64_t publishes = 0;
  uint64_t endpoint_entries = 0;
};
PublishWork PublishWorkSoFar();

// Bytes a UsableMask (aperture_census.h) wrote through Reset() and Mark().
uint64_t UsableMaskWrites(const UsableMask& mask);

// Number of live peer watchers in the process (peer_watcher.h).
size_t LivePeerWatchers();

// EndpointCounters objects alive in the process (endpoint_counters.h;
// changed only when one is created or freed).
int64_t LiveEndpointCounters();

}  // namespace aperture_lb

#endif  // APERTURE_LB_TEST_HOOKS_H
