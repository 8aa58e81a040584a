/* The fleet's churn-grid scenario: for each (servers N, clients C,
 * minAperture A) point and each mode, real server and client processes on
 * loopback find each other through the DNS stub; once settled, s1 leaves
 * the DNS answer and is stopped when no client holds it any more (removal),
 * then starts again at the same address and rejoins the answer (addition).
 * Each change is measured on the servers (connections opened + closed,
 * channelz) and predicted by the core for exactly this fleet
 * (churn_model.h). */
#ifndef APERTURE_INTEROP_FLEET_CHURN_GRID_H
#define APERTURE_INTEROP_FLEET_CHURN_GRID_H

#include <stddef.h>

#include "interop/fleet/fleet_report.h"
#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_CHURN_MAX_POINTS 8

typedef struct fleet_churn_point {
  int servers, clients, min_aperture;
} fleet_churn_point;

/* The default points: three where the model orders smooth clearly below
 * continuous on a removal, one where it does not. */
#define FLEET_CHURN_DEFAULT_POINTS "12:4:3,16:8:2,24:8:3,13:7:3"
#define FLEET_CHURN_DEFAULT_MODES "continuous,smooth,stable,discrete,random,vdc,round_robin"

typedef struct fleet_churn_opts {
  const char *server_bin, *client_bin, *out_dir;
  const char *modes;   /* comma separated; NULL: FLEET_CHURN_DEFAULT_MODES */
  const char *points;  /* "N:C:A,..."; NULL: FLEET_CHURN_DEFAULT_POINTS */
  int have_aperture;   /* 0: aperture modes are skipped */
  double rate;         /* calls/s per client; 0: 20 */
  long reresolution_ms; /* aperture's reresolutionIntervalMs; 0: 200 */
} fleet_churn_opts;

/* The fleet's DNS (fleet_dns.h) as the answer of churn_run.h: o
 * (client_bin, rate, reresolution_ms) and the running DNS server for
 * "fleet.test", set by the caller. Its set/prepare put servers[i].host of
 * f in the answer; its clients dial the DNS target for <f->port> with the
 * mode's aperture config (eagerConnect, reresolutionIntervalMs) and peer
 * index c of f->pt.clients. */
struct fleet_dns;
struct churn_answer;
typedef struct fleet_churn_dns {
  const fleet_churn_opts *o;
  struct fleet_dns *dns;
} fleet_churn_dns;

/* Fills *out with the DNS answer over `dns` (which must outlive it);
 * nothing on NULL. */
void io_fleet_churn_dns_answer(fleet_churn_dns *dns, struct churn_answer *out);

/* Parses "N:C:A,..." (N in [3, 60], C in [1, 16], A >= 1) into out (at most
 * max). Returns the number of points, or -1 with a message in err. */
int io_fleet_churn_parse_points(const char *text, fleet_churn_point *out, int max, char *err,
                             size_t err_len);

/* Runs every point and mode, appending one row each to rows (at most
 * max_rows). Returns 0 when every row completed, -1 otherwise (bad options
 * are reported on stderr with *n_rows unchanged). */
int io_fleet_churn_grid(const fleet_churn_opts *opts, fleet_churn_row *rows, int max_rows,
                     int *n_rows);

/* The scenario's row (fleet_scenario.h): io_fleet_churn_grid with the
 * flags' modes, points and rate, appending to out->churn (the fleet
 * report's churn-grid rows, up to out->max_churn). Returns 0, or -1 when
 * a row failed or on a NULL argument. */
int io_fleet_churn_grid_scenario(const void *def, const fleet_args *a, fleet_output *out);

#ifdef __cplusplus
}
#endif

#endif
