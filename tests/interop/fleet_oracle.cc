#include "tests/interop/fleet_oracle.h"

#include <algorithm>
#include <set>
#include <utility>

#include <gtest/gtest.h>

#include "policy/core/ap_hash.h"

namespace fleet_oracle {
namespace {

uint64_t HostHash(const std::string& host) { return ap_hash_str(host.c_str(), 0); }

// Peer index of the client with peer host `host` among `peers`; -1 when
// it is not one of them.
long PeerIndex(const std::vector<std::string>& peers, const std::string& host) {
  const std::vector<std::string> ring = RingOrderOfHosts(peers);
  for (size_t i = 0; i < ring.size(); i++) {
    if (ring[i] == host + ":1") return static_cast<long>(i);
  }
  return -1;
}

}  // namespace

std::string ServerHost(int i) { return "127.0.0." + std::to_string(10 + i); }

std::string PeerHost(int k) { return "127.0.1." + std::to_string(k + 1); }

bool ParseMode(const std::string& name, oracle::Mode* out) {
  if (name == "continuous") {
    *out = oracle::Mode::kContinuous;
  } else if (name == "smooth") {
    *out = oracle::Mode::kSmooth;
  } else if (name == "mesh") {
    *out = oracle::Mode::kMesh;
  } else {
    return false;
  }
  return true;
}

std::vector<std::string> RingOrderOfHosts(const std::vector<std::string>& hosts) {
  std::set<uint64_t> hashes;
  std::vector<std::string> addresses;
  for (const std::string& h : hosts) {
    if (!hashes.insert(HostHash(h)).second) ADD_FAILURE() << "two hosts hash alike: " << h;
    addresses.push_back(h + ":1");
  }
  return oracle::RingOrder(addresses, HostHash);
}

oracle::SessionChange ServerChange(oracle::Mode mode, const std::vector<std::string>& before,
                                   const std::vector<std::string>& after, uint32_t clients,
                                   uint32_t min_aperture) {
  return oracle::EndpointChange(mode, RingOrderOfHosts(before), RingOrderOfHosts(after), clients,
                                min_aperture);
}

oracle::SessionChange ClientChange(oracle::Mode mode, const std::vector<std::string>& servers,
                                   const std::vector<std::string>& before,
                                   const std::vector<std::string>& after, uint32_t min_aperture) {
  const std::vector<std::string> ring = RingOrderOfHosts(servers);
  std::set<std::string> everyone(before.begin(), before.end());
  everyone.insert(after.begin(), after.end());
  oracle::SessionChange out;
  for (const std::string& client : everyone) {
    std::set<std::string> mb, ma;
    const long ib = PeerIndex(before, client), ia = PeerIndex(after, client);
    if (ib >= 0) {
      mb = oracle::MemberAddresses(mode, ring, static_cast<uint32_t>(ib),
                                   static_cast<uint32_t>(before.size()), min_aperture);
    }
    if (ia >= 0) {
      ma = oracle::MemberAddresses(mode, ring, static_cast<uint32_t>(ia),
                                   static_cast<uint32_t>(after.size()), min_aperture);
    }
    long diff = 0;
    for (const std::string& x : mb) diff += ma.count(x) == 0;
    for (const std::string& x : ma) diff += mb.count(x) == 0;
    out.sessions_before += static_cast<long>(mb.size());
    out.sessions_after += static_cast<long>(ma.size());
    out.changed += diff;
    if ((ib >= 0) != (ia >= 0)) out.optimum += diff;
  }
  return out;
}

void ExpectChurnRowAsTheOracleSays(const json_value *row) {
  const std::string name = io_json_string(io_json_get(row, "mode"));
  SCOPED_TRACE("oracle, " + name);
  oracle::Mode mode;
  ASSERT_TRUE(ParseMode(name, &mode));
  const int servers = static_cast<int>(io_json_get_number(row, "servers", 0));
  const uint32_t clients = static_cast<uint32_t>(io_json_get_number(row, "clients", 0));
  const uint32_t a = static_cast<uint32_t>(io_json_get_number(row, "min_aperture", 0));
  ASSERT_GT(servers, 1);
  std::vector<std::string> all, rest;
  for (int i = 0; i < servers; i++) {
    all.push_back(ServerHost(i));
    if (i != 1) rest.push_back(ServerHost(i));
  }
  const oracle::SessionChange removal = ServerChange(mode, all, rest, clients, a);
  const oracle::SessionChange addition = ServerChange(mode, rest, all, clients, a);
  ASSERT_GT(removal.optimum, 0);
  for (const auto &step : {std::make_pair("removal", removal), std::make_pair("addition", addition)}) {
    const json_value *st = io_json_get(row, step.first);
    ASSERT_NE(nullptr, st) << step.first;
    EXPECT_EQ(step.second.sessions_before, io_json_get_number(st, "sessions_before", -1))
        << step.first;
    EXPECT_EQ(step.second.changed, io_json_get_number(st, "changed", -1)) << step.first;
    EXPECT_EQ(step.second.optimum, io_json_get_number(st, "optimum", -1)) << step.first;
  }
}

}  // namespace fleet_oracle
