/* The fleet's churn scenario: membership changes through gRPC's real
 * resolver path. 5 servers at addresses of their own on one port, found
 * by 3 clients through the fleet's DNS (fleet_dns.h); the servers recycle
 * connections every second (--max-connection-age-ms 1000), which makes the
 * clients re-resolve. At 37% of the run a spare server starts, the answer
 * swaps s0 for it, s0 drains (at most 5 s) and only then stops, as a real
 * deployment drains a backend. Reports the failed calls, connections
 * opened, the calls on the added server, the DNS queries and the drain
 * time (fleet_report.h). churn-grid is fleet_churn_grid.h. */
#ifndef APERTURE_INTEROP_FLEET_CHURN_H
#define APERTURE_INTEROP_FLEET_CHURN_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fleet_timeline io_fleet_churn_timeline;

#ifdef __cplusplus
}
#endif

#endif
