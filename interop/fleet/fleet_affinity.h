/* The fleet's affinity scenario: request affinity (sticky sessions or
 * consistent hashing inside the aperture, docs/affinity.md) through a real
 * fleet. N interop servers on 127.0.0.1 and C client processes, client c
 * peer c of C, each alternating UnaryCall and EmptyCall with one key per
 * method in the affinity header (--metadata RPC:KEY:VALUE): client c sends
 * key k<c> on UnaryCall and k<c+1 mod C> on EmptyCall, so every key comes
 * from two clients. Once every client's aperture is READY, the runner
 * takes a few windows of each client's next calls from its
 * LoadBalancerStatsService (rpcs_by_method: per method, calls per server)
 * and its aperture from its status server (GetRingState), and reports per
 * key and client the servers that served it: one owner, inside that
 * client's aperture, is what affinity promises. */
#ifndef APERTURE_INTEROP_FLEET_AFFINITY_H
#define APERTURE_INTEROP_FLEET_AFFINITY_H

#include <stdint.h>
#include <stdio.h>

#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_AFFINITY_MAX_SERVERS 32
#define FLEET_AFFINITY_MAX_CLIENTS 8
#define FLEET_AFFINITY_MAX_KINDS 2
#define FLEET_AFFINITY_DEFAULT_KINDS "sticky,hash"
#define FLEET_AFFINITY_HEADER "x-fleet-key"

typedef struct fleet_affinity_opts {
  const char *server_bin, *client_bin, *out_dir;
  const char *kinds;  /* "sticky", "hash" or both, comma separated; NULL: both */
  int servers;        /* 0: 8 (at most FLEET_AFFINITY_MAX_SERVERS) */
  int clients;        /* 0: 4 (2 .. FLEET_AFFINITY_MAX_CLIENTS) */
  int min_aperture;   /* 0: 3 */
  double rate;        /* calls/s per client; 0: 200 */
} fleet_affinity_opts;

/* One key as one client sent it. */
typedef struct fleet_affinity_key {
  char key[16];     /* "k0", "k1", ... */
  int client;
  const char *method; /* "UNARY_CALL" or "EMPTY_CALL" */
  long calls[FLEET_AFFINITY_MAX_SERVERS]; /* per server, over every window */
  int owners;       /* servers with at least one call */
  int owner;        /* the server with most calls; -1: none */
  int in_aperture;  /* 1: every server that served it is in the client's aperture */
} fleet_affinity_key;

typedef struct fleet_affinity_row {
  char kind[16];    /* "sticky" or "hash" */
  int servers, clients, min_aperture, windows;
  int complete;     /* 0: the run failed (see error) */
  char error[160];
  long ok, failed;  /* the clients' calls over the whole run */
  uint8_t aperture[FLEET_AFFINITY_MAX_CLIENTS][FLEET_AFFINITY_MAX_SERVERS]; /* 1: member */
  int n_keys;
  fleet_affinity_key keys[2 * FLEET_AFFINITY_MAX_CLIENTS];
  int keys_one_owner;   /* keys (per client) served by exactly one server */
  int keys_in_aperture; /* keys (per client) served only inside the aperture */
  int keys_agree;       /* keys whose two clients chose the same owner */
} fleet_affinity_row;

/* Checks a --affinity list for this scenario ("sticky", "hash"). Returns 0,
 * or -1 with a message naming the bad item in err. */
int io_fleet_affinity_check_kinds(const char *kinds, char *err, size_t err_len);

/* Runs each kind in turn (fresh servers and clients), one row each (at
 * most max_rows). Returns 0 when every row completed, -1 otherwise (bad
 * options on stderr, *n_rows unchanged). */
int io_fleet_affinity_run(const fleet_affinity_opts *opts, fleet_affinity_row *rows,
                          int max_rows, int *n_rows);

/* Writes per kind the apertures and, per key and client, the servers that
 * served it, and the totals. */
void io_fleet_affinity_table(FILE *f, const fleet_affinity_row *rows, int n);

/* Writes {"affinity":{"rows":[...]}}: per row kind, servers, clients,
 * min_aperture, windows, complete, error, ok, failed, keys_one_owner,
 * keys_in_aperture, keys_agree, "apertures" (per client the member server
 * names) and "keys" (key, client, method, owner, owners, in_aperture,
 * calls {server: count}). */
void io_fleet_affinity_json(FILE *f, const fleet_affinity_row *rows, int n);

/* The scenario's row (fleet_scenario.h): the check (--servers in [2,
 * FLEET_AFFINITY_MAX_SERVERS], --clients in [2,
 * FLEET_AFFINITY_MAX_CLIENTS]; the whole message in err), and
 * io_fleet_affinity_run with the flags' kinds (--affinity), servers,
 * clients, minAperture and rate, its rows to out->rows. Both return 0, or
 * -1 (the run: a row failed; either: a NULL argument). */
int io_fleet_affinity_check(const fleet_args *a, char *err, size_t err_len);
int io_fleet_affinity_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* out's rows as io_fleet_affinity_json and io_fleet_affinity_table write
 * them; nothing when an argument is NULL. */
void io_fleet_affinity_write_json(FILE *f, const fleet_output *out);
void io_fleet_affinity_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
