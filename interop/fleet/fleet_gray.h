/* The fleet's gray scenario: one of four servers fails in a way that
 * does not close its connections (a gray failure) while clients keep
 * calling, then heals; per fault and LB mode, the calls that failed, on
 * which server, the latency quantiles, and how long the faulty server took
 * to lose its traffic and to get it back.
 *
 * Setup: 4 servers (each with a modelled service time of 2 ms), 4 clients
 * (--clients 1..4; the partition's are clients 0 and 1 among them) with {"aperture":{"mode":M,"minAperture":4}} (every server in each
 * client's aperture) or round_robin, 8 calls in flight per client, 300 ms
 * deadlines, --calls calls per mode and fault (default 20,000) paced over
 * the run: 1.5 s before the fault, --fault-s of fault (default 10), 3.5 s
 * after it. The faults (fleet_gray_faults.h), on server s1:
 *   freeze     SIGSTOP, SIGCONT after the fault (and on every exit path);
 *   no-answer  a listener that accepts TCP and never speaks HTTP/2 takes
 *              s1's port (interop/testing:no_answer), s1 stops gracefully;
 *              healing starts s1 again on its port and stops the listener;
 *   slow       s1 answers 20x slower (40 ms instead of 2: the server's
 *              --slow-latency-ms, switched by SIGUSR1/SIGUSR2);
 *   link-down  s1's device down in its network namespace, then up;
 *   partition  blackhole routes from clients 0 and 1 to s0 and s1, then
 *              deleted (the figures: those clients' calls to those
 *              servers);
 *              both need --network netns (a namespace per host; skipped
 *              on loopback, listed under "skipped").
 * Figures from the clients' call logs (fleet_gray_calls.h): a call is on
 * the server that answered it, or for a failed one on gRPC's peer of it
 * (the connection it was sent on); a call that never reached a connection
 * has the channel's target as its peer and counts as unattributed, apart
 * from failed_healthy. detect_ms: from the fault's start to the end of the
 * first 200 ms window in which s1 got under 1% of the calls started;
 * recover_ms: from the heal to the end of the first window in which it got
 * at least half its fair share (12.5%); -1: never. failed_budget: the
 * calls in flight to the faulty server(s) when the fault began plus 0.1%
 * of all calls, the most that may fail (the survival target), with
 * inflight_at_fault and within_budget beside it. */
#ifndef APERTURE_INTEROP_FLEET_GRAY_H
#define APERTURE_INTEROP_FLEET_GRAY_H

#include <stddef.h>
#include <stdio.h>

#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_GRAY_DEFAULT_MODES "smooth,continuous,stable,round_robin"
#define FLEET_GRAY_DEFAULT_FAULTS "freeze,link-down,partition,no-answer,slow"
#define FLEET_GRAY_DEFAULT_CALLS 20000
#define FLEET_GRAY_DEFAULT_FAULT_S 10.0
#define FLEET_GRAY_MAX_CALLS 200000

/* Checks --faults (known names) and --calls (at most
 * FLEET_GRAY_MAX_CALLS): 0, or -1 with the message in err. */
int io_fleet_gray_check(const fleet_args *a, char *err, size_t len);

/* Runs every requested fault for every requested mode (--faults, --modes,
 * --calls, --fault-s); sets out->rows to its one result. Returns 0 when
 * every run completed, -1 otherwise (the failed runs are rows with their
 * error). */
int io_fleet_gray_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* The report: {"scenario":"gray",...,"runs":[rows],"skipped":[...]}, or a
 * table. */
void io_fleet_gray_write_json(FILE *f, const fleet_output *out);
void io_fleet_gray_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
