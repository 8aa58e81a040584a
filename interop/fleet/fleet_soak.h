/* The fleet's `soak` scenario: a bounded run of real processes with
 * everything that might leak or fail over time happening at once. One
 * server (s0) is killed (SIGKILL) and restarted at the same address on a
 * cycle; another (s1) flaps, leaving the DNS answer and coming back while
 * it keeps running; the runner queries every client's status server in a
 * loop; and every call carries a key never sent before, flooding each
 * client's sticky-affinity table (capped by maxSessions). It reports the
 * calls that failed anywhere but on the killed server (must be 0) and each
 * client's resident memory (VmRSS) after a warm-up and near the end, whose
 * growth must stay within a bound. */
#ifndef APERTURE_INTEROP_FLEET_SOAK_H
#define APERTURE_INTEROP_FLEET_SOAK_H

#include <stdio.h>

#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_SOAK_DEFAULT_DURATION_S 300.0
#define FLEET_SOAK_MAX_CLIENTS 8
/* Allowed RSS growth per client from the end of the warm-up to the end. */
#define FLEET_SOAK_DEFAULT_RSS_BOUND_KIB 8192L
#define FLEET_SOAK_MAX_SESSIONS 2000

typedef struct fleet_soak_opts {
  const char *server_bin, *client_bin, *out_dir;
  double duration_s;   /* 0: FLEET_SOAK_DEFAULT_DURATION_S */
  int servers;         /* 0: 6 (at least 3) */
  int clients;         /* 0: 3 */
  double rate;         /* calls/s per client; 0: 200 */
  long rss_bound_kib;  /* 0: FLEET_SOAK_DEFAULT_RSS_BOUND_KIB */
} fleet_soak_opts;

typedef struct fleet_soak_client {
  long rss_start_kib, rss_end_kib; /* after the warm-up, near the end */
  long rss_mid_kib;                /* half-way between: growth's shape */
  long ok, failed, failed_on_killed;
  long sessions_max;               /* largest sticky table the status showed */
} fleet_soak_client;

typedef struct fleet_soak_result {
  int complete, pass;
  char error[200];
  double duration_s, warmup_s;
  int servers, n_clients;
  double rate;
  int kills, restarts, flaps;
  long status_ok, status_failed;
  long ok, failed, failed_on_killed, failed_live;
  long rss_bound_kib, rss_growth_max_kib;
  fleet_soak_client clients[FLEET_SOAK_MAX_CLIENTS];
} fleet_soak_result;

/* Runs the soak. Returns 0 when it completed and passed (no failed call on
 * a live server, every client's RSS growth within the bound), -1 otherwise
 * (see r->error, r->pass). */
int io_fleet_soak_run(const fleet_soak_opts *o, fleet_soak_result *r);

/* Human-readable report and JSON ({"soak":{...}}). */
void io_fleet_soak_table(FILE *out, const fleet_soak_result *r);
void io_fleet_soak_json(FILE *out, const fleet_soak_result *r);

/* The scenario's row (fleet_scenario.h): io_fleet_soak_run with the
 * flags' duration, servers, clients, rate and RSS bound; its one result
 * goes to out->rows (n_rows 1). Returns 0, or -1 when the soak failed or
 * on a NULL argument. */
int io_fleet_soak_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* out's result as io_fleet_soak_json and io_fleet_soak_table write it;
 * nothing when an argument is NULL. */
void io_fleet_soak_write_json(FILE *f, const fleet_output *out);
void io_fleet_soak_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
