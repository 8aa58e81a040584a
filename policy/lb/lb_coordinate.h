// The coordinate (peer index, peer count) of a channel's aperture: from the
// config, the channel args, the C API, the environment or the host name
// ordinal, in that order of precedence.
#ifndef APERTURE_LB_COORDINATE_H
#define APERTURE_LB_COORDINATE_H

#include <stdint.h>

#include <string>

#include "policy/core/ap_error.h"
#include "policy/include/aperture.h"
#include "policy/lb/lb_config.h"
#include "policy/registry/ap_registry.h"
#include "src/core/lib/channel/channel_args.h"

namespace aperture_lb {

struct Coordinate {
  bool known = false;
  uint32_t peer_index = 0;
  uint32_t peer_count = 0;
  ap_coordinate_source source = AP_COORDINATE_NONE;
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

// Resolves the coordinate for a policy with the given settings and channel
// args. Never fails: invalid channel args or environment values are skipped
// and described in `note`.
Coordinate ResolveCoordinate(const ApertureSettings& settings,
                             const ArgCoordinate& args);

// Process-wide coordinate set through the C API (thread-safe).
int SetApiCoordinate(uint32_t peer_index, uint32_t peer_count, ap_error* err);
void ClearApiCoordinate();

// Parses the trailing "-N" ordinal of a host name ("web-3" -> 3). Returns
// false when there is none or it does not fit in uint32_t.
bool ParseHostnameOrdinal(const char* hostname, uint32_t* ordinal);

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_H
