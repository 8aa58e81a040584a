/* The fleet's tail scenario: healthy servers with a latency tail, and
 * clients whose deadline is inside it, so a share of their calls fails
 * with DEADLINE_EXCEEDED under any policy. A balancer that takes those
 * failures for a sick server ejects healthy members and moves their load
 * onto the others; this scenario measures both, per mode, beside
 * round_robin in the same run: the precision of the gray-failure
 * defenses, where the gray scenario (fleet_gray.h) measures their recall.
 *
 * Setup: --servers servers (default 4), each the interop server with
 * --tail-share F --tail-ms N --tail-seed (seed + its index): a seeded
 * share F (default 0.1) of its calls answers N ms late (default 200);
 * --clients clients (default 1) calling unpaced with --concurrency calls
 * in flight each (default 2), --deadline-ms deadlines (default 100), for
 * --duration-s (default 10 s), with {"aperture":{"mode":M,"minAperture":A}}
 * (A: --min-aperture, default every server) and a coordinate, or
 * round_robin. Modes: --modes, default every aperture mode and
 * round_robin.
 *
 * Per mode: ejections (each client's own status once its calls ended:
 * the sum of every endpoint's `ejections` over the ring, and over the
 * clients), calls per server as the servers count them (max/mean beside
 * a fair random balancer's at that count), the busiest 1 s window (the
 * most one server took above the window's mean, from the clients' call
 * logs), the failed calls and their share, p50/p99 latency. Targets for
 * the aperture modes: at most 2 ejections, calls max/mean at most 1.15,
 * failed share at most round_robin's + 0.005 (false without a round_robin
 * row). */
#ifndef APERTURE_INTEROP_FLEET_TAIL_H
#define APERTURE_INTEROP_FLEET_TAIL_H

#include <stddef.h>
#include <stdio.h>

#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_TAIL_DEFAULT_MODES "continuous,discrete,random,vdc,smooth,mesh,stable,round_robin"
#define FLEET_TAIL_DEFAULT_SHARE 0.1
#define FLEET_TAIL_DEFAULT_MS 200
#define FLEET_TAIL_DEFAULT_DEADLINE_MS 100
#define FLEET_TAIL_DEFAULT_SEED 1
#define FLEET_TAIL_MAX_SERVERS 16
#define FLEET_TAIL_MAX_CLIENTS 8
/* The targets (aperture modes). */
#define FLEET_TAIL_MAX_EJECTIONS 2
#define FLEET_TAIL_MAX_MAX_MEAN 1.15
#define FLEET_TAIL_FAILED_MARGIN 0.005

/* Checks --servers and --clients against the scenario's limits: 0, or -1
 * with the message in err. */
int io_fleet_tail_check(const fleet_args *a, char *err, size_t len);

/* Runs every requested mode; sets out->rows to its one result. Returns 0
 * when every run completed, -1 otherwise (the failed runs are rows with
 * their error). */
int io_fleet_tail_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* The report: {"scenario":"tail",...,"runs":[rows]}, or a table. */
void io_fleet_tail_write_json(FILE *f, const fleet_output *out);
void io_fleet_tail_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
