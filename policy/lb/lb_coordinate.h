// The coordinate (peer index, peer count) of a channel's aperture, by
// precedence: config peerIndex/peerCount, config peerTarget (peer
// discovery), channel args, the C API, APERTURE_PEER_INDEX/COUNT,
// APERTURE_PEER_TARGET, the host name ordinal (docs/coordinate.md).
#ifndef APERTURE_LB_COORDINATE_H
#define APERTURE_LB_COORDINATE_H

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "policy/core/ap_error.h"
#include "policy/include/aperture.h"
#include "policy/lb/lb_config.h"
#include "policy/registry/ap_registry.h"
#include "src/core/lib/channel/channel_args.h"
#include "policy/lb/lb_peer_coordinate.h"

namespace aperture_lb {

struct Coordinate {
  bool known = false;
  uint32_t peer_index = 0;
  uint32_t peer_count = 0;
  ap_coordinate_source source = AP_COORDINATE_NONE;
  // The peers' entries in peer-index order when the coordinate came from
  // peer discovery (peer_count of them); null otherwise. Stable mode keys
  // the peers by them (ap_stable.h).
  std::shared_ptr<const std::vector<std::string>> peers;
  // Why a lower-precedence source was skipped or ignored ("" when nothing
  // worth reporting), e.g. a malformed APERTURE_PEER_INDEX.
  std::string note;
};

// The channel's APERTURE_ARG_PEER_INDEX / APERTURE_ARG_PEER_COUNT, as given
// (validated by ResolveCoordinate).
struct ArgCoordinate {
  bool has_index = false, has_count = false;
  int index = 0, count = 0;
};

// Reads APERTURE_ARG_PEER_INDEX / APERTURE_ARG_PEER_COUNT from channel args.
ArgCoordinate ArgCoordinateOf(const grpc_core::ChannelArgs& args);

// Seed of random mode when the config gives none: fixed for the process so
// that re-resolutions keep the same random subset.
uint64_t ProcessRandomSeed();

// Resolves the coordinate for a policy with the given settings, channel
// args and peer discovery state. Never fails: invalid channel args or
// environment values, and a peer target without a coordinate, are skipped
// and described in `note`.
Coordinate ResolveCoordinate(const ApertureSettings& settings,
                             const ArgCoordinate& args,
                             const PeerCoordinate& peers = PeerCoordinate());

// Process-wide coordinate set through the C API (thread-safe).
int SetApiCoordinate(uint32_t peer_index, uint32_t peer_count, ap_error* err);
void ClearApiCoordinate();

// Parses the trailing "-N" ordinal of a host name ("web-3" -> 3). Returns
// false when there is none or it does not fit in uint32_t.
bool ParseHostnameOrdinal(const char* hostname, uint32_t* ordinal);

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_H
