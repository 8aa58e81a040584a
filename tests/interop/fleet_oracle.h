// What the independent oracle (tests/oracle) expects of a real fleet's
// session changes, beside the prediction the fleet runner takes from the
// core (churn_model.h): both must equal what the servers measured, so the
// core's math is checked against the definitions and not only the wiring.
//
// The fleets put server i on host 127.0.0.(10+i) and peer entry k on
// 127.0.1.(k+1), every server on one port and every peer entry on another,
// so the ring order (README: host hash, then port, then the string) is the
// order of the host hashes. The hash is the core's ap_hash_str: it is the
// order's fixed function, not ring math. Windows, arcs, members and session
// counts come from the oracle alone.
#ifndef APERTURE_TESTS_INTEROP_FLEET_ORACLE_H
#define APERTURE_TESTS_INTEROP_FLEET_ORACLE_H

#include <stdint.h>

#include <string>
#include <vector>

#include "interop/common/json_read.h"
#include "tests/oracle/aperture_oracle.h"

namespace fleet_oracle {

// Host of server slot i in the churn-grid, xds, deploy and peers fleets.
std::string ServerHost(int i);

// Host of client identity k's peer entry in the peers fleet.
std::string PeerHost(int k);

// Parses "continuous", "smooth" or "mesh" (the modes the oracle covers).
bool ParseMode(const std::string& name, oracle::Mode* out);

// `hosts` in ring order (each as "host:1": one shared port). Fails the
// calling test (ADD_FAILURE) when two hosts hash alike, since the order
// would then depend on the port.
std::vector<std::string> RingOrderOfHosts(const std::vector<std::string>& hosts);

// The sessions a change of the server hosts from `before` to `after`
// changes, for `clients` clients with peer indices 0..clients-1.
oracle::SessionChange ServerChange(oracle::Mode mode, const std::vector<std::string>& before,
                                   const std::vector<std::string>& after, uint32_t clients,
                                   uint32_t min_aperture);

// The sessions a change of the clients changes: the servers stay, the
// clients are the peer hosts `before` and then `after`, each client's peer
// index its entry's place in the ring order of the peer entries. optimum:
// the sessions of the clients in only one of the lists.
oracle::SessionChange ClientChange(oracle::Mode mode, const std::vector<std::string>& servers,
                                   const std::vector<std::string>& before,
                                   const std::vector<std::string>& after, uint32_t min_aperture);

// A churn-grid or xds report row ("servers", "clients", "min_aperture",
// "mode", "removal" and "addition" with "sessions_before", "changed",
// "optimum"): s1 (slot 1) leaves, then comes back. Expects the measured
// figures to be the oracle's; the row's mode must be one the oracle covers.
void ExpectChurnRowAsTheOracleSays(const json_value *row);

}  // namespace fleet_oracle

#endif
