/* sim_balance_skew: `sim balance --client-rates` (see sim_balance_skew.h). */
#include "interop/sim/sim_balance_skew.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/sim/sim_model.h"
#include "interop/sim/sim_skew.h"
#include "policy/core/skew/ap_skew.h"

struct sim_skew_table {
  sim_skew_args a;
  double *rates;         /* the first draw's, per client */
  double rates_cv, rates_max_mean;
  sim_skew_result *r;    /* [mode][draw] */
};

static int cmp_double(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The median (the lower middle for an even count) and the largest. */
static void median_max(double *v, uint32_t n, double *median, double *max) {
  qsort(v, n, sizeof *v, cmp_double);
  *median = v[(n - 1) / 2];
  *max = v[n - 1];
}

int io_sim_balance_skew_run(const sim_skew_args *a, sim_skew_table **out) {
  *out = NULL;
  sim_skew_table *t = calloc(1, sizeof *t);
  if (t == NULL) return -1;
  t->a = *a;
  t->rates = calloc(a->clients, sizeof *t->rates);
  t->r = calloc((size_t)SIM_NUM_MODES * a->draws, sizeof *t->r);
  double *rates = calloc(a->clients, sizeof *rates);
  int rc = t->rates && t->r && rates ? 0 : -1;
  if (rc != 0) fprintf(stderr, "sim balance: out of memory\n");
  for (uint32_t d = 0; rc == 0 && d < a->draws; d++) {
    char err[160];
    if (io_sim_rates_parse(a->spec, a->clients, a->seed + d, rates, err,
                           sizeof err) != 0) {
      fprintf(stderr, "sim balance: --client-rates: %s\n", err);
      rc = -1;
      break;
    }
    if (d == 0) {
      memcpy(t->rates, rates, a->clients * sizeof *rates);
      sim_stats st = io_sim_stats_of(rates, a->clients);
      t->rates_cv = st.cv;
      t->rates_max_mean = st.max_over_mean;
    }
    for (size_t m = 0; rc == 0 && m < SIM_NUM_MODES; m++) {
      ap_error e;
      if (io_sim_skew_run(io_sim_modes[m], a->servers, a->clients,
                          a->min_aperture, rates, SIM_SKEW_TICKS,
                          &t->r[m * a->draws + d], &e) != AP_OK) {
        fprintf(stderr, "sim balance: %s\n", e.message);
        rc = -1;
      }
    }
  }
  free(rates);
  if (rc != 0) {
    io_sim_balance_skew_free(t);
    return -1;
  }
  *out = t;
  return 0;
}

void io_sim_balance_skew_free(sim_skew_table *t) {
  if (t == NULL) return;
  free(t->rates);
  free(t->r);
  free(t);
}

/* One mode's figures over the draws. */
typedef struct mode_figures {
  double without_median, without_max, with_median, with_max;
  double conns_without, conns_with, conns_with_max, settle_max;
  uint32_t widened_max;
} mode_figures;

static mode_figures figures_of(const sim_skew_table *t, size_t m) {
  const uint32_t n = t->a.draws;
  const sim_skew_result *r = &t->r[m * n];
  double *v = malloc(2 * (size_t)n * sizeof *v);
  mode_figures f;
  memset(&f, 0, sizeof f);
  if (v == NULL) return f;
  for (uint32_t d = 0; d < n; d++) {
    v[d] = r[d].without_max_mean;
    v[n + d] = r[d].with_max_mean;
    f.conns_without += r[d].without_connections / n;
    f.conns_with += r[d].with_connections / n;
    if (r[d].with_connections_max > f.conns_with_max) {
      f.conns_with_max = r[d].with_connections_max;
    }
    if (r[d].settle_s > f.settle_max) f.settle_max = r[d].settle_s;
    if (r[d].widened > f.widened_max) f.widened_max = r[d].widened;
  }
  median_max(v, n, &f.without_median, &f.without_max);
  median_max(v + n, n, &f.with_median, &f.with_max);
  free(v);
  return f;
}

void io_sim_balance_skew_json(const sim_skew_table *t) {
  const sim_skew_args *a = &t->a;
  printf("\"client_rates\":{\"spec\":\"");
  for (const char *p = a->spec; *p; p++) {
    if (*p == '"' || *p == '\\') putchar('\\');
    if ((unsigned char)*p >= 0x20) putchar(*p);
  }
  printf("\",\"seed\":%llu,\"draws\":%u,\"cv\":%.15g,\"max_mean\":%.15g,"
         "\"rates\":[",
         (unsigned long long)a->seed, a->draws, t->rates_cv,
         t->rates_max_mean);
  for (uint32_t c = 0; c < a->clients; c++) {
    printf("%s%.15g", c ? "," : "", t->rates[c]);
  }
  printf("]},\"skew\":{\"servers\":%u,\"clients\":%u,\"min_aperture\":%u,"
         "\"ticks\":%d,\"tick_s\":%g,\"modes\":[",
         a->servers, a->clients, a->min_aperture, SIM_SKEW_TICKS,
         (double)AP_SKEW_TICK_NS * 1e-9);
  for (size_t m = 0; m < SIM_NUM_MODES; m++) {
    const mode_figures f = figures_of(t, m);
    const sim_skew_result *r = &t->r[m * a->draws];
    printf("%s{\"mode\":\"%s\",\"without\":{\"load_max_mean\":%.15g,"
           "\"load_max_mean_worst\":%.15g,\"connections_per_client\":%.15g},"
           "\"with\":{\"load_max_mean\":%.15g,\"load_max_mean_worst\":%.15g,"
           "\"connections_per_client\":%.15g,"
           "\"connections_per_client_max\":%.15g,\"widened_clients\":%u,"
           "\"settle_s\":%.15g},\"draws\":[",
           m ? "," : "", ap_mode_name(io_sim_modes[m]), f.without_median,
           f.without_max, f.conns_without, f.with_median, f.with_max,
           f.conns_with, f.conns_with_max, f.widened_max, f.settle_max);
    for (uint32_t d = 0; d < a->draws; d++) {
      printf("%s{\"without\":%.15g,\"with\":%.15g}", d ? "," : "",
             r[d].without_max_mean, r[d].with_max_mean);
    }
    printf("]}");
  }
  printf("]}");
}

void io_sim_balance_skew_text(const sim_skew_table *t) {
  const sim_skew_args *a = &t->a;
  printf("clients at unequal rates: %u servers, %u clients, min aperture %u, "
         "rates %s",
         a->servers, a->clients, a->min_aperture, a->spec);
  if (a->draws > 1) {
    printf(" (%u draws, seeds %llu..%llu)", a->draws,
           (unsigned long long)a->seed,
           (unsigned long long)(a->seed + a->draws - 1));
  } else if (strncmp(a->spec, "lognormal:", 10) == 0) {
    printf(" (seed %llu)", (unsigned long long)a->seed);
  }
  printf("\nfirst draw: CV %.3f, busiest client %.2fx the mean rate. Load = "
         "expected calls per server, busiest / mean;\nwith = the mechanism's "
         "steady state (%d ticks of %g s); conns = connections per client.\n\n",
         t->rates_cv, t->rates_max_mean, SIM_SKEW_TICKS,
         (double)AP_SKEW_TICK_NS * 1e-9);
  const char *stat = a->draws > 1 ? "median" : "load";
  const char *worst = a->draws > 1 ? "worst" : "";
  printf("  %-11s | %-18s | %-18s | %-20s | %s\n", "mode", "without", "with",
         "connections/client", "widened");
  printf("  %-11s | %9s %8s | %9s %8s | %6s %6s %6s | %8s\n", "", stat, worst,
         stat, worst, "before", "with", "max", "clients");
  printf("  ------------+--------------------+--------------------+-----------"
         "-----------+---------\n");
  for (size_t m = 0; m < SIM_NUM_MODES; m++) {
    const mode_figures f = figures_of(t, m);
    printf("  %-11s | %9.3f", ap_mode_name(io_sim_modes[m]), f.without_median);
    if (a->draws > 1) printf(" %8.3f", f.without_max); else printf(" %8s", "");
    printf(" | %9.3f", f.with_median);
    if (a->draws > 1) printf(" %8.3f", f.with_max); else printf(" %8s", "");
    printf(" | %6.2f %6.2f %6.0f | %8u\n", f.conns_without, f.conns_with,
           f.conns_with_max, f.widened_max);
  }
  printf("\n");
}
