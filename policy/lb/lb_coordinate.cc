#include "policy/lb/lb_coordinate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"

#include "policy/core/ap_aperture.h"
#include "policy/core/ap_hash.h"
#include "policy/lb/lb_coordinate_listeners.h"

namespace aperture_lb {
namespace {

// count << 32 | index; 0 means unset (a count is never 0).
std::atomic<uint64_t> g_api_coordinate{0};

bool ParseUint32(const char* text, uint32_t* out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0' || v > UINT32_MAX) {
    return false;
  }
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
  if (!ParseUint32(text, count) || *count == 0 || *count > AP_MAX_PEERS) {
    absl::StrAppend(note, "APERTURE_PEER_COUNT=\"", text,
                    "\" ignored: must be an integer in [1, ", AP_MAX_PEERS,
                    "]; ");
    return false;
  }
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

int SetApiCoordinate(uint32_t peer_index, uint32_t peer_count, ap_error* err) {
  if (peer_count == 0 || peer_count > AP_MAX_PEERS) {
    return ap_error_set(err, AP_ERANGE,
                        "peer_count must be in [1, %u], got %u",
                        AP_MAX_PEERS, peer_count);
  }
  if (peer_index >= peer_count) {
    return ap_error_set(err, AP_EINVAL,
                        "peer_index must be less than peer_count (%u), got %u",
                        peer_count, peer_index);
  }
  g_api_coordinate.store((static_cast<uint64_t>(peer_count) << 32) | peer_index,
                         std::memory_order_release);
  NotifyCoordinateListeners();  // live channels re-coordinate now
  ap_error_clear(err);
  return AP_OK;
}

void ClearApiCoordinate() {
  g_api_coordinate.store(0, std::memory_order_release);
  NotifyCoordinateListeners();
}

Coordinate ResolveCoordinate(const ApertureSettings& settings,
                             const ArgCoordinate& args,
                             const PeerCoordinate& peers) {
  Coordinate c;
  if (settings.has_coordinate) {
    return Found(std::move(c), settings.peer_index, settings.peer_count,
                 AP_COORDINATE_CONFIG);
  }
  c.note = peers.note;
  if (peers.in_use && peers.from_config && peers.known) {
    c.peers = peers.peers;
    return Found(std::move(c), peers.peer_index, peers.peer_count,
                 AP_COORDINATE_PEER_TARGET);
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
  uint64_t api = g_api_coordinate.load(std::memory_order_acquire);
  if (api != 0) {
    return Found(std::move(c), static_cast<uint32_t>(api & 0xffffffffu),
                 static_cast<uint32_t>(api >> 32), AP_COORDINATE_API);
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
  if (peers.in_use && !peers.from_config && peers.known) {
    c.peers = peers.peers;
    return Found(std::move(c), peers.peer_index, peers.peer_count,
                 AP_COORDINATE_PEER_TARGET);
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
