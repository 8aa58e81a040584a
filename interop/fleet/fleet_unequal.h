/* The fleet's unequal scenario: servers of unequal capacity. Ten servers
 * with --capacity 1,1,1,1,1,1,1,1,0.5,0.25, each doing 1000 us of CPU
 * work per call at capacity 1 (so 2000 and 4000 us on the last two) on a
 * CPU quota of 0.1 core (--cpu-quota: the work runs as on a 0.1-core
 * container, so ten servers fit a 2-core machine and each saturates at
 * its own load: 100 calls/s at capacity 1, 50 and 25 for the others).
 * Four clients send an open-loop paced load (at most 16 calls in flight
 * each) of 70% of the fleet's capacity, 0.7 x 0.1 core x 8.75 / 1 ms =
 * 612.5 calls/s in all, for 20 s per run.
 *
 * Runs round_robin, then for each aperture mode of --modes (default
 * smooth, the policy's default) one run per pickMetric: outstanding,
 * peakEwma, orca; minAperture 10, so every client uses every server and
 * the pick alone decides how load follows capacity. Round_robin rows have
 * pick_metric "none". Every server sends the ORCA trailer.
 *
 * Figures per run (fleet_report.h): each server's utilization (its own
 * measure: work CPU time over the traffic time x its 0.1-core quota),
 * their max/mean (util_max_mean), calls per server beside its share of
 * the capacity and the largest ratio of the two (share_over_capacity_max), p50/p99/p999 latency and failed calls.
 * Flags: --duration-s (per run), --clients, --modes, --rate (per client,
 * instead of the 70%), --concurrency, --min-aperture. */
#ifndef APERTURE_INTEROP_FLEET_UNEQUAL_H
#define APERTURE_INTEROP_FLEET_UNEQUAL_H

#include <stddef.h>
#include <stdio.h>

#include "interop/fleet/fleet_scenario.h"
#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_UNEQUAL_SERVERS 10
#define FLEET_UNEQUAL_DEFAULT_MODES "round_robin,smooth"
#define FLEET_UNEQUAL_WORK_US 1000.0 /* CPU per call at capacity 1 */
#define FLEET_UNEQUAL_QUOTA 0.1      /* cores per server */
#define FLEET_UNEQUAL_LOAD 0.7       /* offered load / the fleet's capacity */

/* The servers' capacities, s0 first. */
extern const double io_fleet_unequal_capacity[FLEET_UNEQUAL_SERVERS];

/* The fleet's capacity in calls/s: quota x the capacities' sum / work. */
double io_fleet_unequal_fleet_capacity(void);

/* Checks the flags: --servers, when given, must be 10. 0, or -1 with the
 * message in err. */
int io_fleet_unequal_check(const fleet_args *a, char *err, size_t len);

/* Runs every (mode, pickMetric) of the scenario into out->runs. Returns 0
 * when every run completed, -1 otherwise. */
int io_fleet_unequal_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* The text report: per run, the latency, failures and utilization spread,
 * then each server's capacity, utilization and calls share beside its
 * capacity share. */
void io_fleet_unequal_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
