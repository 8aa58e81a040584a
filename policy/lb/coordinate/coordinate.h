// The coordinate (peer index, peer count) of a channel's aperture and how
// it is chosen among its sources, by precedence: config peerIndex/peerCount,
// config peerTarget (peer discovery), channel args, the C API,
// APERTURE_PEER_INDEX/COUNT, APERTURE_PEER_TARGET, the host name ordinal
// (docs/coordinate.md).
//
// One type for every source: each source yields a Coordinate (known or
// not, with a note saying why not); ResolveCoordinate() ranks them. The
// static sources are read here, the C API's from process_coordinate.h, and
// peer discovery (peer_tracker.h, which finds this process in a peer list
// with peer_self.h) hands in its own as a PeerOffer.
#ifndef APERTURE_LB_COORDINATE_COORDINATE_H
#define APERTURE_LB_COORDINATE_COORDINATE_H

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "policy/include/aperture.h"
#include "policy/registry/ap_registry.h"
#include "src/core/lib/channel/channel_args.h"

namespace aperture_lb {

struct Coordinate {
  bool known = false;
  uint32_t peer_index = 0;
  uint32_t peer_count = 0;
  ap_coordinate_source source = AP_COORDINATE_NONE;
  // Peer discovery only: the peers' entries in peer-index order (peer_count
  // of them; stable mode keys the peers by them, ap_stable.h), their
  // fingerprint, and whether this is the last good coordinate kept through
  // a fault of the peer target. Null / 0 / false for the other sources.
  std::shared_ptr<const std::vector<std::string>> peers;
  uint64_t peers_fingerprint = 0;
  bool stale = false;
  // Why a source was skipped or ignored ("" when nothing is worth
  // reporting), e.g. a malformed APERTURE_PEER_INDEX.
  std::string note;
};

// The config's own peerIndex/peerCount (validated by the config parser).
struct StaticCoordinate {
  bool given = false;
  uint32_t peer_index = 0;
  uint32_t peer_count = 0;
};

// The channel's APERTURE_ARG_PEER_INDEX / APERTURE_ARG_PEER_COUNT, as given
// (validated by ResolveCoordinate).
struct ArgCoordinate {
  bool has_index = false, has_count = false;
  int index = 0, count = 0;
};

// What peer discovery offers: whether a peer target is watched, where it
// ranks (the config's peerTarget ranks above the channel args, the
// environment's APERTURE_PEER_TARGET below APERTURE_PEER_INDEX), and its
// coordinate (source AP_COORDINATE_PEER_TARGET when known).
struct PeerOffer {
  bool in_use = false;
  bool from_config = false;
  Coordinate coordinate;
};

// Reads APERTURE_ARG_PEER_INDEX / APERTURE_ARG_PEER_COUNT from channel args.
ArgCoordinate ArgCoordinateOf(const grpc_core::ChannelArgs& args);

// Seed of random mode when the config gives none: fixed for the process so
// that re-resolutions keep the same random subset.
uint64_t ProcessRandomSeed();

// Ranks the sources and returns the first that gives a coordinate, with
// the notes of the ones skipped before it. Never fails: invalid channel
// args or environment values, and a peer target without a coordinate, are
// skipped and described in `note`; no source at all gives known == false.
Coordinate ResolveCoordinate(const StaticCoordinate& config,
                             const ArgCoordinate& args,
                             const PeerOffer& peers = PeerOffer());

// Parses the trailing "-N" ordinal of a host name ("web-3" -> 3). Returns
// false when there is none or it does not fit in uint32_t.
bool ParseHostnameOrdinal(const char* hostname, uint32_t* ordinal);

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_COORDINATE_H
