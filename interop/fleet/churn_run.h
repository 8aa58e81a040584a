/* One membership change at a time at a churn point, measured on the
 * servers and predicted by the core, whatever delivers the answer to the
 * clients: churn-grid's DNS stub (fleet_churn_grid.h) and xds's EDS server
 * (fleet_xds.h) are each a churn_answer; the servers, clients, settling
 * and figures are the same. s1 is the server that leaves and comes back. */
#ifndef APERTURE_INTEROP_FLEET_CHURN_RUN_H
#define APERTURE_INTEROP_FLEET_CHURN_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <grpc/grpc.h>

#include "interop/common/proc.h"
#include "interop/fleet/fleet_churn_grid.h"
#include "interop/fleet/fleet_report.h"
#include "interop/fleet/fleet_server.h"
#include "policy/core/subset/ap_aperture.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHURN_RUN_MAX_SERVERS 60
#define CHURN_RUN_MAX_CLIENTS 16
#define CHURN_RUN_REMOVED 1 /* s1 leaves and comes back */

typedef struct churn_run_mode {
  char name[32];
  int aperture; /* 1: the aperture policy (the clients have a status server) */
  ap_mode model;
} churn_run_mode;

/* The servers of one point, shared by its modes: s<i> at an address of its
 * own (fleet_net.h; on loopback 127.0.0.<10+i>), all on one port. */
typedef struct churn_run_fleet {
  fleet_churn_point pt;
  const char *server_bin;
  char dir[4200];
  fleet_server servers[CHURN_RUN_MAX_SERVERS];
  int port;
  char addr[CHURN_RUN_MAX_SERVERS][48]; /* "127.0.0.X:PORT", as the policy names them */
  int restarts;                         /* names the mode's files and s1's restarts apart */
} churn_run_fleet;

/* The clients of one mode at a point. */
typedef struct churn_run_clients {
  int n;
  proc *p[CHURN_RUN_MAX_CLIENTS];
  grpc_channel *status[CHURN_RUN_MAX_CLIENTS];
  char summary[CHURN_RUN_MAX_CLIENTS][4400];
} churn_run_clients;

/* What tells the clients which servers there are. Every function gets
 * `ctx`; the ones returning int return 0, or -1 with a message in err. */
typedef struct churn_answer {
  void *ctx;
  /* Before mode m's clients start: every server in the answer, and m's
   * settings where the answer carries them. */
  int (*prepare)(void *ctx, churn_run_fleet *f, const churn_run_mode *m, char *err, size_t len);
  /* While the clients run: every server in the answer, or all but s1. */
  int (*set)(void *ctx, churn_run_fleet *f, int with_removed, char *err, size_t len);
  /* Starts the mode's client processes (mc->p, mc->summary, mc->n); the
   * status channels are opened by the caller. */
  int (*start_clients)(void *ctx, const churn_run_fleet *f, const churn_run_mode *m,
                       churn_run_clients *mc, char *err, size_t len);
  /* Optional: says why the clients did not settle, when the answer knows;
   * leaves err empty otherwise. */
  void (*explain_unsettled)(void *ctx, char *err, size_t len);
  /* The randomSeed client c runs with (random mode; the prediction uses it). */
  uint64_t (*seed)(int client);
  /* 1: when the clients did not settle on the removal before s1 stopped,
   * wait for them again after (DNS: stopping s1 makes them re-resolve). */
  int settle_again_after_stop;
} churn_answer;

/* Parses a comma-separated list of aperture modes (at most max) for
 * `scenario`, which runs the aperture policy only. Returns the number of
 * modes, or -1 with a message in err naming the bad item. */
int io_churn_run_parse_aperture_modes(const char *list, const char *scenario,
                                      churn_run_mode *out, int max, char *err, size_t err_len);

/* Starts the point's servers in <out_dir>/<scenario>-N-C-A. Returns 0, or
 * -1 with a message in err (the servers started stay in f). */
int io_churn_run_start_servers(churn_run_fleet *f, const char *server_bin, const char *out_dir,
                               const char *scenario, char *err, size_t err_len);

/* Stops the point's servers (those running). */
void io_churn_run_stop_servers(churn_run_fleet *f);

/* Fills out[] with the servers' addresses, s1's only when with_removed;
 * returns how many. out holds CHURN_RUN_MAX_SERVERS. */
size_t io_churn_run_addresses(const churn_run_fleet *f, int with_removed, const char **out);

/* --- the parts of a run, for scenarios with their own sequence of changes
 * (fleet_deploy.h) --- */

/* Starts mode m's clients through the answer and opens their status
 * channels. Returns 0, or -1 with a message in err (the clients started
 * stay in mc: stop them). */
int io_churn_run_start_clients(const churn_answer *a, churn_run_fleet *f,
                               const churn_run_mode *m, churn_run_clients *mc, char *err,
                               size_t err_len);

/* Stops the clients and adds their summaries' ok and failed calls. Returns
 * 0, or -1 with a message in err when a client wrote no summary. */
int io_churn_run_stop_clients(churn_run_clients *mc, long *ok, long *failed, char *err,
                              size_t err_len);

/* Waits (up to 20 s) until the fleet has settled, two polls in a row, on
 * the answer in_answer[i] (1: f->addr[i] is in it; f->pt.servers
 * entries): every aperture client's ring holds exactly those addresses,
 * none widened, its members READY, and each server holds as many
 * connections as clients have it in their aperture (none when out of the
 * answer). Returns 1 when settled, 0 when not or on a NULL argument. */
int io_churn_run_settle_on(const churn_run_fleet *f, const churn_run_mode *m,
                           const churn_run_clients *mc, const uint8_t *in_answer);

/* Every server's connection counts at one moment (a server that is not
 * running reads as its last stats file, a never-started one as 0). */
typedef struct churn_run_counts {
  long opened[CHURN_RUN_MAX_SERVERS], current[CHURN_RUN_MAX_SERVERS];
} churn_run_counts;

void io_churn_run_snapshot(const churn_run_fleet *f, churn_run_counts *out);

/* Sessions server i moved between a (before) and b (after), when it was
 * stopped in between: the connections it opened, plus all it had open at
 * a and opened since, closed. 0 on a NULL argument or i out of range. */
long io_churn_run_stopped_moved(const churn_run_counts *a, const churn_run_counts *b, int i);

/* Waits (up to 20 s) until no server holds a connection. 0, or -1 when
 * some stayed open. */
int io_churn_run_drain(const churn_run_fleet *f);

/* Runs each mode at the point (one row each, up to max_rows in all):
 * start the clients, settle, s1 leaves the answer and stops, s1 restarts
 * and rejoins, stop the clients. start_err != NULL: the point did not start
 * and each row carries it. A run that leaves s1 stopped restarts it.
 * `scenario` names the point in the progress lines on stderr. Returns the
 * number of failed rows, or -1 on a NULL argument. */
int io_churn_run_point(churn_run_fleet *f, const churn_answer *a, const char *scenario,
                       const churn_run_mode *modes, int n_modes, const char *start_err,
                       fleet_churn_row *rows, int max_rows, int *n_rows);

#ifdef __cplusplus
}
#endif

#endif
