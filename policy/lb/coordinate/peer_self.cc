#include "policy/lb/coordinate/peer_self.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "absl/strings/str_cat.h"

#include "policy/core/ap_number.h"

namespace aperture_lb {
namespace {

// Canonical text of an IP literal; false when `text` is not one.
bool CanonicalIp(const std::string& text, std::string* out) {
  unsigned char buf[sizeof(struct in6_addr)];
  char canon[INET6_ADDRSTRLEN];
  int family = text.find(':') == std::string::npos ? AF_INET : AF_INET6;
  if (inet_pton(family, text.c_str(), buf) != 1) return false;
  if (inet_ntop(family, buf, canon, sizeof(canon)) == nullptr) return false;
  *out = canon;
  return true;
}

// Splits "host:port" / "[v6]:port"; port -1 when absent (bare IP).
bool SplitEntry(const std::string& text, std::string* host, int* port) {
  std::string port_text;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos) return false;
    *host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return false;
      port_text = text.substr(close + 2);
      if (port_text.empty()) return false;
    }
  } else {
    size_t colon = text.find(':');
    if (colon != std::string::npos && text.find(':', colon + 1) == std::string::npos) {
      *host = text.substr(0, colon);
      port_text = text.substr(colon + 1);
      if (port_text.empty()) return false;
    } else {
      *host = text;  // IPv4 without port, or bare IPv6
    }
  }
  *port = -1;
  if (!port_text.empty()) {
    uint64_t v = 0;
    if (ap_parse_uint(port_text.c_str(), 0, 65535, &v, nullptr) != AP_OK) {
      return false;
    }
    *port = static_cast<int>(v);
  }
  return true;
}

}  // namespace

bool ParsePeerSelf(const std::string& text, PeerSelf* out,
                   std::string* error) {
  std::string host;
  int port = -1;
  if (text.empty()) {
    *error = "is empty (must be \"ip:port\" or a bare IP)";
    return false;
  }
  if (!SplitEntry(text, &host, &port)) {
    *error = absl::StrCat("\"", text,
                          "\" is not \"ip:port\", \"[ipv6]:port\" or a bare "
                          "IP (port in [0, 65535])");
    return false;
  }
  std::string canon;
  if (!CanonicalIp(host, &canon)) {
    *error = absl::StrCat("\"", host,
                          "\" is not an IP address (host names are not "
                          "resolved: give the address the peer list holds)");
    return false;
  }
  out->host = canon;
  out->port = port;
  return true;
}

std::set<std::string> InterfaceAddresses() {
  std::set<std::string> out;
  struct ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (struct ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN];
    const void* addr = nullptr;
    int family = it->ifa_addr->sa_family;
    if (family == AF_INET) {
      addr = &reinterpret_cast<struct sockaddr_in*>(it->ifa_addr)->sin_addr;
    } else if (family == AF_INET6) {
      addr = &reinterpret_cast<struct sockaddr_in6*>(it->ifa_addr)->sin6_addr;
    } else {
      continue;
    }
    if (inet_ntop(family, addr, text, sizeof(text)) != nullptr) {
      out.insert(text);
    }
  }
  freeifaddrs(list);
  return out;
}

bool FindSelf(const std::vector<std::string>& ordered, const PeerSelf& self,
              const std::set<std::string>& interfaces, uint32_t* index,
              std::string* why) {
  size_t matches = 0;
  std::string first, second;
  for (size_t i = 0; i < ordered.size(); ++i) {
    std::string host, canon;
    int port = -1;
    if (!SplitEntry(ordered[i], &host, &port) || !CanonicalIp(host, &canon)) {
      continue;
    }
    bool match = self.host.empty()
                     ? interfaces.count(canon) != 0
                     : canon == self.host &&
                           (self.port < 0 || self.port == port);
    if (!match) continue;
    if (++matches == 1) {
      *index = static_cast<uint32_t>(i);
      first = ordered[i];
    } else if (matches == 2) {
      second = ordered[i];
    }
  }
  // How the messages name this process.
  const std::string who =
      self.host.empty()
          ? std::string("this host's interface addresses")
          : absl::StrCat("self ",
                         self.port < 0 ? self.host
                                       : absl::StrCat(self.host, ":", self.port),
                         " (peerSelf)");
  if (matches == 0) {
    *why = absl::StrCat(who, self.host.empty() ? " are" : " is",
                        " not in the peer list of ", ordered.size(),
                        " entries", self.host.empty() ? " (set peerSelf)" : "");
    return false;
  }
  if (matches > 1) {
    *why = absl::StrCat(matches, " peer list entries match ", who, " (",
                        first, ", ", second,
                        "...): the coordinate needs exactly one; set peerSelf "
                        "to ip:port");
    return false;
  }
  return true;
}

}  // namespace aperture_lb
