/* The fleet's restart scenario, a bounce (fleet_bounce.h) that comes back:
 * 6 servers behind the fleet's DNS, 5 clients at 100 calls/s for 4 s per
 * mode; at 1 s s1 leaves the answer and stops, its address returns 0.5 s
 * later and the process restarts 1 s after it stopped. Aperture's
 * removalGraceMs is 5000 (--grace-ms; 0 = not set). Reports the failed
 * calls on s1 and elsewhere, the sessions changed and the calls the
 * restarted s1 answered (fleet_report.h). */
#ifndef APERTURE_INTEROP_FLEET_RESTART_H
#define APERTURE_INTEROP_FLEET_RESTART_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fleet_timeline io_fleet_restart_timeline;

#ifdef __cplusplus
}
#endif

#endif
