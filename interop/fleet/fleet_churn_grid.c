/* churn-grid: one membership change at a time in real processes, measured
 * on the servers and predicted by the core (see fleet_churn.h); the answer
 * comes from the fleet's DNS, the measurement from churn_run.h.
 *
 * A client only learns of a change when it asks the resolver again. The
 * aperture clients ask every reresolutionIntervalMs. gRPC's round_robin
 * has no such setting and re-resolves only when a connection closes: every
 * round_robin client holds s1, so stopping s1 right after it left the
 * answer makes all of them re-resolve (removal measured), but nothing
 * tells them that s1 is back (addition not measured; the report gives the
 * mesh prediction). */
#define _GNU_SOURCE
#include "interop/fleet/fleet_churn_grid.h"

#include <stdio.h>
#include <string.h>

#include <grpc/grpc.h>

#include "interop/fleet/churn_model.h"
#include "interop/fleet/churn_run.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_dns.h"

#define MAX_N CHURN_RUN_MAX_SERVERS
#define MAX_C CHURN_RUN_MAX_CLIENTS
#define REMOVED CHURN_RUN_REMOVED

typedef fleet_churn_dns dns_answer;

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

static int parse_modes(const char *list, churn_run_mode *out, int max) {
  int n = 0;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (n == max || len == 0 || len >= sizeof(out[n].name)) return -1;
    churn_run_mode *m = &out[n];
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

/* --- the DNS answer --- */

/* Puts every server in the DNS answer, or every server but s1. The stub
 * keeps its last answer when it cannot take a new one; the clients then do
 * not settle and the row says so. */
static int set_answer(void *ctx, churn_run_fleet *f, int with_removed, char *err, size_t len) {
  (void)err;
  (void)len;
  dns_answer *da = ctx;
  const char *hosts[MAX_N];
  size_t m = 0;
  for (int i = 0; i < f->pt.servers; i++) {
    if (i != REMOVED || with_removed) hosts[m++] = f->servers[i].host;
  }
  io_fleet_dns_set(da->dns, hosts, m);
  return 0;
}

/* The mode's settings travel in each client's service config. */
static int prepare(void *ctx, churn_run_fleet *f, const churn_run_mode *m, char *err, size_t len) {
  (void)m;
  return set_answer(ctx, f, 1, err, len);
}

static uint64_t client_seed(int client) { return io_churn_model_seed((uint32_t)client); }

static void config_for(const dns_answer *da, const churn_run_fleet *f,
                       const churn_run_mode *m, int c, char *out, size_t len) {
  if (!m->aperture) {
    snprintf(out, len, "{\"loadBalancingConfig\":[{\"round_robin\":{}}]}");
    return;
  }
  char seed[48] = "";
  if (m->model == AP_MODE_RANDOM) {
    snprintf(seed, sizeof(seed), ",\"randomSeed\":%llu",
             (unsigned long long)io_churn_model_seed((uint32_t)c));
  }
  long rr = da->o->reresolution_ms > 0 ? da->o->reresolution_ms : 200;
  snprintf(out, len,
           "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"%s\",\"minAperture\":%d,"
           "\"eagerConnect\":true,\"reresolutionIntervalMs\":%ld%s}}]}",
           m->name, f->pt.min_aperture, rr, seed);
}

static int start_clients(void *ctx, const churn_run_fleet *f, const churn_run_mode *m,
                         churn_run_clients *mc, char *err, size_t err_len) {
  const dns_answer *da = ctx;
  char target[128], rate[32], cnt[16];
  if (io_fleet_dns_target(da->dns, f->port, target, sizeof(target)) != 0) {
    snprintf(err, err_len, "no DNS target");
    return -1;
  }
  snprintf(rate, sizeof(rate), "%g", da->o->rate > 0 ? da->o->rate : 20.0);
  snprintf(cnt, sizeof(cnt), "%d", f->pt.clients);
  for (int c = 0; c < f->pt.clients; c++) {
    char config[400], idx[16], log[4400];
    config_for(da, f, m, c, config, sizeof(config));
    snprintf(idx, sizeof(idx), "%d", c);
    snprintf(mc->summary[c], sizeof(mc->summary[c]), "%s/%s-client%d.json", f->dir, m->name, c);
    snprintf(log, sizeof(log), "%s/%s-client%d.log", f->dir, m->name, c);
    fleet_client_opts co =
        io_fleet_client_until_stopped(da->o->client_bin, target, config, rate, mc->summary[c]);
    co.peer_index = m->aperture ? idx : NULL;
    co.peer_count = m->aperture ? cnt : NULL;
    co.dns_min_interval_ms = "100";
    co.status_server = m->aperture;
    mc->p[c] = io_fleet_client_start(&co, log);
    if (mc->p[c] == NULL) {
      snprintf(err, err_len, "client %d did not start", c);
      return -1;
    }
    mc->n = c + 1;
  }
  return 0;
}

void io_fleet_churn_dns_answer(fleet_churn_dns *dns, churn_answer *out) {
  if (dns == NULL || out == NULL) return;
  churn_answer a = {dns, prepare, set_answer, start_clients, NULL, client_seed, 1};
  *out = a;
}

int io_fleet_churn_grid(const fleet_churn_opts *o, fleet_churn_row *rows, int max_rows,
                     int *n_rows) {
  if (o == NULL || o->server_bin == NULL || o->client_bin == NULL || o->out_dir == NULL ||
      rows == NULL || n_rows == NULL) {
    fprintf(stderr, "fleet: churn-grid: missing options\n");
    return -1;
  }
  fleet_churn_point points[FLEET_CHURN_MAX_POINTS];
  char err[200];
  int n_points = io_fleet_churn_parse_points(o->points ? o->points : FLEET_CHURN_DEFAULT_POINTS,
                                          points, FLEET_CHURN_MAX_POINTS, err, sizeof(err));
  if (n_points < 0) {
    fprintf(stderr, "fleet: %s\n", err);
    return -1;
  }
  churn_run_mode modes[16];
  int n_modes = parse_modes(o->modes ? o->modes : FLEET_CHURN_DEFAULT_MODES, modes, 16);
  if (n_modes < 0) return -1;
  int n_run = 0; /* the aperture modes need the policy in the client */
  for (int k = 0; k < n_modes; k++) {
    if (!modes[k].aperture || o->have_aperture) modes[n_run++] = modes[k];
  }
  dns_answer da = {o, NULL};
  churn_answer answer;
  io_fleet_churn_dns_answer(&da, &answer);
  grpc_init();
  int failures = 0;
  for (int p = 0; p < n_points; p++) {
    static churn_run_fleet f;
    memset(&f, 0, sizeof(f));
    f.pt = points[p];
    int started = io_churn_run_start_servers(&f, o->server_bin, o->out_dir, "churn-grid", err,
                                             sizeof(err)) == 0;
    if (started) da.dns = io_fleet_dns_start("fleet.test");
    started = started && da.dns != NULL;
    int failed = io_churn_run_point(&f, &answer, "churn-grid", modes, n_run,
                                    started ? NULL : "the servers or the DNS server did not start",
                                    rows, max_rows, n_rows);
    failures += failed != 0;
    io_churn_run_stop_servers(&f);
    io_fleet_dns_stop(da.dns);
    da.dns = NULL;
  }
  grpc_shutdown();
  return failures ? -1 : 0;
}

/* --- the scenario table's row --- */

int io_fleet_churn_grid_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  if (a == NULL || out == NULL) return -1;
  fleet_churn_opts co;
  memset(&co, 0, sizeof(co));
  co.server_bin = a->server_bin;
  co.client_bin = a->client_bin;
  co.out_dir = a->out_dir;
  co.modes = a->modes;
  co.points = a->points;
  co.have_aperture = a->have_aperture;
  co.rate = a->rate;
  return io_fleet_churn_grid(&co, out->churn, out->max_churn, &out->n_churn) != 0 ? -1 : 0;
}
