/* The fleet's remove scenario, a bounce (fleet_bounce.h) that never comes
 * back: 13 servers behind the fleet's DNS, 7 clients at 60 calls/s for 4 s
 * per mode, aperture at minAperture 3; at 1 s s1 leaves the answer and
 * stops for good. Reports the failed calls and the sessions changed
 * (fleet_report.h). */
#ifndef APERTURE_INTEROP_FLEET_REMOVE_H
#define APERTURE_INTEROP_FLEET_REMOVE_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fleet_timeline io_fleet_remove_timeline;

#ifdef __cplusplus
}
#endif

#endif
