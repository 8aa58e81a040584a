/* What a fleet run's figures mean: the sampling noise a perfectly fair
 * random balancer would show at the same call count, and a closing summary
 * (aperture's connections against round_robin's, and how far the busiest
 * server is above the mean, alone and with services sharing the servers). */
#ifndef APERTURE_INTEROP_FLEET_SUMMARY_H
#define APERTURE_INTEROP_FLEET_SUMMARY_H

#include <stdio.h>

#include "interop/fleet/fleet_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Expected busiest server's calls / mean calls of a perfectly fair random
 * balancer that sends `calls` calls each to one of `servers` servers
 * uniformly at random: the mean over fixed-seed Monte Carlo multinomial
 * draws (the same inputs give the same figure). Returns 0 when servers < 1
 * or calls < 1. */
double io_fleet_fair_max_mean(int servers, long calls);

#define FLEET_SUMMARY_MAX 16

/* One mode of one scenario in the summary. */
typedef struct fleet_summary_entry {
  char scenario[32];
  char mode[32];
  long connections;             /* sum of per-server peaks */
  double connections_vs_rr;     /* connections / round_robin's in the same
                                   scenario; -1 without a round_robin run */
  double busiest_above_mean;    /* busiest server's calls / mean - 1 */
  double fair_above_mean;       /* the same for a fair random balancer at
                                   this run's call count (fleet_fair_max_mean - 1) */
  long calls_per_server;        /* mean calls per server */
} fleet_summary_entry;

typedef struct fleet_summary {
  int n;
  fleet_summary_entry entries[FLEET_SUMMARY_MAX];
  char text[2048]; /* the summary in words; "" when nothing to summarize */
} fleet_summary;

/* Summarizes the complete runs of the balance and multi-service scenarios
 * (other scenarios are left out). Returns 0, or -1 when runs or out is
 * NULL or n < 0. */
int io_fleet_summary_of(const fleet_run *runs, int n, fleet_summary *out);

/* Writes "summary":{"entries":[...],"text":"..."} (no surrounding comma). */
void io_fleet_summary_json(FILE *f, const fleet_summary *s);

#ifdef __cplusplus
}
#endif

#endif
