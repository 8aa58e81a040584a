// An independent oracle for the apertures the policy tests expect: a direct,
// slow computation from the definitions (README "Modes and the core
// library"), with no core code linked. It serves as the expected side of the
// policy's end-to-end tests, so they check the policy against the
// definitions instead of against the code they exercise.
//
// Definitions used (N endpoints, C clients, client i, A = min(A, N)):
//  - ring: endpoint j owns [b_j, b_{j+1}), b_j = (w_0 + ... + w_{j-1}) / W;
//  - continuous: window [i/C, (i+m)/C) (mod 1), m = ceil(A*C/N), width at
//    most 1; members are the arcs the window overlaps by more than 1e-12 of
//    their width; intersection = overlap / width; pick weight =
//    intersection * w_j;
//  - smooth: window [i/C, i/C + min(1, max(A/N, 1/C))); members as above;
//    pick weight = (integral over the overlap of 1/c(x)) / arc width * w_j,
//    c(x) = how many of the C windows contain x;
//  - mesh: every endpoint, intersection 1, pick weight w_j.
#ifndef APERTURE_TESTS_ORACLE_APERTURE_ORACLE_H
#define APERTURE_TESTS_ORACLE_APERTURE_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace oracle {

enum class Mode { kContinuous, kSmooth, kMesh };

struct Member {
  size_t ring_index;    // position on the ring (0 = the arc starting at 0)
  double intersection;  // share of the arc inside the window, in (0, 1]
  double pick_weight;
};

// Members of client `peer_index` of `peer_count`, by ring index (ascending).
// `weights` has one entry per ring position (empty: N equal weights of 1).
// Returns an empty list on arguments the definitions do not cover
// (n == 0, peer_index >= peer_count, min_aperture == 0, a weight <= 0).
std::vector<Member> Aperture(Mode mode, size_t n, uint32_t peer_index,
                             uint32_t peer_count, uint32_t min_aperture,
                             const std::vector<double>& weights = {});

// The ring order of "127.0.0.1:PORT"-style addresses that share one host:
// the README's order sorts by (hash of the host, port, whole string), so
// with one host it is the order of the port numbers (then the strings).
// Returns the addresses in ring order; empty when the hosts differ or an
// address has no numeric port.
std::vector<std::string> RingOrderOneHost(
    const std::vector<std::string>& addresses);

// The members of an explicit continuous window [start, start + width)
// (mod 1, width in (0, 1]) on the ring of `n` arcs with `weights` (empty:
// equal): the arcs it overlaps by more than 1e-12 of their width, with
// intersection = overlap / width and pick weight = intersection * w_j, by
// ring index. Empty on n == 0, start outside [0, 1), width outside (0, 1]
// or a weight <= 0.
std::vector<Member> WindowMembers(size_t n, double start, double width,
                                  const std::vector<double>& weights = {});

// The ring order of "host:port" addresses on any hosts: by (host_hash(host),
// port number, whole string), the README's order, with the hash supplied by
// the caller (it is a fixed function, not ring math; the oracle links no
// core code). Empty when an address has no numeric port.
std::vector<std::string> RingOrder(
    const std::vector<std::string>& addresses,
    uint64_t (*host_hash)(const std::string& host));

// The addresses in the aperture of client `peer_index` of `peer_count` on
// `ring` (addresses in ring order, equal weights).
std::set<std::string> MemberAddresses(Mode mode,
                                      const std::vector<std::string>& ring,
                                      uint32_t peer_index, uint32_t peer_count,
                                      uint32_t min_aperture);

// One change of the endpoint list seen by a fleet of `clients` clients
// (client c has peer index c) in equal-weight rings; sessions are (client,
// address) pairs.
struct SessionChange {
  long sessions_before = 0;
  long sessions_after = 0;
  long changed = 0;  // sessions closed + opened, over all clients
  long optimum = 0;  // sessions on addresses in only one of the two lists
};
SessionChange EndpointChange(Mode mode, const std::vector<std::string>& before_ring,
                             const std::vector<std::string>& after_ring,
                             uint32_t clients, uint32_t min_aperture);

// Expected members by address (address -> pick weight) for addresses on one
// host; `weights` (optional) is keyed by address, default 1.
std::map<std::string, double> ExpectedByAddress(
    Mode mode, const std::vector<std::string>& addresses, uint32_t peer_index,
    uint32_t peer_count, uint32_t min_aperture,
    const std::map<std::string, double>& weights = {});

}  // namespace oracle

#endif  // APERTURE_TESTS_ORACLE_APERTURE_ORACLE_H
