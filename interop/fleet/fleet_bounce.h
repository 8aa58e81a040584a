/* The DNS-fed bounce that the restart and remove scenarios share: the
 * servers sit behind the fleet's DNS (fleet_timeline.dns) with no
 * connection recycling; at leave_at_s server s1 leaves the answer and is
 * stopped (SIGTERM: GOAWAY, so every client re-resolves). When it comes
 * back, its address returns to the answer back_s/2 later and the process
 * restarts at the same address back_s after it stopped. SETTLE_S after
 * that (or after it left, when it does not come back) the runner reads
 * the sessions changed: connections opened plus closed on the servers
 * that stayed, from just before s1 left (fleet_report.h). A scenario is a
 * fleet_bounce as the timeline's params and io_fleet_bounce_hooks as its
 * hooks. */
#ifndef APERTURE_INTEROP_FLEET_BOUNCE_H
#define APERTURE_INTEROP_FLEET_BOUNCE_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_BOUNCE_SERVER 1    /* s1 leaves */
#define FLEET_BOUNCE_SETTLE_S 1.5

typedef struct fleet_bounce {
  double leave_at_s; /* scales with --duration-s */
  double back_s;     /* seconds s1 is out when it comes back; not scaled */
  int comes_back;    /* 1: restarted (marked killed), 0: removed for good */
} fleet_bounce;

/* The hooks: the tick, the restarted server's calls at the end
 * (restarted_calls), and s1's mark. */
extern const fleet_timeline_hooks io_fleet_bounce_hooks;

#ifdef __cplusplus
}
#endif

#endif
