// Which entry of a peer list is this process: an explicit "host:port" or
// bare IP (peerSelf / APERTURE_PEER_SELF), or else the host's own interface
// addresses. Pure string and socket-address logic; no gRPC.
#ifndef APERTURE_LB_COORDINATE_PEER_SELF_H
#define APERTURE_LB_COORDINATE_PEER_SELF_H

#include <stdint.h>

#include <set>
#include <string>
#include <vector>

namespace aperture_lb {

// This process's own entry. An empty host means "not given": match the
// interface addresses instead.
struct PeerSelf {
  std::string host;  // canonical IP text (inet_ntop), no brackets
  int port = -1;     // -1: any port
};

// Parses "1.2.3.4:80", "[::1]:80", "1.2.3.4" or "::1" into *out. False with
// a message naming what is wrong (for config errors and status notes).
bool ParsePeerSelf(const std::string& text, PeerSelf* out,
                   std::string* error);

// Canonical IP texts of this host's interfaces (getifaddrs), loopback
// included. Empty when they cannot be read.
std::set<std::string> InterfaceAddresses();

// Position of this process in `ordered` ("host:port" entries as gRPC prints
// them). With `self.host` set: the entries equal to it (any port when
// self.port is -1); otherwise the entries whose host is one of
// `interfaces`. Exactly one entry must match: returns true with *index set,
// or false with *why explaining (none matched, or several did).
bool FindSelf(const std::vector<std::string>& ordered, const PeerSelf& self,
              const std::set<std::string>& interfaces, uint32_t* index,
              std::string* why);

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_PEER_SELF_H
