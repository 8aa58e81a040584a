/* What a fleet scenario is to the runner (fleet.c): a row of its scenario
 * table. Each row names what the scenario runs, the flag checks it makes
 * before any process starts, the writers of its report, whether it needs
 * the aperture policy in the client and whether `all` runs it. Adding a
 * scenario is its own file, which supplies these, plus one row. */
#ifndef APERTURE_INTEROP_FLEET_SCENARIO_H
#define APERTURE_INTEROP_FLEET_SCENARIO_H

#include <stddef.h>
#include <stdio.h>

#include "interop/fleet/fleet_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the flags asked for, as every scenario reads it; 0 or NULL: the
 * scenario's own default. */
typedef struct fleet_args {
  const char *server_bin, *client_bin, *out_dir;
  int have_aperture;                /* the client has the aperture policy */
  const char *modes;                /* --modes, comma separated */
  long servers, clients, concurrency, min_aperture;
  double rate, duration_s;
  long grace_ms;                    /* --grace-ms; -1: the scenario's default */
  long rss_bound_kib;               /* --rss-bound-kib */
  const char *points;               /* --points */
  const char *affinity;             /* --affinity */
  long calls;                       /* --calls: calls per run (gray) */
  double fault_s;                   /* --fault-s: how long a fault lasts (gray) */
  const char *faults;               /* --faults, comma separated (gray) */
  const char *client_rates;         /* --client-rates, comma separated (skew) */
  double tail_share;                /* --tail-share (tail), when has_tail_share */
  int has_tail_share;
  long tail_ms;                     /* --tail-ms (tail) */
  long deadline_ms;                 /* --deadline-ms (tail) */
  long tail_seed;                   /* --tail-seed (tail) */
} fleet_args;

/* What scenarios measured, for the report writers. The fleet report's
 * runs and churn-grid rows gather over several scenarios (`all`, the
 * default run); a scenario with a report of its own sets rows and n_rows
 * (its rows, or one result) instead. */
typedef struct fleet_output {
  fleet_run *runs;
  int n_runs, max_runs;
  fleet_churn_row *churn;
  int n_churn, max_churn;
  const void *rows;
  int n_rows;
} fleet_output;

/* Writes the report of `out` (JSON, or the text table) to f. */
typedef void (*fleet_writer)(FILE *f, const fleet_output *out);

typedef struct fleet_scenario {
  const char *name; /* the --scenario value */
  /* Runs the scenario with the flags in a, adding to out; `def` is the
   * row's. Returns 0 when every run completed, -1 otherwise. */
  int (*run)(const void *def, const fleet_args *a, fleet_output *out);
  const void *def;  /* what run runs (a timeline scenario's data); NULL: nothing */
  /* Checks the flags for this scenario: 0, or -1 with the whole message
   * in err (a usage error, exit status 2). NULL: nothing to check. */
  int (*check)(const fleet_args *a, char *err, size_t len);
  fleet_writer json, table;
  int needs_aperture; /* 1: refused (exit status 1) without the policy */
  int in_all;         /* 1: part of --scenario all */
} fleet_scenario;

#ifdef __cplusplus
}
#endif

#endif
