/* The fleet's multi-service scenario: three services of 2, 3 and 5
 * clients share 10 servers (where subsetting modes differ most), 60
 * calls/s per client for 3 s per mode, aperture at minAperture 2. Reports
 * balance's figures plus each service's own spread and the servers it
 * used (fleet_report.h). The default run (fleet.c) runs it at 600
 * calls/s. */
#ifndef APERTURE_INTEROP_FLEET_MULTI_SERVICE_H
#define APERTURE_INTEROP_FLEET_MULTI_SERVICE_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fleet_timeline io_fleet_multi_service_timeline;

#ifdef __cplusplus
}
#endif

#endif
