/* churn-grid: one membership change at a time in real processes, measured
 * on the servers and predicted by the core (see fleet_churn.h).
 *
 * A client only learns of a change when it asks the resolver again. The
 * aperture clients ask every reresolutionIntervalMs; the runner reads each
 * one's ring from its status server (GetRingState) to know when all of
 * them have the new list and their members are READY, and when the
 * servers' connection counts equal what the clients hold. gRPC's
 * round_robin has no such setting and re-resolves only when a connection
 * closes: every round_robin client holds s1, so stopping s1 right after it
 * left the answer makes all of them re-resolve (removal measured), but
 * nothing tells them that s1 is back (addition not measured; the report
 * gives the mesh prediction). */
#define _GNU_SOURCE
#include "interop/fleet/fleet_churn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <grpc/grpc.h>

#include "aperture/v1/status.pb-c.h"
#include "interop/fleet/churn_model.h"
#include "interop/fleet/dns_stub.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_server.h"
#include "interop/common/proc.h"
#include "interop/common/unary_call.h"

#define MAX_N 60
#define MAX_C 16
#define REMOVED 1                /* s1 leaves and comes back */
#define SETTLE_TIMEOUT_MS 20000  /* generous: a slow machine settles in ~1 s */
#define POLL_MS 100
#define TRAFFIC_MS 500           /* calls flow this long on a settled fleet before each change */

typedef struct churn_mode {
  char name[32];
  int aperture; /* 1: the aperture policy (has a status server) */
  ap_mode model;
} churn_mode;

/* The servers and DNS stub of one point, shared by its modes. */
typedef struct point_fleet {
  const fleet_churn_opts *o;
  fleet_churn_point pt;
  char dir[4200];
  fleet_server servers[MAX_N];
  int port;
  dns_stub *dns;
  int dns_port;
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

int io_fleet_churn_parse_points(const char *text, fleet_churn_point *out, int max, char *err,
                             size_t err_len) {
  int n = 0;
  for (const char *p = text; p != NULL && *p;) {
    size_t len = strcspn(p, ",");
    char item[64];
    if (len == 0 || len >= sizeof(item)) {
      snprintf(err, err_len, "--points: bad item '%.*s' (want N:C:A)", (int)len, p);
      return -1;
    }
    memcpy(item, p, len);
    item[len] = '\0';
    int s = 0, c = 0, a = 0, used = 0;
    if (sscanf(item, "%d:%d:%d%n", &s, &c, &a, &used) != 3 || item[used] != '\0' || s < 3 ||
        s > MAX_N || c < 1 || c > MAX_C || a < 1) {
      snprintf(err, err_len,
               "--points: bad item '%s' (want N:C:A, N in [3, %d], C in [1, %d], A >= 1)", item,
               MAX_N, MAX_C);
      return -1;
    }
    if (n == max) {
      snprintf(err, err_len, "--points: at most %d points", max);
      return -1;
    }
    out[n].servers = s;
    out[n].clients = c;
    out[n].min_aperture = a;
    n++;
    p += len + (p[len] == ',');
  }
  if (n == 0) snprintf(err, err_len, "--points: no point given");
  return n > 0 ? n : -1;
}

static int parse_modes(const char *list, churn_mode *out, int max) {
  int n = 0;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (n == max || len == 0 || len >= sizeof(out[n].name)) return -1;
    churn_mode *m = &out[n];
    memcpy(m->name, p, len);
    m->name[len] = '\0';
    p += len + (p[len] == ',');
    if (strcmp(m->name, "round_robin") == 0) {
      m->aperture = 0;
      m->model = AP_MODE_MESH;
    } else if (ap_mode_parse(m->name, &m->model, NULL) == AP_OK) {
      m->aperture = 1;
    } else {
      fprintf(stderr, "fleet: churn-grid: unknown or unsupported mode '%s' (aperture modes and round_robin)\n",
              m->name);
      return -1;
    }
    n++;
  }
  return n;
}

/* --- the point's servers and DNS answer --- */

static int start_point(point_fleet *pf) {
  snprintf(pf->dir, sizeof(pf->dir), "%s/churn-grid-%d-%d-%d", pf->o->out_dir, pf->pt.servers,
           pf->pt.clients, pf->pt.min_aperture);
  mkdir(pf->dir, 0755);
  pf->port = 0;
  for (int i = 0; i < pf->pt.servers; i++) {
    char name[16];
    snprintf(name, sizeof(name), "s%d", i);
    snprintf(pf->servers[i].host, sizeof(pf->servers[i].host), "127.0.0.%d", 10 + i);
    if (io_fleet_server_start(pf->o->server_bin, pf->dir, name, pf->port, "", NULL, &pf->servers[i]) != 0) {
      return -1;
    }
    pf->port = pf->servers[i].port; /* all share the first one's port */
    snprintf(pf->addr[i], sizeof(pf->addr[i]), "%s:%d", pf->servers[i].host, pf->port);
  }
  pf->dns = io_dns_stub_start("fleet.test", &pf->dns_port);
  return pf->dns != NULL ? 0 : -1;
}

static void stop_point(point_fleet *pf) {
  for (int i = 0; i < pf->pt.servers; i++) {
    if (pf->servers[i].p) io_proc_stop(pf->servers[i].p, 10000);
    pf->servers[i].p = NULL;
  }
  io_dns_stub_stop(pf->dns);
  pf->dns = NULL;
}

/* Puts every server in the DNS answer, or every server but s1. */
static int set_answer(point_fleet *pf, int with_removed) {
  const char *hosts[MAX_N];
  size_t m = 0;
  for (int i = 0; i < pf->pt.servers; i++) {
    if (i != REMOVED || with_removed) hosts[m++] = pf->servers[i].host;
  }
  return io_dns_stub_set(pf->dns, hosts, m);
}

/* Address lists for the model: all servers, or all but s1. */
static size_t address_list(const point_fleet *pf, int with_removed, const char **out) {
  size_t m = 0;
  for (int i = 0; i < pf->pt.servers; i++) {
    if (i != REMOVED || with_removed) out[m++] = pf->addr[i];
  }
  return m;
}

/* --- settling --- */

/* Adds to held[] the members of one aperture client's ring; 1 when it has
 * exactly the answer's addresses, no widened member, and every member
 * READY. */
static int client_ring(const point_fleet *pf, grpc_channel *ch, int with_removed, long *held) {
  unary_result r;
  const Aperture__V1__RingState *ring = io_fleet_client_ring_state(ch, &r);
  int ok = ring != NULL;
  uint32_t expected = (uint32_t)pf->pt.servers - (with_removed ? 0 : 1);
  ok = ok && !ring->truncated && ring->endpoint_count == expected && ring->widened == 0 &&
       ring->n_endpoints == expected;
  for (size_t e = 0; ok && e < ring->n_endpoints; e++) {
    const Aperture__V1__EndpointState *ep = ring->endpoints[e];
    int idx = -1;
    for (int i = 0; i < pf->pt.servers; i++) {
      if (strcmp(pf->addr[i], ep->address) == 0) idx = i;
    }
    if (idx < 0 || (idx == REMOVED && !with_removed)) ok = 0;
    else if (ep->in_aperture) {
      if (ep->connectivity != APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_READY) ok = 0;
      held[idx]++;
    }
  }
  io_unary_result_free(&r);
  return ok;
}

/* Waits (up to SETTLE_TIMEOUT_MS) until every client has the current answer
 * (`with_removed`) with its members READY and each server's open
 * connections equal the number of clients holding it (0 for s1 when it is
 * out of the answer), in two polls in a row. Returns 1 when settled. */
static int settle(const point_fleet *pf, const churn_mode *m, const mode_clients *mc,
                  int with_removed) {
  double deadline = io_fleet_now_ms() + SETTLE_TIMEOUT_MS;
  int good = 0;
  while (io_fleet_now_ms() < deadline) {
    long held[MAX_N];
    memset(held, 0, sizeof(held));
    int ok = 1;
    for (int c = 0; c < mc->n; c++) {
      if (m->aperture) {
        ok = client_ring(pf, mc->status[c], with_removed, held) && ok;
      } else {
        for (int i = 0; i < pf->pt.servers; i++) held[i] += (i != REMOVED || with_removed);
      }
    }
    ok = ok && io_fleet_servers_hold(pf->servers, pf->pt.servers, held);
    good = ok ? good + 1 : 0;
    if (good >= 2) return 1;
    io_fleet_sleep_ms(POLL_MS);
  }
  return 0;
}

/* --- one mode at one point --- */

static void config_for(const point_fleet *pf, const churn_mode *m, int c, char *out, size_t len) {
  if (!m->aperture) {
    snprintf(out, len, "{\"loadBalancingConfig\":[{\"round_robin\":{}}]}");
    return;
  }
  char seed[48] = "";
  if (m->model == AP_MODE_RANDOM) {
    snprintf(seed, sizeof(seed), ",\"randomSeed\":%llu",
             (unsigned long long)io_churn_model_seed((uint32_t)c));
  }
  long rr = pf->o->reresolution_ms > 0 ? pf->o->reresolution_ms : 200;
  snprintf(out, len,
           "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"%s\",\"minAperture\":%d,"
           "\"eagerConnect\":true,\"reresolutionIntervalMs\":%ld%s}}]}",
           m->name, pf->pt.min_aperture, rr, seed);
}

static int start_clients(point_fleet *pf, const churn_mode *m, mode_clients *mc, char *err,
                         size_t err_len) {
  char target[128], rate[32], cnt[16];
  snprintf(target, sizeof(target), "dns://127.0.0.1:%d/fleet.test:%d", pf->dns_port, pf->port);
  snprintf(rate, sizeof(rate), "%g", pf->o->rate > 0 ? pf->o->rate : 20.0);
  snprintf(cnt, sizeof(cnt), "%d", pf->pt.clients);
  for (int c = 0; c < pf->pt.clients; c++) {
    char config[400], idx[16], log[4400];
    config_for(pf, m, c, config, sizeof(config));
    snprintf(idx, sizeof(idx), "%d", c);
    snprintf(mc->summary[c], sizeof(mc->summary[c]), "%s/%s-client%d.json", pf->dir, m->name, c);
    snprintf(log, sizeof(log), "%s/%s-client%d.log", pf->dir, m->name, c);
    fleet_client_opts co = {
        .bin = pf->o->client_bin,
        .target = target,
        .service_config = config,
        .rate = rate,
        .duration_s = "3600", /* an upper bound: the runner stops the clients */
        .concurrency = "2",
        .linger_s = "0",
        .summary_file = mc->summary[c],
        .peer_index = m->aperture ? idx : NULL,
        .peer_count = m->aperture ? cnt : NULL,
        .dns_min_interval_ms = "100",
        .status_server = m->aperture,
    };
    mc->p[c] = io_fleet_client_start(&co, log);
    if (mc->p[c] == NULL) {
      snprintf(err, err_len, "client %d did not start", c);
      return -1;
    }
    mc->n = c + 1;
  }
  for (int c = 0; m->aperture && c < mc->n; c++) {
    const char *why = "";
    mc->status[c] = io_fleet_client_status_channel(mc->p[c], &why);
    if (mc->status[c] == NULL) {
      snprintf(err, err_len, "client %d %s (see %.100s)", c, why, pf->dir);
      return -1;
    }
  }
  return 0;
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
    if (io_fleet_client_read_summary(mc->summary[c], &row->ok, &row->failed) != 0) {
      if (row->error[0] == '\0') snprintf(row->error, sizeof(row->error), "client %d wrote no summary", c);
      row->complete = 0;
    }
  }
}

typedef struct counts {
  long opened[MAX_N], current[MAX_N];
} counts;

static void snapshot(const point_fleet *pf, counts *out) {
  for (int i = 0; i < pf->pt.servers; i++) {
    io_fleet_server_counts(pf->servers[i].stats, &out->opened[i], &out->current[i]);
  }
}

/* Connections opened + closed on server i between two snapshots. */
static long moved(const counts *a, const counts *b, int i) {
  return io_fleet_server_moved(a->opened[i], a->current[i], b->opened[i], b->current[i]);
}

static long total_current(const point_fleet *pf, const counts *c) {
  long sum = 0;
  for (int i = 0; i < pf->pt.servers; i++) sum += c->current[i];
  return sum;
}

static int predict(const point_fleet *pf, const churn_mode *m, fleet_churn_row *row) {
  uint64_t seeds[MAX_C];
  for (int c = 0; c < pf->pt.clients; c++) seeds[c] = io_churn_model_seed((uint32_t)c);
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

static void run_mode(point_fleet *pf, const churn_mode *m, fleet_churn_row *row) {
  memset(row, 0, sizeof(*row));
  row->servers = pf->pt.servers;
  row->clients = pf->pt.clients;
  row->min_aperture = pf->pt.min_aperture;
  snprintf(row->mode, sizeof(row->mode), "%.31s", m->name);
  if (predict(pf, m, row) != 0) return;
  row->complete = 1;
  mode_clients mc;
  memset(&mc, 0, sizeof(mc));
  fleet_server *s1 = &pf->servers[REMOVED];
  counts c0, c1, c2;

  if (start_clients(pf, m, &mc, row->error, sizeof(row->error)) != 0) {
    row->complete = 0;
    stop_clients(&mc, row);
    return;
  }
  if (!settle(pf, m, &mc, 1)) {
    snprintf(row->error, sizeof(row->error), "the clients did not settle before the change (see %.100s)",
             pf->dir);
    row->complete = 0;
    stop_clients(&mc, row);
    return;
  }

  io_fleet_sleep_ms(TRAFFIC_MS);
  /* Removal: s1 leaves the answer first; aperture clients re-resolve on
   * their own and drop it, then it stops holding no connection.
   * round_robin: stopping it is what makes its clients re-resolve. */
  snapshot(pf, &c0);
  row->removal.sessions_before = total_current(pf, &c0);
  row->removal.optimum = c0.current[REMOVED];
  set_answer(pf, 0);
  int settled = 1;
  if (m->aperture) settled = settle(pf, m, &mc, 0);
  io_proc_stop(s1->p, 10000);
  s1->p = NULL;
  if (!m->aperture || !settled) settled = settle(pf, m, &mc, 0) && settled;
  snapshot(pf, &c1); /* s1's figures are from its last write, at exit */
  row->removal.measured = 1;
  row->removal.settled = settled;
  for (int i = 0; i < pf->pt.servers; i++) {
    if (i == REMOVED) {
      long opened = c1.opened[i] - c0.opened[i];
      row->removal.changed += opened + c0.current[i] + opened; /* every one closed */
    } else {
      row->removal.changed += moved(&c0, &c1, i);
    }
  }
  if (!m->aperture) {
    snprintf(row->note, sizeof(row->note),
             "s1 stopped right after it left the answer (round_robin re-resolves only when a "
             "connection closes); addition not measured: nothing makes round_robin re-resolve");
  }

  io_fleet_sleep_ms(TRAFFIC_MS);
  /* Addition: s1 starts again at its address, then rejoins the answer. */
  snapshot(pf, &c1);
  c1.opened[REMOVED] = 0;
  c1.current[REMOVED] = 0;
  row->addition.sessions_before = total_current(pf, &c1);
  char suffix[32];
  snprintf(suffix, sizeof(suffix), ".%d", ++pf->restarts);
  if (io_fleet_server_start(pf->o->server_bin, pf->dir, "s1", pf->port, suffix, NULL, s1) != 0) {
    snprintf(row->error, sizeof(row->error), "s1 did not restart on port %d", pf->port);
    row->complete = 0;
    stop_clients(&mc, row);
    return;
  }
  set_answer(pf, 1);
  if (m->aperture) {
    row->addition.settled = settle(pf, m, &mc, 1);
    snapshot(pf, &c2);
    row->addition.measured = 1;
    for (int i = 0; i < pf->pt.servers; i++) row->addition.changed += moved(&c1, &c2, i);
    row->addition.optimum = c2.current[REMOVED];
  }
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

int io_fleet_churn_grid(const fleet_churn_opts *o, fleet_churn_row *rows, int max_rows,
                     int *n_rows) {
  fleet_churn_point points[FLEET_CHURN_MAX_POINTS];
  char err[200];
  int n_points = io_fleet_churn_parse_points(o->points ? o->points : FLEET_CHURN_DEFAULT_POINTS,
                                          points, FLEET_CHURN_MAX_POINTS, err, sizeof(err));
  if (n_points < 0) {
    fprintf(stderr, "fleet: %s\n", err);
    return -1;
  }
  churn_mode modes[16];
  int n_modes = parse_modes(o->modes ? o->modes : FLEET_CHURN_DEFAULT_MODES, modes, 16);
  if (n_modes < 0) return -1;
  grpc_init();
  int failures = 0;
  for (int p = 0; p < n_points; p++) {
    static point_fleet pf;
    memset(&pf, 0, sizeof(pf));
    pf.o = o;
    pf.pt = points[p];
    int started = start_point(&pf) == 0;
    for (int k = 0; k < n_modes && *n_rows < max_rows; k++) {
      if (modes[k].aperture && !o->have_aperture) continue;
      fleet_churn_row *row = &rows[*n_rows];
      (*n_rows)++;
      fprintf(stderr, "fleet: churn-grid %d:%d:%d / %s ...\n", pf.pt.servers, pf.pt.clients,
              pf.pt.min_aperture, modes[k].name);
      if (!started) {
        memset(row, 0, sizeof(*row));
        row->servers = pf.pt.servers;
        row->clients = pf.pt.clients;
        row->min_aperture = pf.pt.min_aperture;
        snprintf(row->mode, sizeof(row->mode), "%.31s", modes[k].name);
        snprintf(row->error, sizeof(row->error), "the servers or the DNS stub did not start");
      } else {
        set_answer(&pf, 1);
        run_mode(&pf, &modes[k], row);
      }
      if (started && pf.servers[REMOVED].p == NULL) { /* a failed run left s1 stopped */
        char suffix[32];
        snprintf(suffix, sizeof(suffix), ".%d", ++pf.restarts);
        started = io_fleet_server_start(o->server_bin, pf.dir, "s1", pf.port, suffix, NULL,
                                     &pf.servers[REMOVED]) == 0;
      }
      if (!row->complete) {
        fprintf(stderr, "fleet: churn-grid %d:%d:%d / %s failed: %s\n", pf.pt.servers,
                pf.pt.clients, pf.pt.min_aperture, modes[k].name, row->error);
        failures++;
      }
    }
    stop_point(&pf);
  }
  grpc_shutdown();
  return failures ? -1 : 0;
}
