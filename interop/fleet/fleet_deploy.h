/* The fleet's deploy scenario: a rolling replacement of every server by one
 * at a new address, through the DNS stub. Servers s0..s(N-1) listen on
 * 127.0.0.10, .11, ...; for each i in turn, replacement r<i> starts on the
 * next free 127.0.0.x (same port), the answer swaps s<i>'s address for
 * r<i>'s, the runner waits until every client has re-resolved and the
 * servers' connection counts match the clients' apertures, then s<i>
 * stops. Calls run throughout. Per mode: the sessions the whole deploy
 * changed, measured at the servers (connections opened + closed) beside
 * the core's prediction for the same address strings (churn_model.h), the
 * failed calls, and the busiest replacement server's calls over the mean
 * in a window after the deploy. */
#ifndef APERTURE_INTEROP_FLEET_DEPLOY_H
#define APERTURE_INTEROP_FLEET_DEPLOY_H

#include <stddef.h>
#include <stdio.h>

#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_DEPLOY_DEFAULT_MODES "continuous,smooth,stable"
#define FLEET_DEPLOY_MAX_MODES 8
#define FLEET_DEPLOY_MAX_SERVERS 30 /* old and new share 127.0.0.10 .. .69 */

typedef struct fleet_deploy_opts {
  const char *server_bin, *client_bin, *out_dir;
  const char *modes;  /* comma separated aperture modes; NULL: the default */
  int servers;        /* 0: 8; at most FLEET_DEPLOY_MAX_SERVERS */
  int clients;        /* 0: 4; at most 16 */
  int min_aperture;   /* 0: 3 */
  double rate;        /* calls/s per client; 0: 50 */
} fleet_deploy_opts;

/* One replacement: s<i> -> r<i>. */
typedef struct fleet_deploy_step {
  int settled;      /* 1: the clients settled on the new answer before s<i> stopped */
  long changed;     /* connections opened + closed on every server, s<i>'s included */
  long predicted;   /* the core's sessions closed + opened */
  long optimum;     /* s<i>'s sessions before plus r<i>'s after (predicted) */
} fleet_deploy_step;

typedef struct fleet_deploy_row {
  char mode[32];
  int servers, clients, min_aperture;
  int port;                 /* the servers' port: part of every address string,
                               so stable mode's keys (and figures) follow it */
  int complete;             /* 0: the run failed (see error) */
  char error[200];
  long sessions_before;     /* connections open before the first step */
  long predicted_before;
  int steps;                /* steps run (servers when complete) */
  fleet_deploy_step step[FLEET_DEPLOY_MAX_SERVERS];
  long changed, predicted, optimum; /* summed over the steps */
  long ok, failed;          /* the clients' calls over the whole run */
  long final_calls;         /* calls the replacements got in the closing window */
  double busiest;           /* their busiest's calls / mean (0: no calls) */
  double fair;              /* the same for a fair random balancer at final_calls */
} fleet_deploy_row;

/* Checks a --modes list for this scenario (aperture modes only, at most
 * FLEET_DEPLOY_MAX_MODES). 0, or -1 with a message in err. */
int io_fleet_deploy_check_modes(const char *modes, char *err, size_t err_len);

/* Runs every mode; one row each (at most max_rows). Returns 0 when every
 * row completed with measured == predicted at every step and no failed
 * call, -1 otherwise (bad options on stderr, *n_rows unchanged). */
int io_fleet_deploy_run(const fleet_deploy_opts *o, fleet_deploy_row *rows, int max_rows,
                        int *n_rows);

/* 1 when a row completed, matched the prediction at every step and had no
 * failed call; 0 otherwise or for NULL. */
int io_fleet_deploy_row_ok(const fleet_deploy_row *r);

/* Table and JSON ({"deploy":[...]}, with each step) of the rows. */
void io_fleet_deploy_table(FILE *out, const fleet_deploy_row *rows, int n);
void io_fleet_deploy_json(FILE *out, const fleet_deploy_row *rows, int n);

/* The scenario's row (fleet_scenario.h): the check (a --modes list, when
 * given, as io_fleet_deploy_check_modes takes it; --servers in [2,
 * FLEET_DEPLOY_MAX_SERVERS], --clients in [1, 16]; the whole message in
 * err), and io_fleet_deploy_run with the flags' modes, servers, clients,
 * minAperture and rate, its rows to out->rows. Both return 0, or -1 (the
 * run: a row failed; either: a NULL argument). */
int io_fleet_deploy_check(const fleet_args *a, char *err, size_t err_len);
int io_fleet_deploy_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* out's rows as io_fleet_deploy_json and io_fleet_deploy_table write
 * them; nothing when an argument is NULL. */
void io_fleet_deploy_write_json(FILE *f, const fleet_output *out);
void io_fleet_deploy_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
