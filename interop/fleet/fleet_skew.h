/* The fleet's skew scenario: clients that send at unequal rates.
 *
 * Eight interop servers answer every call after --extra-latency-ms 4 (a
 * timer, no CPU) and send the ORCA trailer of a rate-based server
 * (--capacity-qps 1000: cpu_utilization and application_utilization = its
 * calls/s over the last second / 1,000, rps_fractional = those calls/s).
 * Four clients, peers 0..3 of 4, keep calls in flight in proportion to
 * --client-rates (default 8,1,1,1, cycled over the clients): client c
 * keeps round(rate_c / the smallest rate x --concurrency) calls in
 * flight (--concurrency default 1: 8, 1, 1, 1), so client 0 sends about
 * 8x as much as each of the others. With --rate R the clients are paced
 * instead, client c at R x rate_c / the smallest rate calls/s.
 *
 * Runs, in one invocation: round_robin, then for each aperture mode of
 * --modes (default smooth) one run per pickMetric (outstanding,
 * peakEwma, orca) and one more with orca and the mechanism turned off
 * ("clientSkewBalance": false, pick_metric "orca-off"): the figure
 * without it, beside the one with it. minAperture 2 (--min-aperture):
 * each client's window is two servers, every server in exactly one
 * window. 20 s per run (--duration-s).
 *
 * Figures per run (the fleet report's runs[] rows, fleet_report.h): calls
 * per server max/mean over the whole run beside the fair figure, the
 * same from the end of the first quarter of the run (at most 5 s) on
 * (calls_steady), each server's rate-based utilization (sampled from its
 * stats after that warm-up) and its max/mean, connections, p50/p99/p999,
 * failed calls; pick_metric "none" for round_robin. */
#ifndef APERTURE_INTEROP_FLEET_SKEW_H
#define APERTURE_INTEROP_FLEET_SKEW_H

#include <stddef.h>
#include <stdio.h>

#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_SKEW_SERVERS 8
#define FLEET_SKEW_CLIENTS 4
#define FLEET_SKEW_DEFAULT_MODES "round_robin,smooth"
#define FLEET_SKEW_DEFAULT_RATES "8,1,1,1"
#define FLEET_SKEW_LATENCY_MS "4"     /* each call's answer waits this long */
#define FLEET_SKEW_CAPACITY_QPS "1000" /* the servers' capacity in calls/s */
#define FLEET_SKEW_MAX_RATES 64

/* Parses a --client-rates list: comma-separated numbers in (0, 1e6], at
 * most FLEET_SKEW_MAX_RATES. Returns how many (>= 1), or -1 with the
 * message in err. */
int io_fleet_skew_parse_rates(const char *text, double *rates, int max, char *err,
                              size_t len);

/* Checks the flags: --client-rates (when given) parses; --servers, when
 * given, is at least 2. 0, or -1 with the message in err. */
int io_fleet_skew_check(const fleet_args *a, char *err, size_t len);

/* Runs every (mode, pickMetric) of the scenario into out->runs. Returns 0
 * when every run completed, -1 otherwise. */
int io_fleet_skew_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* The text report: per run, calls per server max/mean (whole run and
 * steady) beside the fair figure, utilization max/mean, connections,
 * latency and failures; then calls per server. */
void io_fleet_skew_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
