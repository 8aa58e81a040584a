/* The fleet's xds scenario: the churn-grid measurement (fleet_churn_grid.h) with
 * the endpoints delivered by EDS from the test ADS server (interop/xds)
 * instead of the DNS stub. For each (servers N, clients C, minAperture A)
 * point and aperture mode, real server processes listen on 127.0.0.10,
 * .11, ... (one port) and real client processes dial xds:///fleet-xds with
 * a bootstrap file naming the management server; the Cluster (CDS)
 * selects aperture with the mode's config, the ClusterLoadAssignment (EDS)
 * lists the servers. Once settled, s1 leaves the EDS answer and is stopped
 * when no client holds it (removal), then starts again at its address and
 * rejoins the answer (addition). Each change is measured on the servers
 * (connections opened + closed, channelz) beside the core's prediction
 * (churn_model.h). */
#ifndef APERTURE_INTEROP_FLEET_XDS_H
#define APERTURE_INTEROP_FLEET_XDS_H

#include <stdio.h>

#include "interop/fleet/fleet_report.h"
#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_XDS_DEFAULT_POINTS "12:4:3"
#define FLEET_XDS_DEFAULT_MODES "continuous,smooth"

typedef struct fleet_xds_opts {
  const char *server_bin, *client_bin, *out_dir;
  const char *modes;  /* comma separated aperture modes; NULL: FLEET_XDS_DEFAULT_MODES */
  const char *points; /* "N:C:A,..."; NULL: FLEET_XDS_DEFAULT_POINTS */
  double rate;        /* calls/s per client; 0: 20 */
} fleet_xds_opts;

/* Checks a --modes list for this scenario: aperture modes only (the
 * Cluster selects aperture), at most 8. Returns 0, or -1 with a message
 * in err naming the bad mode. */
int io_fleet_xds_check_modes(const char *modes, char *err, size_t err_len);

/* Runs every point and mode, appending one row each to rows (at most
 * max_rows; the row layout of churn-grid). Returns 0 when every row
 * completed, -1 otherwise (bad options on stderr, *n_rows unchanged). */
int io_fleet_xds_run(const fleet_xds_opts *opts, fleet_churn_row *rows, int max_rows,
                     int *n_rows);

/* Writes the rows as a table: per point and mode, measured beside
 * predicted, and the clients' calls ok/failed. */
void io_fleet_xds_table(FILE *f, const fleet_churn_row *rows, int n);

/* Writes {"xds":{"rows":[...]}}: per row servers, clients, min_aperture,
 * mode, complete, error, ok, failed and "removal"/"addition" objects with
 * measured, settled, sessions_before, changed, optimum and predicted_*. */
void io_fleet_xds_json(FILE *f, const fleet_churn_row *rows, int n);

/* The scenario's row (fleet_scenario.h): the check (a --modes list, when
 * given, as io_fleet_xds_check_modes takes it; the message in err starts
 * with "flag "), and io_fleet_xds_run with the flags' modes, points and
 * rate, its rows to out->rows. Both return 0, or -1 (the run: a row
 * failed; either: a NULL argument). */
int io_fleet_xds_check(const fleet_args *a, char *err, size_t err_len);
int io_fleet_xds_scenario(const void *def, const fleet_args *a, fleet_output *out);

/* out's rows as io_fleet_xds_json and io_fleet_xds_table write
 * them; nothing when an argument is NULL. */
void io_fleet_xds_write_json(FILE *f, const fleet_output *out);
void io_fleet_xds_write_table(FILE *f, const fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
