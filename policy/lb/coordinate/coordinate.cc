#include "policy/lb/coordinate/coordinate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ap_hash.h"
#include "policy/core/ap_number.h"
#include "policy/lb/coordinate/process_coordinate.h"

namespace aperture_lb {
namespace {

bool ParseUint32(const char* text, uint32_t* out) {
  uint64_t v = 0;
  if (ap_parse_uint(text, 0, UINT32_MAX, &v, nullptr) != AP_OK) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

bool EnvFlagSet(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && v[0] != '\0' && strcmp(v, "0") != 0;
}

// Reads APERTURE_PEER_COUNT; false (with a note) when absent or invalid.
bool EnvPeerCount(uint32_t* count, std::string* note) {
  const char* text = getenv("APERTURE_PEER_COUNT");
  if (text == nullptr) return false;
  uint64_t v = 0;
  if (ap_parse_uint(text, 1, AP_MAX_PEERS, &v, nullptr) != AP_OK) {
    absl::StrAppend(note, "APERTURE_PEER_COUNT=\"", text,
                    "\" ignored: must be an integer in [1, ", AP_MAX_PEERS,
                    "]; ");
    return false;
  }
  *count = static_cast<uint32_t>(v);
  return true;
}

// `c` (with the notes gathered so far) completed with a coordinate.
Coordinate Found(Coordinate c, uint32_t peer_index, uint32_t peer_count,
                 ap_coordinate_source source) {
  c.known = true;
  c.peer_index = peer_index;
  c.peer_count = peer_count;
  c.source = source;
  return c;
}

// `c` completed with peer discovery's coordinate (and its peer list).
Coordinate FromPeers(Coordinate c, const Coordinate& offered) {
  c.peers = offered.peers;
  c.peers_fingerprint = offered.peers_fingerprint;
  c.stale = offered.stale;
  return Found(std::move(c), offered.peer_index, offered.peer_count,
               AP_COORDINATE_PEER_TARGET);
}

}  // namespace

bool ParseHostnameOrdinal(const char* hostname, uint32_t* ordinal) {
  if (hostname == nullptr) return false;
  // Only the first label counts: "web-3.svc.cluster.local" -> "web-3".
  std::string name(hostname);
  size_t dot = name.find('.');
  if (dot != std::string::npos) name.resize(dot);
  size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 >= name.size()) return false;
  return ParseUint32(name.c_str() + dash + 1, ordinal);
}

Coordinate ResolveCoordinate(const StaticCoordinate& config,
                             const ArgCoordinate& args,
                             const PeerOffer& peers) {
  Coordinate c;
  if (config.given) {
    return Found(std::move(c), config.peer_index, config.peer_count,
                 AP_COORDINATE_CONFIG);
  }
  c.note = peers.coordinate.note;
  if (peers.in_use && peers.from_config && peers.coordinate.known) {
    return FromPeers(std::move(c), peers.coordinate);
  }
  if (args.has_index || args.has_count) {
    if (args.has_index != args.has_count) {
      absl::StrAppend(&c.note, "channel arg ",
                      args.has_index ? APERTURE_ARG_PEER_INDEX
                                     : APERTURE_ARG_PEER_COUNT,
                      " ignored: ",
                      args.has_index ? APERTURE_ARG_PEER_COUNT
                                     : APERTURE_ARG_PEER_INDEX,
                      " is missing; ");
    } else if (args.count < 1 ||
               static_cast<int64_t>(args.count) > AP_MAX_PEERS) {
      absl::StrAppend(&c.note, "channel arg " APERTURE_ARG_PEER_COUNT "=",
                      args.count, " ignored: must be in [1, ", AP_MAX_PEERS,
                      "]; ");
    } else if (args.index < 0 || args.index >= args.count) {
      absl::StrAppend(&c.note, "channel arg " APERTURE_ARG_PEER_INDEX "=",
                      args.index, " ignored: must be in [0, ", args.count,
                      "); ");
    } else {
      return Found(std::move(c), static_cast<uint32_t>(args.index),
                   static_cast<uint32_t>(args.count), AP_COORDINATE_CHANNEL_ARG);
    }
  }
  uint32_t api_index = 0, api_count = 0;
  if (ApiCoordinate(&api_index, &api_count)) {
    return Found(std::move(c), api_index, api_count, AP_COORDINATE_API);
  }
  const char* index_text = getenv("APERTURE_PEER_INDEX");
  uint32_t count = 0;
  bool have_count = EnvPeerCount(&count, &c.note);
  if (index_text != nullptr) {
    uint32_t index = 0;
    if (!ParseUint32(index_text, &index)) {
      absl::StrAppend(&c.note, "APERTURE_PEER_INDEX=\"", index_text,
                      "\" ignored: not a non-negative integer; ");
    } else if (!have_count) {
      absl::StrAppend(&c.note,
                      "APERTURE_PEER_INDEX ignored: APERTURE_PEER_COUNT is "
                      "missing or invalid; ");
    } else if (index >= count) {
      absl::StrAppend(&c.note, "APERTURE_PEER_INDEX=", index,
                      " ignored: must be less than APERTURE_PEER_COUNT=", count,
                      "; ");
    } else {
      return Found(std::move(c), index, count, AP_COORDINATE_ENVIRONMENT);
    }
  }
  if (peers.in_use && !peers.from_config && peers.coordinate.known) {
    return FromPeers(std::move(c), peers.coordinate);
  }
  if (EnvFlagSet("APERTURE_PEER_FROM_HOSTNAME")) {
    char host[256] = {0};
    uint32_t ordinal = 0;
    if (!have_count) {
      absl::StrAppend(&c.note,
                      "APERTURE_PEER_FROM_HOSTNAME needs APERTURE_PEER_COUNT; ");
    } else if (gethostname(host, sizeof(host) - 1) != 0) {
      absl::StrAppend(&c.note, "gethostname failed: ", strerror(errno), "; ");
    } else if (!ParseHostnameOrdinal(host, &ordinal)) {
      absl::StrAppend(&c.note, "host name \"", host,
                      "\" has no trailing -N ordinal; ");
    } else if (ordinal >= count) {
      absl::StrAppend(&c.note, "host name ordinal ", ordinal,
                      " is not less than APERTURE_PEER_COUNT=", count, "; ");
    } else {
      return Found(std::move(c), ordinal, count, AP_COORDINATE_HOSTNAME);
    }
  }
  return c;
}

ArgCoordinate ArgCoordinateOf(const grpc_core::ChannelArgs& args) {
  ArgCoordinate out;
  if (auto index = args.GetInt(APERTURE_ARG_PEER_INDEX)) {
    out.has_index = true;
    out.index = *index;
  }
  if (auto count = args.GetInt(APERTURE_ARG_PEER_COUNT)) {
    out.has_count = true;
    out.count = *count;
  }
  return out;
}

uint64_t ProcessRandomSeed() {
  static const uint64_t seed = [] {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ap_mix64(static_cast<uint64_t>(ts.tv_nsec) ^
                    (static_cast<uint64_t>(ts.tv_sec) << 20) ^
                    (static_cast<uint64_t>(getpid()) << 40));
  }();
  return seed;
}

}  // namespace aperture_lb
