// What peer discovery offers as a coordinate, for lb_coordinate.h to rank
// among the other sources.
#ifndef APERTURE_LB_PEER_COORDINATE_H
#define APERTURE_LB_PEER_COORDINATE_H

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

namespace aperture_lb {

// The coordinate peer discovery offers (lb_coordinate.h ranks it).
struct PeerCoordinate {
  bool in_use = false;       // a peer target is being watched
  bool from_config = false;  // peerTarget (else APERTURE_PEER_TARGET)
  bool known = false;
  bool stale = false;        // known, but the last good one kept
  uint32_t peer_index = 0;
  uint32_t peer_count = 0;
  uint64_t fingerprint = 0;  // of the peer list behind the coordinate
  // That peer list ("host:port" entries in ring order, peer_count of them),
  // when known: stable mode keys each peer by its entry.
  std::shared_ptr<const std::vector<std::string>> peers;
  // Why there is none, or why the last good one is kept; also ignored
  // environment values. "" when nothing is worth reporting.
  std::string note;
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_PEER_COORDINATE_H
