/* xds: one membership change at a time through EDS, measured on the
 * servers and predicted by the core (see fleet_xds.h); the answer comes
 * from the test ADS server, the measurement from churn_run.h.
 *
 * gRPC's xDS client applies an EDS push as soon as it arrives (no
 * re-resolution interval, unlike DNS), so each change settles as fast as
 * the clients reconnect. All clients get one Cluster, so one config:
 * random mode's randomSeed is the same for every client (and in the
 * prediction). */
#define _GNU_SOURCE
#include "interop/fleet/fleet_xds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/grpc.h>

#include "interop/fleet/churn_model.h"
#include "interop/fleet/churn_run.h"
#include "interop/fleet/fleet_churn_grid.h"
#include "interop/fleet/fleet_client.h"
#include "interop/xds/xds_server.h"

#define MAX_N CHURN_RUN_MAX_SERVERS
#define MAX_MODES 8
#define ACK_TIMEOUT_MS 20000
#define LISTENER "fleet-xds"
#define CLUSTER "fleet-xds-cluster"

/* The management server of one point. */
typedef struct eds_answer {
  const fleet_xds_opts *o;
  xds_server *xds;
  char bootstrap[4300];
} eds_answer;

/* The one randomSeed every client gets from the shared Cluster. The
 * config travels as a google.protobuf.Struct, whose numbers are doubles,
 * and gRPC 1.51 turns them back into JSON with 15 significant digits: a
 * seed of 10^15 or more arrives in exponent form and is NACKed. */
static uint64_t shared_seed(void) { return io_churn_model_seed(0) % 1000000000u; }

static int parse_modes(const char *list, churn_run_mode *out, int max, char *err, size_t err_len) {
  return io_churn_run_parse_aperture_modes(list, "xds", out, max, err, err_len);
}

int io_fleet_xds_check_modes(const char *modes, char *err, size_t err_len) {
  churn_run_mode m[MAX_MODES];
  char local[200];
  if (err == NULL || err_len == 0) {
    err = local;
    err_len = sizeof(local);
  }
  if (modes == NULL) {
    snprintf(err, err_len, "--modes: missing");
    return -1;
  }
  return parse_modes(modes, m, MAX_MODES, err, err_len) < 0 ? -1 : 0;
}

/* The aperture config the Cluster carries for mode m (a JSON object). */
static void policy_json(const churn_run_fleet *f, const churn_run_mode *m, char *out, size_t len) {
  char seed[48] = "";
  if (m->model == AP_MODE_RANDOM) {
    snprintf(seed, sizeof(seed), ",\"randomSeed\":%llu", (unsigned long long)shared_seed());
  }
  snprintf(out, len, "{\"mode\":\"%s\",\"minAperture\":%d,\"eagerConnect\":true%s}", m->name,
           f->pt.min_aperture, seed);
}

/* --- the EDS answer --- */

/* Pushes every server, or every server but s1, and waits for a client's
 * ACK when `clients` (no stream is open between modes). */
static int push(eds_answer *ea, const churn_run_fleet *f, int with_removed, int clients) {
  const char *list[MAX_N];
  size_t n = io_churn_run_addresses(f, with_removed, list);
  char err[200];
  if (xds_server_set_endpoints(ea->xds, list, n, err, sizeof(err)) != 0) {
    fprintf(stderr, "fleet: xds: %s\n", err);
    return -1;
  }
  return clients ? xds_server_wait_acked(ea->xds, XDS_EDS, ACK_TIMEOUT_MS) : 0;
}

static int set_answer(void *ctx, churn_run_fleet *f, int with_removed, char *err, size_t len) {
  if (push(ctx, f, with_removed, 1) == 0) return 0;
  snprintf(err, len, "no client ACKed the EDS %s", with_removed ? "addition" : "removal");
  return -1;
}

/* The mode's aperture config goes in the Cluster, every server in EDS. */
static int prepare(void *ctx, churn_run_fleet *f, const churn_run_mode *m, char *err, size_t len) {
  eds_answer *ea = ctx;
  char policy[200], why[200] = "";
  policy_json(f, m, policy, sizeof(policy));
  if (xds_server_set_policy_json(ea->xds, policy, why, sizeof(why)) != 0 ||
      push(ea, f, 1, 0) != 0) {
    snprintf(err, len, "xds: %.150s", why);
    return -1;
  }
  return 0;
}

/* Says so when the clients NACKed the Cluster, rather than only that they
 * did not settle. */
static void explain_unsettled(void *ctx, char *err, size_t len) {
  const eds_answer *ea = ctx;
  xds_server_counts xc;
  xds_server_get_counts(ea->xds, &xc);
  if (xc.nacks[XDS_CDS] > 0) snprintf(err, len, "the clients NACKed the Cluster: %.120s", xc.last_nack);
}

static uint64_t client_seed(int client) {
  (void)client;
  return shared_seed();
}

static int write_bootstrap(eds_answer *ea, const char *dir) {
  snprintf(ea->bootstrap, sizeof(ea->bootstrap), "%s/bootstrap.json", dir);
  FILE *f = fopen(ea->bootstrap, "w");
  if (f == NULL) return -1;
  fprintf(f,
          "{\"xds_servers\":[{\"server_uri\":\"127.0.0.1:%d\",\"channel_creds\":[{\"type\":"
          "\"insecure\"}],\"server_features\":[\"xds_v3\"]}],"
          "\"node\":{\"id\":\"fleet-client\",\"cluster\":\"fleet\"}}\n",
          xds_server_port(ea->xds));
  return fclose(f) == 0 ? 0 : -1;
}

/* Starts the point's servers and its management server with the first
 * mode's Cluster. */
static int start_point(churn_run_fleet *f, eds_answer *ea, const churn_run_mode *first, char *err,
                       size_t err_len) {
  if (io_churn_run_start_servers(f, ea->o->server_bin, ea->o->out_dir, "xds", err, err_len) != 0) {
    return -1;
  }
  const char *list[MAX_N];
  size_t n = io_churn_run_addresses(f, 1, list);
  char policy[200];
  policy_json(f, first, policy, sizeof(policy));
  xds_server_options xo = {NULL, LISTENER, CLUSTER, "aperture", policy, list, n};
  if (xds_server_start(&xo, &ea->xds, err, err_len) != 0) return -1;
  if (write_bootstrap(ea, f->dir) != 0) {
    snprintf(err, err_len, "cannot write %.100s", ea->bootstrap);
    return -1;
  }
  return 0;
}

/* Starts the clients on xds:///LISTENER with the bootstrap file; the xDS
 * settings reach them through the environment they inherit. */
static int start_clients(void *ctx, const churn_run_fleet *f, const churn_run_mode *m,
                         churn_run_clients *mc, char *err, size_t err_len) {
  (void)m;
  const eds_answer *ea = ctx;
  char rate[32], cnt[16];
  snprintf(rate, sizeof(rate), "%g", ea->o->rate > 0 ? ea->o->rate : 20.0);
  snprintf(cnt, sizeof(cnt), "%d", f->pt.clients);
  setenv("GRPC_XDS_BOOTSTRAP", ea->bootstrap, 1);
  setenv("GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG", "true", 1);
  int rc = 0;
  for (int c = 0; c < f->pt.clients; c++) {
    char idx[16], log[4400];
    snprintf(idx, sizeof(idx), "%d", c);
    snprintf(mc->summary[c], sizeof(mc->summary[c]), "%s/client%d-%d.json", f->dir, c,
             f->restarts);
    snprintf(log, sizeof(log), "%s/client%d.log", f->dir, c);
    fleet_client_opts co =
        io_fleet_client_until_stopped(ea->o->client_bin, "xds:///" LISTENER,
                                      "{}" /* the Cluster names the policy */, rate,
                                      mc->summary[c]);
    co.peer_index = idx;
    co.peer_count = cnt;
    co.status_server = 1;
    remove(mc->summary[c]);
    mc->p[c] = io_fleet_client_start(&co, log);
    if (mc->p[c] == NULL) {
      snprintf(err, err_len, "client %d did not start", c);
      rc = -1;
      break;
    }
    mc->n = c + 1;
  }
  unsetenv("GRPC_XDS_BOOTSTRAP");
  unsetenv("GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG");
  return rc;
}

int io_fleet_xds_run(const fleet_xds_opts *o, fleet_churn_row *rows, int max_rows, int *n_rows) {
  if (o == NULL || o->server_bin == NULL || o->client_bin == NULL || o->out_dir == NULL ||
      rows == NULL || n_rows == NULL) {
    fprintf(stderr, "fleet: xds: missing options\n");
    return -1;
  }
  fleet_churn_point points[FLEET_CHURN_MAX_POINTS];
  char err[200];
  int n_points = io_fleet_churn_parse_points(o->points ? o->points : FLEET_XDS_DEFAULT_POINTS,
                                             points, FLEET_CHURN_MAX_POINTS, err, sizeof(err));
  if (n_points < 0) {
    fprintf(stderr, "fleet: %s\n", err);
    return -1;
  }
  churn_run_mode modes[MAX_MODES];
  int n_modes = parse_modes(o->modes ? o->modes : FLEET_XDS_DEFAULT_MODES, modes, MAX_MODES, err,
                            sizeof(err));
  if (n_modes < 0) {
    fprintf(stderr, "fleet: xds: %s\n", err);
    return -1;
  }
  static eds_answer ea;
  churn_answer answer = {&ea, prepare, set_answer, start_clients, explain_unsettled, client_seed, 0};
  grpc_init();
  int failures = 0;
  for (int p = 0; p < n_points; p++) {
    static churn_run_fleet f;
    memset(&f, 0, sizeof(f));
    memset(&ea, 0, sizeof(ea));
    ea.o = o;
    f.pt = points[p];
    char start_err[200] = "";
    int started = start_point(&f, &ea, &modes[0], start_err, sizeof(start_err)) == 0;
    failures += io_churn_run_point(&f, &answer, "xds", modes, n_modes,
                                   started ? NULL : start_err, rows, max_rows, n_rows) != 0;
    io_churn_run_stop_servers(&f);
    xds_server_stop(ea.xds);
    ea.xds = NULL;
  }
  grpc_shutdown();
  return failures ? -1 : 0;
}

/* --- report --- */

static void step_cells(FILE *f, const fleet_churn_step *st) {
  if (!st->measured) {
    fprintf(f, " %-38s |", "not measured");
    return;
  }
  char cell[80];
  snprintf(cell, sizeof(cell), "%5ld%s %9ld %5ld/%ld", st->changed, st->settled ? "" : "(!)",
           st->predicted_changed, st->optimum, st->predicted_optimum);
  fprintf(f, " %-38s |", cell);
}

void io_fleet_xds_table(FILE *f, const fleet_churn_row *rows, int n) {
  if (f == NULL || rows == NULL || n <= 0) return;
  fprintf(f,
          "\nscenario xds: endpoints from EDS (test ADS server), aperture from the Cluster (CDS).\n"
          "Sessions changed (connections closed + opened on all servers) when s1 leaves the\n"
          "EDS answer (and stops once no client holds it), then when it comes back; measured\n"
          "on the servers (channelz) beside the core's prediction for the same fleet.\n"
          "optimum = the removed/added server's sessions, measured/predicted.\n\n");
  io_fleet_report_churn_rows(f, rows, n, step_cells);
  int unsettled = 0;
  for (int i = 0; i < n; i++) {
    unsettled |= rows[i].complete && (!rows[i].removal.settled || !rows[i].addition.settled);
  }
  if (unsettled) {
    fprintf(f, "(!) = the clients had not all settled within the bound when the figures were read.\n");
  }
}

void io_fleet_xds_json(FILE *f, const fleet_churn_row *rows, int n) {
  if (f == NULL || (rows == NULL && n > 0)) return;
  fprintf(f, "{\"xds\":{\"rows\":[");
  for (int i = 0; i < n; i++) {
    fprintf(f, "%s\n", i ? "," : "");
    io_fleet_report_churn_row_json(f, &rows[i], 0);
    fputc('}', f);
  }
  fprintf(f, "\n]}}\n");
}

/* --- the scenario table's row --- */

int io_fleet_xds_check(const fleet_args *a, char *err, size_t err_len) {
  if (a == NULL || err == NULL) return -1;
  char why[200];
  if (a->modes != NULL && io_fleet_xds_check_modes(a->modes, why, sizeof(why)) != 0) {
    snprintf(err, err_len, "flag %s", why);
    return -1;
  }
  return 0;
}

int io_fleet_xds_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  if (a == NULL || out == NULL) return -1;
  fleet_xds_opts xo = {a->server_bin, a->client_bin, a->out_dir, a->modes, a->points, a->rate};
  static fleet_churn_row rows[FLEET_CHURN_MAX_POINTS * 8];
  int n = 0;
  int rc = io_fleet_xds_run(&xo, rows, (int)(sizeof(rows) / sizeof(rows[0])), &n);
  out->rows = rows;
  out->n_rows = n;
  return rc != 0 ? -1 : 0;
}

void io_fleet_xds_write_json(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_xds_json(f, out->rows, out->n_rows);
}

void io_fleet_xds_write_table(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_xds_table(f, out->rows, out->n_rows);
}
