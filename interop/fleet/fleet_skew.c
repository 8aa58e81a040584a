#include "interop/fleet/fleet_skew.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/common/json_read.h"
#include "interop/fleet/fleet_modes.h"
#include "interop/fleet/fleet_summary.h"
#include "interop/fleet/fleet_timeline.h"

/* The aperture rows: each pickMetric, then orca without the mechanism. */
typedef struct skew_row {
  const char *pick_metric; /* the config's pickMetric */
  const char *label;       /* the report's pick_metric */
  const char *extra;       /* more config fields */
} skew_row;

static const skew_row kRows[] = {
    {"outstanding", "outstanding", NULL},
    {"peakEwma", "peakEwma", NULL},
    {"orca", "orca", NULL},
    {"orca", "orca-off", ",\"clientSkewBalance\":false"},
};
#define N_ROWS ((int)(sizeof(kRows) / sizeof(kRows[0])))

int io_fleet_skew_parse_rates(const char *text, double *rates, int max, char *err,
                              size_t len) {
  int n = 0;
  if (text == NULL || *text == '\0') {
    snprintf(err, len, "flag --client-rates: empty");
    return -1;
  }
  for (const char *p = text;;) {
    size_t item = strcspn(p, ",");
    char buf[32];
    char *end = NULL;
    double v = -1;
    if (item > 0 && item < sizeof(buf)) {
      memcpy(buf, p, item);
      buf[item] = '\0';
      v = strtod(buf, &end);
    }
    if (end == NULL || *end != '\0' || !(v > 0) || v > 1e6) {
      snprintf(err, len,
               "flag --client-rates: expected numbers in (0, 1000000] separated by commas, "
               "got '%.60s'",
               text);
      return -1;
    }
    if (n == max) {
      snprintf(err, len, "flag --client-rates: more than %d rates", max);
      return -1;
    }
    rates[n++] = v;
    if (p[item] == '\0') break;
    p += item + 1;
  }
  return n;
}

int io_fleet_skew_check(const fleet_args *a, char *err, size_t len) {
  double rates[FLEET_SKEW_MAX_RATES];
  if (a->client_rates != NULL &&
      io_fleet_skew_parse_rates(a->client_rates, rates, FLEET_SKEW_MAX_RATES, err, len) < 0) {
    return -1;
  }
  if (a->servers > 0 && a->servers < 2) {
    snprintf(err, len, "flag --servers: the skew scenario needs at least 2 servers");
    return -1;
  }
  return 0;
}

/* What a run needs beyond the timeline: the rates, and what the hooks
 * measure. */
typedef struct skew_params {
  double rates[FLEET_SKEW_MAX_RATES];
  int n_rates;
  double smallest;
} skew_params;

/* Servers answer after the latency and report their rate (server.c). */
static int server_args(const fleet_timeline_fleet *f, int i, const char **extra) {
  (void)f;
  (void)i;
  extra[0] = "--extra-latency-ms";
  extra[1] = FLEET_SKEW_LATENCY_MS;
  extra[2] = "--capacity-qps";
  extra[3] = FLEET_SKEW_CAPACITY_QPS;
  return 4;
}

static void client_load(const fleet_timeline_fleet *f, int c, double *rate, long *concurrency) {
  const skew_params *p = f->sc->params;
  const double rel = p->rates[c % p->n_rates] / p->smallest;
  if (*rate > 0) { /* paced: the rate scales, the bound on calls in flight too */
    *rate *= rel;
    *concurrency = (long)ceil(*concurrency * rel);
  } else {
    long k = lround(*concurrency * rel);
    *concurrency = k < 1 ? 1 : k;
  }
}

#define SAMPLE_S 0.25
#define MAX_WARMUP_S 5.0

/* Calls per server at the end of the warm-up, and the servers' rate-based
 * utilization sampled after it. */
typedef struct skew_samples {
  int warm;
  long calls_at_warm[FLEET_MAX_SERVERS];
  double next_t;
  double util_sum[FLEET_MAX_SERVERS];
  int util_n[FLEET_MAX_SERVERS];
} skew_samples;

static double warmup_s(const fleet_timeline_fleet *f) {
  double w = f->sc->duration_s / 4;
  return w < MAX_WARMUP_S ? w : MAX_WARMUP_S;
}

static int tick(fleet_timeline_fleet *f, void *state, double t) {
  skew_samples *s = state;
  if (t < warmup_s(f) || t > f->sc->duration_s) return 0;
  if (!s->warm) {
    for (int i = 0; i < f->n_servers && i < FLEET_MAX_SERVERS; i++) {
      s->calls_at_warm[i] = io_fleet_timeline_calls(f, i);
    }
    s->warm = 1;
  }
  if (t < s->next_t) return 0;
  s->next_t = t + SAMPLE_S;
  for (int i = 0; i < f->n_servers && i < FLEET_MAX_SERVERS; i++) {
    char err[128];
    json_value *v = io_json_parse_file(f->servers[i].s.stats, err, sizeof(err));
    if (v == NULL) continue;
    double u = io_json_get_number(v, "rate_utilization", -1);
    io_json_free(v);
    if (u < 0) continue;
    s->util_sum[i] += u;
    s->util_n[i]++;
  }
  return 0;
}

/* Once the clients are done: the calls since the warm-up, and each
 * server's mean sampled utilization. */
static void end(fleet_timeline_fleet *f, void *state) {
  const skew_samples *s = state;
  fleet_run *r = f->r;
  double steady[FLEET_MAX_SERVERS];
  int n = 0;
  for (int i = 0; i < f->n_servers && i < FLEET_MAX_SERVERS; i++) {
    steady[n++] = (double)(io_fleet_timeline_calls(f, i) - s->calls_at_warm[i]);
    r->servers[i].utilization = s->util_n[i] > 0 ? s->util_sum[i] / s->util_n[i] : 0;
  }
  if (s->warm) {
    r->calls_steady = io_fleet_spread_of(steady, n);
    r->steady_measured = 1;
  }
}

static void figures(fleet_timeline_fleet *f) {
  fleet_run *r = f->r;
  double util[FLEET_MAX_SERVERS];
  int n = 0;
  for (int i = 0; i < r->n_servers && i < FLEET_MAX_SERVERS; i++) {
    util[n++] = r->servers[i].utilization;
  }
  r->util = io_fleet_spread_of(util, n);
  r->util_measured = 1;
  if (r->steady_measured) {
    r->fair_steady_max_mean =
        io_fleet_fair_max_mean(n, (long)(r->calls_steady.mean * n + 0.5));
  }
}

static const fleet_timeline_hooks kHooks = {.state_size = sizeof(skew_samples),
                                            .server_args = server_args,
                                            .tick = tick,
                                            .end = end,
                                            .figures = figures,
                                            .client_load = client_load};

static const fleet_timeline kSkew = {
    .name = "skew",
    .servers = FLEET_SKEW_SERVERS,
    .n_services = 1,
    .service_clients = {FLEET_SKEW_CLIENTS},
    .rate = 0, /* closed loop: calls in flight set the rates */
    .duration_s = 20,
    .concurrency = 1,
    .min_aperture = 2,
    .hooks = &kHooks,
};

int io_fleet_skew_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  static skew_params params;
  char err[200];
  params.n_rates = io_fleet_skew_parse_rates(a->client_rates ? a->client_rates
                                                             : FLEET_SKEW_DEFAULT_RATES,
                                             params.rates, FLEET_SKEW_MAX_RATES, err,
                                             sizeof(err));
  if (params.n_rates < 1) {
    fprintf(stderr, "fleet: %s\n", err);
    return -1;
  }
  params.smallest = params.rates[0];
  for (int i = 1; i < params.n_rates; i++) {
    if (params.rates[i] < params.smallest) params.smallest = params.rates[i];
  }
  const char *list = a->modes ? a->modes : FLEET_SKEW_DEFAULT_MODES;
  int failures = 0, more;
  const fleet_mode *m;
  while ((more = io_fleet_modes_next(&list, a->have_aperture, 1, &m)) > 0) {
    for (int k = 0; k < (m->aperture ? N_ROWS : 1); k++) {
      if (out->n_runs >= out->max_runs) break;
      fleet_timeline sc = kSkew;
      sc.params = &params;
      sc.pick_metric = m->aperture ? kRows[k].pick_metric : NULL;
      sc.extra_config = m->aperture ? kRows[k].extra : NULL;
      sc.label = m->aperture ? kRows[k].label : NULL;
      const char *label = m->aperture ? kRows[k].label : "none";
      fleet_run *r = &out->runs[out->n_runs++];
      fprintf(stderr, "fleet: skew / %s / %s ...\n", m->name, label);
      int rc = io_fleet_timeline_run_mode(&sc, a, m, r);
      snprintf(r->pick_metric, sizeof(r->pick_metric), "%s", label);
      if (rc != 0) {
        fprintf(stderr, "fleet: skew / %s / %s failed: %s\n", m->name, label, r->error);
        failures++;
      }
    }
  }
  return more < 0 || failures ? -1 : 0;
}

void io_fleet_skew_write_table(FILE *f, const fleet_output *out) {
  fprintf(f,
          "skew: %d servers (answer after %s ms; ORCA from their own rate, capacity %s calls/s),\n"
          "%d clients with calls in flight in proportion to their rates; minAperture 2\n\n",
          FLEET_SKEW_SERVERS, FLEET_SKEW_LATENCY_MS, FLEET_SKEW_CAPACITY_QPS, FLEET_SKEW_CLIENTS);
  fprintf(f, "%-12s %-12s %8s %6s %8s %7s %6s %7s %6s %8s %6s %8s %8s\n", "mode", "pick_metric",
          "ok", "failed", "calls/s", "ld max", "fair", "steady", "fair", "util max", "conns",
          "p50 ms", "p99 ms");
  for (int i = 0; i < out->n_runs; i++) {
    const fleet_run *r = &out->runs[i];
    if (strcmp(r->scenario, "skew") != 0) continue;
    if (!r->complete) {
      fprintf(f, "%-12s %-12s failed: %s\n", r->mode, r->pick_metric, r->error);
      continue;
    }
    fprintf(f, "%-12s %-12s %8ld %6ld %8.0f %7.3f %6.3f %7.3f %6.3f %8.3f %6ld %8.2f %8.2f\n",
            r->mode, r->pick_metric, r->ok, r->failed, r->qps, r->calls.max_mean,
            r->fair_max_mean, r->calls_steady.max_mean, r->fair_steady_max_mean,
            r->util.max_mean, r->connections_total, r->p50_us / 1000.0, r->p99_us / 1000.0);
  }
  fprintf(f,
          "(ld max: busiest server's calls / mean over the run; steady: the same after the first\n"
          "quarter of the run, at most 5 s; fair: a fair random balancer's at those calls; util max:\n"
          "busiest server's utilization / mean; conns: connections, the sum of per-server peaks)\n");
  fprintf(f, "\ncalls per server:\n");
  for (int i = 0; i < out->n_runs; i++) {
    const fleet_run *r = &out->runs[i];
    if (strcmp(r->scenario, "skew") != 0 || !r->complete) continue;
    fprintf(f, "  %-12s %-12s", r->mode, r->pick_metric);
    for (int s = 0; s < r->n_servers; s++) fprintf(f, " %7ld", r->servers[s].calls);
    fputc('\n', f);
  }
}
