/* The fleet's balance scenario: one service of 4 clients on 10 servers,
 * 100 calls/s per client for 3 s per mode, aperture at minAperture 2 (so
 * that each client really uses a subset). Reports per-server calls and
 * connections, the busiest server over the mean, and the spread
 * (fleet_report.h). The default run (fleet.c) runs it at 1500 calls/s. */
#ifndef APERTURE_INTEROP_FLEET_BALANCE_H
#define APERTURE_INTEROP_FLEET_BALANCE_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fleet_timeline io_fleet_balance_timeline;

#ifdef __cplusplus
}
#endif

#endif
