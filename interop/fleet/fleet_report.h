/* Results of fleet runs and their presentation: a text table and JSON (the
 * SVG chart of per-server load and connections: fleet_chart_svg.h). */
#ifndef APERTURE_INTEROP_FLEET_REPORT_H
#define APERTURE_INTEROP_FLEET_REPORT_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_MAX_SERVERS 64
#define FLEET_MAX_SERVICES 4

typedef struct fleet_server_result {
  char name[32];          /* hostname given to the server (s0, s1, ...) */
  long calls;             /* TestService calls it answered (all instances) */
  long connections_peak;  /* most connections open at once (channelz) */
  long connections_opened;
  int slow;               /* 1: runs with extra latency */
  int killed;             /* 1: killed and restarted (kill scenario) */
  int removed;            /* 1: stopped mid-run (churn) */
  int added;              /* 1: started mid-run (churn) */
  double capacity;        /* unequal: the server's --capacity; 0: not set */
  double utilization;     /* unequal: its work CPU time over the run's traffic
                             time x its CPU quota (its own measure) */
} fleet_server_result;

typedef struct fleet_service_result {
  char name[16];
  int clients;
  long ok, failed;
  double calls_max_mean; /* this service's calls per server it used: max / mean */
  long servers_used;     /* servers that got at least one of its calls */
} fleet_service_result;

/* Summary figures of a set of per-server values. */
typedef struct fleet_spread {
  double mean, max, min, max_mean, cv;
} fleet_spread;

/* Spread of `n` values; zeros when n == 0 or the mean is 0. Values of
 * servers that got nothing count (a balancer that ignores a server is
 * unbalanced). */
fleet_spread io_fleet_spread_of(const double *values, int n);

typedef struct fleet_run {
  char scenario[32];
  char mode[32];
  double duration_s;
  int n_servers;
  fleet_server_result servers[FLEET_MAX_SERVERS];
  int n_services;
  fleet_service_result services[FLEET_MAX_SERVICES];
  long ok, failed;
  long failed_on_disturbed; /* failed calls whose peer was the killed/removed server */
  long by_code[17];
  double qps;
  uint64_t p50_us, p99_us, p999_us;
  fleet_spread calls, connections;
  double fair_max_mean;     /* calls.max_mean a perfectly fair random balancer
                               would show at this call count (fleet_summary.h);
                               0 when not computed */
  long connections_total;   /* sum of per-server peaks */
  long connections_opened;  /* sum over servers */
  double slow_share;        /* calls share of slow servers (slow-backend), else -1 */
  double fair_share;        /* share each server would get if equal */
  double recover_s;         /* kill: seconds from restart to its first call; -1 never */
  long dns_queries;         /* churn: A queries the clients' resolvers made */
  double drain_s;           /* churn: seconds from the DNS change until s0 had no connection */
  long min_aperture;        /* aperture modes: the configured minAperture; else 0 */
  long grace_ms;            /* aperture modes: removalGraceMs set; else 0 */
  /* restart/remove: sessions changed = connections opened + closed on the
   * servers that stayed, from just before s1 left until 1.5 s after it came
   * back (or left, for a removal); sessions_before = connections open on
   * all servers just before. */
  long sessions_changed, sessions_before;
  int bounce_measured;      /* 1: the figures above were taken */
  long restarted_calls;     /* restart: calls the restarted s1 answered */
  char pick_metric[16];     /* unequal: aperture's pickMetric, "none" for
                               gRPC's policies; "" in other scenarios */
  int util_measured;        /* 1: the servers' utilization is in (unequal) */
  fleet_spread util;        /* per-server utilization when util_measured */
  double share_over_capacity_max; /* unequal: the largest (server's share of the
                                     calls / its share of the capacity) */
  int steady_measured;      /* 1: calls_steady is in (skew) */
  fleet_spread calls_steady; /* skew: calls per server after the warm-up */
  double fair_steady_max_mean; /* the fair figure at those calls */
  int complete;             /* 0: the run failed (see error) */
  char error[160];
} fleet_run;

/* churn-grid: one membership change (s1 leaves the DNS answer, or comes
 * back) at one (servers, clients, minAperture) point, for one mode. */
typedef struct fleet_churn_step {
  int measured;          /* 0: not measured (the row's note says why) */
  int settled;           /* 1: every client had re-resolved and the servers'
                            connection counts matched the clients' apertures
                            when the figures were read */
  long sessions_before;  /* connections open on all servers just before */
  long changed;          /* connections opened + closed on all servers,
                            the removed server's included */
  long optimum;          /* the removed server's sessions before, or the
                            added server's after */
  /* the core's prediction for exactly this fleet (churn_model.h) */
  long predicted_before, predicted_changed, predicted_optimum;
} fleet_churn_step;

typedef struct fleet_churn_row {
  int servers, clients, min_aperture;
  char mode[32];
  int complete;          /* 0: the run failed (see error) */
  char error[160];
  long ok, failed;       /* the clients' calls over the whole run */
  fleet_churn_step removal, addition;
  char note[200];
} fleet_churn_row;

/* Writes the runs as a text table (one block per scenario). */
void io_fleet_report_table(FILE *f, const fleet_run *runs, int n);

/* Writes the churn-grid rows as a table: per point and mode, measured
 * beside predicted, then per mode the worst over the points. */
void io_fleet_report_churn_table(FILE *f, const fleet_churn_row *rows, int n);

/* Writes one churn step's table cells (churn-grid and xds differ). */
typedef void (*fleet_churn_cells)(FILE *f, const fleet_churn_step *st);

/* Writes the churn table's column header and one line per row: the point
 * and mode, the sessions before, `cells` for the removal and the addition,
 * then the calls; a failed row shows its error instead. Does nothing when
 * an argument is NULL or n <= 0. */
void io_fleet_report_churn_rows(FILE *f, const fleet_churn_row *rows, int n,
                                fleet_churn_cells cells);

/* Writes a churn row as a JSON object left open for more fields:
 * {"servers":..,"clients":..,"min_aperture":..,"mode":..,"complete":..,
 * "error":..,"ok":..,"failed":..,"removal":{..},"addition":{..} (no closing
 * brace); each step with "changed_share" and "predicted_share" when
 * with_shares is 1. Nothing when f or r is NULL. */
void io_fleet_report_churn_row_json(FILE *f, const fleet_churn_row *r, int with_shares);

/* Writes the runs as one JSON object {"runs":[...],"summary":{...}}
 * (fleet_summary.h), with "churn_grid":{"rows":[...],"worst":[...]} when
 * n_churn > 0. */
void io_fleet_report_json(FILE *f, const fleet_run *runs, int n, const fleet_churn_row *churn,
                       int n_churn);

#ifdef __cplusplus
}
#endif

#endif
