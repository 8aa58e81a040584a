/* The fleet's kill scenario: 5 servers, 3 clients at 100 calls/s for 5 s
 * per mode; server s1 is SIGKILLed at 20% of the run (once it has served
 * calls) and restarted on its port at 50%. Reports the failed calls on
 * the killed server and elsewhere, and the seconds from the restart until
 * traffic reached it (fleet_report.h's recover_s). */
#ifndef APERTURE_INTEROP_FLEET_KILL_H
#define APERTURE_INTEROP_FLEET_KILL_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fleet_timeline io_fleet_kill_timeline;

#ifdef __cplusplus
}
#endif

#endif
