#include "interop/fleet/fleet_unequal.h"

#include <stdio.h>
#include <string.h>

#include "interop/common/json_read.h"
#include "interop/fleet/fleet_modes.h"

const double io_fleet_unequal_capacity[FLEET_UNEQUAL_SERVERS] = {1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.25};
/* the same as text, for the servers' argument lists */
static const char *const kCapacityArg[FLEET_UNEQUAL_SERVERS] = {"1", "1", "1", "1",   "1",
                                                                "1", "1", "1", "0.5", "0.25"};
static const char *const kPickMetrics[] = {"outstanding", "peakEwma", "orca"};
#define N_PICK_METRICS ((int)(sizeof(kPickMetrics) / sizeof(kPickMetrics[0])))

double io_fleet_unequal_fleet_capacity(void) {
  double sum = 0;
  for (int i = 0; i < FLEET_UNEQUAL_SERVERS; i++) sum += io_fleet_unequal_capacity[i];
  return FLEET_UNEQUAL_QUOTA * sum / (FLEET_UNEQUAL_WORK_US * 1e-6);
}

static int server_args(const fleet_timeline_fleet *f, int i, const char **extra) {
  (void)f;
  if (i < 0 || i >= FLEET_UNEQUAL_SERVERS) return 0;
  extra[0] = "--capacity";
  extra[1] = kCapacityArg[i];
  extra[2] = "--work-us";
  extra[3] = "1000"; /* FLEET_UNEQUAL_WORK_US */
  extra[4] = "--cpu-quota";
  extra[5] = "0.1"; /* FLEET_UNEQUAL_QUOTA */
  extra[6] = "--orca";
  return 7;
}

/* The servers' own utilization (what their ORCA trailers carry: the last
 * second's work over their quota), sampled from their stats files every
 * SAMPLE_S once the first quarter of the run (at most 1 s) has passed. */
#define SAMPLE_S 0.25

typedef struct util_samples {
  double next_t;
  double sum[FLEET_UNEQUAL_SERVERS];
  int n[FLEET_UNEQUAL_SERVERS];
} util_samples;

static int tick(fleet_timeline_fleet *f, void *state, double t) {
  util_samples *u = state;
  double warmup = f->sc->duration_s / 4 < 1 ? f->sc->duration_s / 4 : 1;
  if (t < warmup || t > f->sc->duration_s || t < u->next_t) return 0;
  u->next_t = t + SAMPLE_S;
  for (int i = 0; i < f->n_servers && i < FLEET_UNEQUAL_SERVERS; i++) {
    char err[128];
    json_value *v = io_json_parse_file(f->servers[i].s.stats, err, sizeof(err));
    if (v == NULL) continue; /* being replaced: the next sample counts */
    double x = io_json_get_number(v, "cpu_utilization", -1);
    io_json_free(v);
    if (x < 0) continue;
    u->sum[i] += x;
    u->n[i]++;
  }
  return 0;
}

/* Once the clients are done (the samples are freed before figures):
 * each server's capacity and mean sampled utilization. */
static void end(fleet_timeline_fleet *f, void *state) {
  const util_samples *u = state;
  for (int i = 0; i < f->n_servers && i < FLEET_UNEQUAL_SERVERS; i++) {
    fleet_server_result *sv = &f->r->servers[i];
    sv->capacity = io_fleet_unequal_capacity[i];
    sv->utilization = u->n[i] > 0 ? u->sum[i] / u->n[i] : 0;
  }
}

/* The utilization spread over the servers, and the most overloaded
 * server's share of the calls over its share of the capacity. */
static void figures(fleet_timeline_fleet *f) {
  fleet_run *r = f->r;
  double util[FLEET_UNEQUAL_SERVERS] = {0};
  int n = 0;
  double calls = 0, capacity = 0;
  for (int i = 0; i < r->n_servers && i < FLEET_UNEQUAL_SERVERS; i++) {
    util[n++] = r->servers[i].utilization;
    calls += (double)r->servers[i].calls;
    capacity += r->servers[i].capacity;
  }
  r->util = io_fleet_spread_of(util, n);
  r->util_measured = 1;
  r->share_over_capacity_max = 0;
  for (int i = 0; i < n && calls > 0 && capacity > 0; i++) {
    double ratio = ((double)r->servers[i].calls / calls) / (r->servers[i].capacity / capacity);
    if (ratio > r->share_over_capacity_max) r->share_over_capacity_max = ratio;
  }
}

static const fleet_timeline_hooks kHooks = {.state_size = sizeof(util_samples),
                                            .server_args = server_args,
                                            .tick = tick,
                                            .end = end,
                                            .figures = figures};

static const fleet_timeline kUnequal = {
    .name = "unequal",
    .servers = FLEET_UNEQUAL_SERVERS,
    .n_services = 1,
    .service_clients = {4},
    .rate = 0, /* set per run: FLEET_UNEQUAL_LOAD of the fleet's capacity */
    .duration_s = 20,
    .concurrency = 16, /* bounds a saturated server's queue: 64 calls x 40 ms < the 5 s deadline */
    .min_aperture = 10,
    .hooks = &kHooks,
};

int io_fleet_unequal_check(const fleet_args *a, char *err, size_t len) {
  if (a->servers > 0 && a->servers != FLEET_UNEQUAL_SERVERS) {
    snprintf(err, len, "flag --servers: the unequal scenario has %d servers (got %ld)",
             FLEET_UNEQUAL_SERVERS, a->servers);
    return -1;
  }
  return 0;
}

int io_fleet_unequal_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  const char *list = a->modes ? a->modes : FLEET_UNEQUAL_DEFAULT_MODES;
  int failures = 0, more;
  const fleet_mode *m;
  while ((more = io_fleet_modes_next(&list, a->have_aperture, 1, &m)) > 0) {
    for (int k = 0; k < (m->aperture ? N_PICK_METRICS : 1); k++) {
      if (out->n_runs >= out->max_runs) break;
      fleet_timeline sc = kUnequal;
      int clients = a->clients > 0 ? (int)a->clients : sc.service_clients[0];
      sc.rate = FLEET_UNEQUAL_LOAD * io_fleet_unequal_fleet_capacity() / clients;
      sc.pick_metric = m->aperture ? kPickMetrics[k] : NULL;
      const char *metric = m->aperture ? kPickMetrics[k] : "none";
      fleet_run *r = &out->runs[out->n_runs++];
      fprintf(stderr, "fleet: unequal / %s / %s ...\n", m->name, metric);
      int rc = io_fleet_timeline_run_mode(&sc, a, m, r);
      snprintf(r->pick_metric, sizeof(r->pick_metric), "%s", metric);
      if (rc != 0) {
        fprintf(stderr, "fleet: unequal / %s / %s failed: %s\n", m->name, metric, r->error);
        failures++;
      }
    }
  }
  return more < 0 || failures ? -1 : 0;
}

void io_fleet_unequal_write_table(FILE *f, const fleet_output *out) {
  fprintf(f, "unequal: capacities 1 x8, 0.5, 0.25; %.0f us of CPU per call at capacity 1 on a "
             "%.1f-core quota each;\noffered %.0f%% of the fleet's %.0f calls/s\n\n",
          FLEET_UNEQUAL_WORK_US, FLEET_UNEQUAL_QUOTA, FLEET_UNEQUAL_LOAD * 100,
          io_fleet_unequal_fleet_capacity());
  fprintf(f, "%-12s %-12s %8s %6s %8s %8s %8s %9s %9s %9s %9s\n", "mode", "pick_metric", "ok",
          "failed", "calls/s", "util max", "max/mean", "share/cap", "p50 ms", "p99 ms", "p999 ms");
  for (int i = 0; i < out->n_runs; i++) {
    const fleet_run *r = &out->runs[i];
    if (strcmp(r->scenario, "unequal") != 0) continue;
    if (!r->complete) {
      fprintf(f, "%-12s %-12s failed: %s\n", r->mode, r->pick_metric, r->error);
      continue;
    }
    fprintf(f, "%-12s %-12s %8ld %6ld %8.1f %8.3f %8.3f %9.2f %9.2f %9.2f %9.2f\n", r->mode,
            r->pick_metric, r->ok, r->failed, r->qps, r->util.max, r->util.max_mean,
            r->share_over_capacity_max, r->p50_us / 1000.0, r->p99_us / 1000.0,
            r->p999_us / 1000.0);
  }
  fprintf(f, "(share/cap: the largest server's share of the calls over its share of the capacity)\n");
  fprintf(f, "\nper server: utilization / calls share vs capacity share\n");
  for (int i = 0; i < out->n_runs; i++) {
    const fleet_run *r = &out->runs[i];
    if (strcmp(r->scenario, "unequal") != 0 || !r->complete) continue;
    double total = 0, cap = 0;
    for (int s = 0; s < r->n_servers; s++) {
      total += (double)r->servers[s].calls;
      cap += r->servers[s].capacity;
    }
    fprintf(f, "%s/%s:\n", r->mode, r->pick_metric);
    for (int s = 0; s < r->n_servers; s++) {
      const fleet_server_result *sv = &r->servers[s];
      fprintf(f, "  %-4s cap %-4g util %.3f  calls %6ld  share %5.1f%% (capacity %4.1f%%)\n",
              sv->name, sv->capacity, sv->utilization, sv->calls,
              total > 0 ? 100.0 * (double)sv->calls / total : 0,
              cap > 0 ? 100.0 * sv->capacity / cap : 0);
    }
  }
}
