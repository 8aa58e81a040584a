/* xds: one membership change at a time through EDS, measured on the
 * servers and predicted by the core (see fleet_xds.h).
 *
 * gRPC's xDS client applies an EDS push as soon as it arrives (no
 * re-resolution interval, unlike DNS), so each change settles as fast as
 * the clients reconnect. The runner reads each client's ring from its
 * status server (GetRingState) to know when all of them have the new list
 * with their members READY and the servers' connection counts equal what
 * the clients hold. All clients get one Cluster, so one config: random
 * mode's randomSeed is the same for every client (and in the prediction). */
#define _GNU_SOURCE
#include "interop/fleet/fleet_xds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <grpc/grpc.h>

#include "aperture/v1/status.pb-c.h"
#include "interop/common/json_read.h"
#include "interop/common/proc.h"
#include "interop/common/unary_call.h"
#include "interop/fleet/churn_model.h"
#include "interop/fleet/fleet_churn.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_server.h"
#include "interop/xds/xds_server.h"

#define MAX_N 60
#define MAX_C 16
#define MAX_MODES 8
#define REMOVED 1               /* s1 leaves and comes back */
#define SETTLE_TIMEOUT_MS 20000 /* generous: a slow machine settles in ~1 s */
#define ACK_TIMEOUT_MS 20000
#define POLL_MS 100
#define TRAFFIC_MS 500 /* calls flow this long on a settled fleet before each change */
#define LISTENER "fleet-xds"
#define CLUSTER "fleet-xds-cluster"

typedef struct xds_mode {
  char name[32];
  ap_mode model;
} xds_mode;

/* The servers and management server of one point, shared by its modes. */
typedef struct point_fleet {
  const fleet_xds_opts *o;
  fleet_churn_point pt;
  char dir[4200];
  char bootstrap[4300];
  fleet_server servers[MAX_N];
  int port;
  xds_server *xds;
  char addr[MAX_N][48]; /* "127.0.0.X:PORT", as the policy names them */
  int restarts;
} point_fleet;

/* The clients of one mode at a point. */
typedef struct mode_clients {
  int n;
  proc *p[MAX_C];
  grpc_channel *status[MAX_C];
  char summary[MAX_C][4400];
} mode_clients;

typedef struct counts {
  long opened[MAX_N], current[MAX_N];
} counts;

/* The one randomSeed every client gets from the shared Cluster. The
 * config travels as a google.protobuf.Struct, whose numbers are doubles,
 * and gRPC 1.51 turns them back into JSON with 15 significant digits: a
 * seed of 10^15 or more arrives in exponent form and is NACKed. */
static uint64_t shared_seed(void) { return io_churn_model_seed(0) % 1000000000u; }

static int parse_modes(const char *list, xds_mode *out, int max, char *err, size_t err_len) {
  int n = 0;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len == 0 || len >= sizeof(out[0].name)) {
      snprintf(err, err_len, "--modes: bad item '%.*s'", (int)len, p);
      return -1;
    }
    if (n == max) {
      snprintf(err, err_len, "--modes: at most %d modes for xds", max);
      return -1;
    }
    memcpy(out[n].name, p, len);
    out[n].name[len] = '\0';
    if (ap_mode_parse(out[n].name, &out[n].model, NULL) != AP_OK) {
      snprintf(err, err_len, "--modes: '%s' is not an aperture mode (xds selects aperture in the Cluster)",
               out[n].name);
      return -1;
    }
    n++;
    p += len + (p[len] == ',');
  }
  if (n == 0) snprintf(err, err_len, "--modes: no mode given");
  return n > 0 ? n : -1;
}

int io_fleet_xds_check_modes(const char *modes, char *err, size_t err_len) {
  xds_mode m[MAX_MODES];
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
static void policy_json(const point_fleet *pf, const xds_mode *m, char *out, size_t len) {
  char seed[48] = "";
  if (m->model == AP_MODE_RANDOM) {
    snprintf(seed, sizeof(seed), ",\"randomSeed\":%llu", (unsigned long long)shared_seed());
  }
  snprintf(out, len, "{\"mode\":\"%s\",\"minAperture\":%d,\"eagerConnect\":true%s}", m->name,
           pf->pt.min_aperture, seed);
}

/* --- the point's servers and EDS answer --- */

static size_t address_list(const point_fleet *pf, int with_removed, const char **out) {
  size_t m = 0;
  for (int i = 0; i < pf->pt.servers; i++) {
    if (i != REMOVED || with_removed) out[m++] = pf->addr[i];
  }
  return m;
}

/* Pushes every server, or every server but s1, and waits for a client's
 * ACK when `clients` (no stream is open between modes). */
static int set_answer(point_fleet *pf, int with_removed, int clients) {
  const char *list[MAX_N];
  size_t n = address_list(pf, with_removed, list);
  char err[200];
  if (xds_server_set_endpoints(pf->xds, list, n, err, sizeof(err)) != 0) {
    fprintf(stderr, "fleet: xds: %s\n", err);
    return -1;
  }
  return clients ? xds_server_wait_acked(pf->xds, XDS_EDS, ACK_TIMEOUT_MS) : 0;
}

static int write_bootstrap(point_fleet *pf) {
  snprintf(pf->bootstrap, sizeof(pf->bootstrap), "%s/bootstrap.json", pf->dir);
  FILE *f = fopen(pf->bootstrap, "w");
  if (f == NULL) return -1;
  fprintf(f,
          "{\"xds_servers\":[{\"server_uri\":\"127.0.0.1:%d\",\"channel_creds\":[{\"type\":"
          "\"insecure\"}],\"server_features\":[\"xds_v3\"]}],"
          "\"node\":{\"id\":\"fleet-client\",\"cluster\":\"fleet\"}}\n",
          xds_server_port(pf->xds));
  return fclose(f) == 0 ? 0 : -1;
}

static int start_point(point_fleet *pf, const xds_mode *first, char *err, size_t err_len) {
  snprintf(pf->dir, sizeof(pf->dir), "%s/xds-%d-%d-%d", pf->o->out_dir, pf->pt.servers,
           pf->pt.clients, pf->pt.min_aperture);
  mkdir(pf->dir, 0755);
  pf->port = 0;
  for (int i = 0; i < pf->pt.servers; i++) {
    char name[16];
    snprintf(name, sizeof(name), "s%d", i);
    snprintf(pf->servers[i].host, sizeof(pf->servers[i].host), "127.0.0.%d", 10 + i);
    if (io_fleet_server_start(pf->o->server_bin, pf->dir, name, pf->port, "", NULL,
                              &pf->servers[i]) != 0) {
      snprintf(err, err_len, "server %s did not start (see %.100s)", name, pf->dir);
      return -1;
    }
    pf->port = pf->servers[i].port; /* all share the first one's port */
    snprintf(pf->addr[i], sizeof(pf->addr[i]), "%s:%d", pf->servers[i].host, pf->port);
  }
  const char *list[MAX_N];
  size_t n = address_list(pf, 1, list);
  char policy[200];
  policy_json(pf, first, policy, sizeof(policy));
  xds_server_options xo = {NULL, LISTENER, CLUSTER, "aperture", policy, list, n};
  if (xds_server_start(&xo, &pf->xds, err, err_len) != 0) return -1;
  if (write_bootstrap(pf) != 0) {
    snprintf(err, err_len, "cannot write %.100s", pf->bootstrap);
    return -1;
  }
  return 0;
}

static void stop_point(point_fleet *pf) {
  for (int i = 0; i < pf->pt.servers; i++) {
    if (pf->servers[i].p) io_proc_stop(pf->servers[i].p, 10000);
    pf->servers[i].p = NULL;
  }
  xds_server_stop(pf->xds);
  pf->xds = NULL;
}

/* --- settling --- */

/* Adds to held[] the members of one client's ring; 1 when it has exactly
 * the answer's addresses, no widened member, and every member READY. */
static int client_ring(const point_fleet *pf, grpc_channel *ch, int with_removed, long *held) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  unary_result r;
  if (io_unary_call(ch, "/aperture.v1.ApertureStatus/GetRingState", &req.base,
                    &aperture__v1__get_ring_state_response__descriptor, NULL, NULL, 3000,
                    &r) != 0) {
    return 0;
  }
  int ok = r.code == GRPC_STATUS_OK && r.response != NULL;
  const Aperture__V1__GetRingStateResponse *resp =
      ok ? (const Aperture__V1__GetRingStateResponse *)r.response : NULL;
  ok = ok && resp->n_rings == 1;
  const Aperture__V1__RingState *ring = ok ? resp->rings[0] : NULL;
  uint32_t expected = (uint32_t)pf->pt.servers - (with_removed ? 0 : 1);
  ok = ok && !ring->truncated && ring->endpoint_count == expected && ring->widened == 0 &&
       ring->n_endpoints == expected;
  for (size_t e = 0; ok && e < ring->n_endpoints; e++) {
    const Aperture__V1__EndpointState *ep = ring->endpoints[e];
    int idx = -1;
    for (int i = 0; i < pf->pt.servers; i++) {
      if (strcmp(pf->addr[i], ep->address) == 0) idx = i;
    }
    if (idx < 0 || (idx == REMOVED && !with_removed)) {
      ok = 0;
    } else if (ep->in_aperture) {
      if (ep->connectivity != APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_READY) ok = 0;
      held[idx]++;
    }
  }
  io_unary_result_free(&r);
  return ok;
}

/* Waits (up to SETTLE_TIMEOUT_MS) until every client has the current
 * answer with its members READY and each server's open connections equal
 * the clients holding it, in two polls in a row. 1 when settled. */
static int settle(const point_fleet *pf, const mode_clients *mc, int with_removed) {
  double deadline = io_fleet_now_ms() + SETTLE_TIMEOUT_MS;
  int good = 0;
  while (io_fleet_now_ms() < deadline) {
    long held[MAX_N];
    memset(held, 0, sizeof(held));
    int ok = 1;
    for (int c = 0; c < mc->n; c++) ok = client_ring(pf, mc->status[c], with_removed, held) && ok;
    for (int i = 0; ok && i < pf->pt.servers; i++) {
      long opened, current = 0;
      if (pf->servers[i].p && io_fleet_server_counts(pf->servers[i].stats, &opened, &current) != 0) {
        ok = 0;
      }
      if (current != held[i]) ok = 0;
    }
    good = ok ? good + 1 : 0;
    if (good >= 2) return 1;
    io_fleet_sleep_ms(POLL_MS);
  }
  return 0;
}

/* --- one mode at one point --- */

/* Starts the clients on xds:///LISTENER with the bootstrap file; the xDS
 * settings reach them through the environment they inherit. */
static int start_clients(point_fleet *pf, mode_clients *mc, char *err, size_t err_len) {
  char rate[32], cnt[16];
  snprintf(rate, sizeof(rate), "%g", pf->o->rate > 0 ? pf->o->rate : 20.0);
  snprintf(cnt, sizeof(cnt), "%d", pf->pt.clients);
  setenv("GRPC_XDS_BOOTSTRAP", pf->bootstrap, 1);
  setenv("GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG", "true", 1);
  int rc = 0;
  for (int c = 0; c < pf->pt.clients; c++) {
    char idx[16], log[4400];
    snprintf(idx, sizeof(idx), "%d", c);
    snprintf(mc->summary[c], sizeof(mc->summary[c]), "%s/client%d-%d.json", pf->dir, c,
             pf->restarts);
    snprintf(log, sizeof(log), "%s/client%d.log", pf->dir, c);
    fleet_client_opts co = {
        .bin = pf->o->client_bin,
        .target = "xds:///" LISTENER,
        .service_config = "{}", /* the Cluster names the policy */
        .rate = rate,
        .duration_s = "3600", /* an upper bound: the runner stops the clients */
        .concurrency = "2",
        .linger_s = "0",
        .summary_file = mc->summary[c],
        .peer_index = idx,
        .peer_count = cnt,
        .status_server = 1,
    };
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
  for (int c = 0; rc == 0 && c < mc->n; c++) {
    const char *why = "";
    mc->status[c] = io_fleet_client_status_channel(mc->p[c], &why);
    if (mc->status[c] == NULL) {
      snprintf(err, err_len, "client %d %s (see %.100s)", c, why, pf->dir);
      rc = -1;
    }
  }
  return rc;
}

/* Stops the clients and adds their calls to the row. */
static void stop_clients(mode_clients *mc, fleet_churn_row *row) {
  for (int c = 0; c < mc->n; c++) {
    if (mc->status[c]) grpc_channel_destroy(mc->status[c]);
    mc->status[c] = NULL;
  }
  for (int c = 0; c < mc->n; c++) {
    if (mc->p[c]) io_proc_stop(mc->p[c], 10000);
    mc->p[c] = NULL;
  }
  for (int c = 0; c < mc->n; c++) {
    json_value *v = io_json_parse_file(mc->summary[c], NULL, 0);
    if (v == NULL) {
      if (row->error[0] == '\0') {
        snprintf(row->error, sizeof(row->error), "client %d wrote no summary", c);
      }
      row->complete = 0;
      continue;
    }
    row->ok += (long)io_json_get_number(v, "ok", 0);
    row->failed += (long)io_json_get_number(v, "failed", 0);
    io_json_free(v);
  }
}

static void snapshot(const point_fleet *pf, counts *out) {
  for (int i = 0; i < pf->pt.servers; i++) {
    io_fleet_server_counts(pf->servers[i].stats, &out->opened[i], &out->current[i]);
  }
}

/* Connections opened + closed on server i between two snapshots. */
static long moved(const counts *a, const counts *b, int i) {
  long opened = b->opened[i] - a->opened[i];
  long closed = a->current[i] + opened - b->current[i];
  return opened + (closed > 0 ? closed : 0);
}

static long total_current(const point_fleet *pf, const counts *c) {
  long sum = 0;
  for (int i = 0; i < pf->pt.servers; i++) sum += c->current[i];
  return sum;
}

static int predict(const point_fleet *pf, const xds_mode *m, fleet_churn_row *row) {
  uint64_t seeds[MAX_C];
  for (int c = 0; c < pf->pt.clients; c++) seeds[c] = shared_seed();
  churn_model_fleet fleet = {m->model, (uint32_t)pf->pt.clients, (uint32_t)pf->pt.min_aperture,
                             seeds};
  const char *all[MAX_N], *rest[MAX_N];
  size_t n_all = address_list(pf, 1, all), n_rest = address_list(pf, 0, rest);
  churn_model_change rem, add;
  ap_error err;
  if (io_churn_model_diff(&fleet, all, n_all, rest, n_rest, &rem, &err) != AP_OK ||
      io_churn_model_diff(&fleet, rest, n_rest, all, n_all, &add, &err) != AP_OK) {
    snprintf(row->error, sizeof(row->error), "model: %.140s", err.message);
    return -1;
  }
  row->removal.predicted_before = rem.sessions_before;
  row->removal.predicted_changed = rem.changed;
  row->removal.predicted_optimum = rem.optimum;
  row->addition.predicted_before = add.sessions_before;
  row->addition.predicted_changed = add.changed;
  row->addition.predicted_optimum = add.optimum;
  return 0;
}

static void fail_row(fleet_churn_row *row, mode_clients *mc, const char *why, const char *dir) {
  if (row->error[0] == '\0') snprintf(row->error, sizeof(row->error), "%s (see %.100s)", why, dir);
  row->complete = 0;
  stop_clients(mc, row);
}

static void run_mode(point_fleet *pf, const xds_mode *m, fleet_churn_row *row) {
  memset(row, 0, sizeof(*row));
  row->servers = pf->pt.servers;
  row->clients = pf->pt.clients;
  row->min_aperture = pf->pt.min_aperture;
  snprintf(row->mode, sizeof(row->mode), "%.31s", m->name);
  if (predict(pf, m, row) != 0) return;
  char policy[200], err[200];
  policy_json(pf, m, policy, sizeof(policy));
  if (xds_server_set_policy_json(pf->xds, policy, err, sizeof(err)) != 0 ||
      set_answer(pf, 1, 0) != 0) {
    snprintf(row->error, sizeof(row->error), "xds: %.150s", err);
    return;
  }
  row->complete = 1;
  mode_clients mc;
  memset(&mc, 0, sizeof(mc));
  fleet_server *s1 = &pf->servers[REMOVED];
  counts c0, c1, c2;
  pf->restarts++; /* names this mode's summaries apart */
  if (start_clients(pf, &mc, row->error, sizeof(row->error)) != 0) {
    fail_row(row, &mc, "clients did not start", pf->dir);
    return;
  }
  if (!settle(pf, &mc, 1)) {
    xds_server_counts xc;
    xds_server_get_counts(pf->xds, &xc);
    if (xc.nacks[XDS_CDS] > 0) { /* say why, rather than only that it did not settle */
      snprintf(row->error, sizeof(row->error), "the clients NACKed the Cluster: %.120s",
               xc.last_nack);
    }
    fail_row(row, &mc, "the clients did not settle before the change", pf->dir);
    return;
  }

  io_fleet_sleep_ms(TRAFFIC_MS);
  /* Removal: s1 leaves the EDS answer; the clients drop it at once; it is
   * stopped once no client holds a connection to it. */
  snapshot(pf, &c0);
  row->removal.sessions_before = total_current(pf, &c0);
  row->removal.optimum = c0.current[REMOVED];
  if (set_answer(pf, 0, 1) != 0) {
    fail_row(row, &mc, "no client ACKed the EDS removal", pf->dir);
    return;
  }
  row->removal.settled = settle(pf, &mc, 0);
  io_proc_stop(s1->p, 10000);
  s1->p = NULL;
  snapshot(pf, &c1); /* s1's figures are from its last write, at exit */
  row->removal.measured = 1;
  for (int i = 0; i < pf->pt.servers; i++) {
    if (i == REMOVED) {
      long opened = c1.opened[i] - c0.opened[i];
      row->removal.changed += opened + c0.current[i] + opened; /* every one closed */
    } else {
      row->removal.changed += moved(&c0, &c1, i);
    }
  }

  io_fleet_sleep_ms(TRAFFIC_MS);
  /* Addition: s1 starts again at its address, then rejoins the answer. */
  snapshot(pf, &c1);
  c1.opened[REMOVED] = 0;
  c1.current[REMOVED] = 0;
  row->addition.sessions_before = total_current(pf, &c1);
  char suffix[32];
  snprintf(suffix, sizeof(suffix), ".%d", pf->restarts);
  if (io_fleet_server_start(pf->o->server_bin, pf->dir, "s1", pf->port, suffix, NULL, s1) != 0) {
    fail_row(row, &mc, "s1 did not restart", pf->dir);
    return;
  }
  if (set_answer(pf, 1, 1) != 0) {
    fail_row(row, &mc, "no client ACKed the EDS addition", pf->dir);
    return;
  }
  row->addition.settled = settle(pf, &mc, 1);
  snapshot(pf, &c2);
  row->addition.measured = 1;
  for (int i = 0; i < pf->pt.servers; i++) row->addition.changed += moved(&c1, &c2, i);
  row->addition.optimum = c2.current[REMOVED];
  io_fleet_sleep_ms(TRAFFIC_MS);
  stop_clients(&mc, row);

  /* Every connection closed before the next mode starts. */
  double deadline = io_fleet_now_ms() + SETTLE_TIMEOUT_MS;
  for (;;) {
    counts c;
    snapshot(pf, &c);
    if (total_current(pf, &c) == 0) break;
    if (io_fleet_now_ms() > deadline) {
      snprintf(row->error, sizeof(row->error), "connections stayed open after the clients stopped");
      row->complete = 0;
      break;
    }
    io_fleet_sleep_ms(POLL_MS);
  }
}

static void label_row(fleet_churn_row *row, const fleet_churn_point *pt, const char *mode) {
  memset(row, 0, sizeof(*row));
  row->servers = pt->servers;
  row->clients = pt->clients;
  row->min_aperture = pt->min_aperture;
  snprintf(row->mode, sizeof(row->mode), "%.31s", mode);
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
  xds_mode modes[MAX_MODES];
  int n_modes = parse_modes(o->modes ? o->modes : FLEET_XDS_DEFAULT_MODES, modes, MAX_MODES, err,
                            sizeof(err));
  if (n_modes < 0) {
    fprintf(stderr, "fleet: xds: %s\n", err);
    return -1;
  }
  grpc_init();
  int failures = 0;
  for (int p = 0; p < n_points; p++) {
    static point_fleet pf;
    memset(&pf, 0, sizeof(pf));
    pf.o = o;
    pf.pt = points[p];
    char start_err[200] = "";
    int started = start_point(&pf, &modes[0], start_err, sizeof(start_err)) == 0;
    for (int k = 0; k < n_modes && *n_rows < max_rows; k++) {
      fleet_churn_row *row = &rows[(*n_rows)++];
      fprintf(stderr, "fleet: xds %d:%d:%d / %s ...\n", pf.pt.servers, pf.pt.clients,
              pf.pt.min_aperture, modes[k].name);
      if (!started) {
        label_row(row, &pf.pt, modes[k].name);
        snprintf(row->error, sizeof(row->error), "%.159s", start_err);
      } else {
        run_mode(&pf, &modes[k], row);
      }
      if (started && pf.servers[REMOVED].p == NULL) { /* a failed run left s1 stopped */
        char suffix[32];
        snprintf(suffix, sizeof(suffix), ".r%d", ++pf.restarts);
        started = io_fleet_server_start(o->server_bin, pf.dir, "s1", pf.port, suffix, NULL,
                                        &pf.servers[REMOVED]) == 0;
        if (!started) snprintf(start_err, sizeof(start_err), "s1 did not restart");
      }
      if (!row->complete) {
        fprintf(stderr, "fleet: xds %d:%d:%d / %s failed: %s\n", pf.pt.servers, pf.pt.clients,
                pf.pt.min_aperture, modes[k].name, row->error);
        failures++;
      }
    }
    stop_point(&pf);
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
    const fleet_churn_row *r = &rows[i];
    fprintf(f, "%s\n", i ? "," : "");
    io_fleet_report_churn_row_json(f, r);
    fputc(',', f);
    io_fleet_report_churn_step_json(f, "removal", &r->removal, 0);
    fputc(',', f);
    io_fleet_report_churn_step_json(f, "addition", &r->addition, 0);
    fprintf(f, "}");
  }
  fprintf(f, "\n]}}\n");
}
