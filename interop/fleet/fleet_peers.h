/* The fleet's `peers` scenario: client processes find their coordinate
 * through a peer target (peerTarget = a dns:// target served by the DNS
 * stub, each client with its own peerSelf), then one client joins and
 * later one leaves. Each change is measured at the servers (connections
 * opened + closed, channelz) beside the core's prediction for exactly this
 * fleet, with the optimum (the joiner's or leaver's own sessions), the
 * failed calls (none expected), and the time until every client's status
 * shows the same peer fingerprint. */
#ifndef APERTURE_INTEROP_FLEET_PEERS_H
#define APERTURE_INTEROP_FLEET_PEERS_H

#include <stdio.h>

#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_PEERS_DEFAULT_MODES "continuous,smooth"
#define FLEET_PEERS_MAX_MODES 8

typedef struct fleet_peers_opts {
  const char *server_bin, *client_bin, *out_dir;
  const char *modes;     /* comma separated aperture modes; NULL: default */
  int servers;           /* 0: 12 */
  int clients;           /* clients before the join; 0: 4 */
  int min_aperture;      /* 0: 3 */
  double rate;           /* calls/s per client; 0: 20 */
} fleet_peers_opts;

typedef struct fleet_peers_change {
  int measured, settled;
  long changed, predicted;   /* sessions closed + opened */
  long optimum, predicted_optimum;
  long sessions_before;
  double agree_ms;           /* until every client showed one fingerprint */
} fleet_peers_change;

typedef struct fleet_peers_row {
  char mode[32];
  int servers, clients, min_aperture;
  int complete;
  char error[200];
  fleet_peers_change join, leave;
  long ok, failed;
} fleet_peers_row;

/* Runs every mode; one row each (at most max_rows). Returns 0 when every
 * row completed, -1 otherwise. */
int io_fleet_peers_run(const fleet_peers_opts *o, fleet_peers_row *rows, int max_rows,
                    int *n_rows);

/* Table and JSON ({"peers":[...]}) of the rows. */
void io_fleet_peers_table(FILE *out, const fleet_peers_row *rows, int n);
void io_fleet_peers_json(FILE *out, const fleet_peers_row *rows, int n);

/* The scenario's row (fleet_scenario.h): io_fleet_peers_run with the
 * flags' modes, servers, clients, minAperture and rate; the rows go to
 * out->rows. Returns 0, or -1 when a row failed or on a NULL argument. */
int io_fleet_peers_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* out's rows as io_fleet_peers_json and io_fleet_peers_table write
 * them; nothing when an argument is NULL. */
void io_fleet_peers_write_json(FILE *f, const fleet_output *out);
void io_fleet_peers_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
