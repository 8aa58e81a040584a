#include "interop/fleet/fleet_summary.h"

#include <stdint.h>
#include <string.h>

#include "interop/common/json_write.h"

/* xorshift64*: a fixed, portable sequence (rand() differs between libcs). */
static uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

double io_fleet_fair_max_mean(int servers, long calls) {
  if (servers < 1 || calls < 1 || servers > FLEET_MAX_SERVERS) return 0;
  /* about 2e7 draws at most: tens of milliseconds; at least 64 trials keep
   * the estimate's own error well below the figure's second digit */
  long trials = 20000000L / calls;
  if (trials > 400) trials = 400;
  if (trials < 64) trials = 64;
  uint64_t state = 0x9E3779B97F4A7C15ULL;
  long counts[FLEET_MAX_SERVERS];
  double sum_max = 0;
  for (long t = 0; t < trials; t++) {
    memset(counts, 0, sizeof(counts));
    for (long c = 0; c < calls; c++) {
      /* the high 32 bits times servers, shifted: uniform without a modulo bias worth noting */
      counts[((next_random(&state) >> 32) * (uint64_t)servers) >> 32]++;
    }
    long max = 0;
    for (int s = 0; s < servers; s++) {
      if (counts[s] > max) max = counts[s];
    }
    sum_max += (double)max;
  }
  double mean = (double)calls / servers;
  return sum_max / (double)trials / mean;
}

static int summarized_scenario(const char *name) {
  return strcmp(name, "balance") == 0 || strcmp(name, "multi-service") == 0;
}

static const fleet_run *find_run(const fleet_run *runs, int n, const char *scenario,
                                 const char *mode) {
  for (int i = 0; i < n; i++) {
    if (runs[i].complete && strcmp(runs[i].scenario, scenario) == 0 &&
        strcmp(runs[i].mode, mode) == 0) {
      return &runs[i];
    }
  }
  return NULL;
}

static double pct(double fraction) { return 100.0 * fraction; }

/* Appends printf output to the summary text, truncating at its end. */
#define APPEND(s, ...)                                                                  \
  do {                                                                                  \
    size_t used_ = strlen((s)->text);                                                   \
    if (used_ + 1 < sizeof((s)->text)) {                                                \
      snprintf((s)->text + used_, sizeof((s)->text) - used_, __VA_ARGS__);              \
    }                                                                                   \
  } while (0)

static const fleet_summary_entry *find_entry(const fleet_summary *s, const char *scenario,
                                             const char *mode) {
  for (int i = 0; i < s->n; i++) {
    if (strcmp(s->entries[i].scenario, scenario) == 0 && strcmp(s->entries[i].mode, mode) == 0) {
      return &s->entries[i];
    }
  }
  return NULL;
}

/* The largest fair-random figure of a scenario's entries (the noise the
 * text states once for all of them). */
static double scenario_fair(const fleet_summary *s, const char *scenario) {
  double worst = 0;
  for (int i = 0; i < s->n; i++) {
    if (strcmp(s->entries[i].scenario, scenario) == 0 && s->entries[i].fair_above_mean > worst) {
      worst = s->entries[i].fair_above_mean;
    }
  }
  return worst;
}

static void balance_text(fleet_summary *s) {
  const fleet_summary_entry *rr = find_entry(s, "balance", "round_robin");
  for (int i = 0; i < s->n; i++) {
    const fleet_summary_entry *e = &s->entries[i];
    if (strcmp(e->scenario, "balance") != 0 || e == rr) continue;
    if (rr != NULL && e->connections_vs_rr >= 0) {
      APPEND(s, "%s: %.0f%% of round_robin's connections (%ld vs %ld), ", e->mode,
             pct(e->connections_vs_rr), e->connections, rr->connections);
    } else {
      APPEND(s, "%s: %ld connections, ", e->mode, e->connections);
    }
    APPEND(s, "busiest server %.1f%% above the mean", pct(e->busiest_above_mean));
    if (rr != NULL) APPEND(s, " (round_robin %.1f%%)", pct(rr->busiest_above_mean));
    APPEND(s, ".\n");
  }
  if (s->text[0] != '\0') {
    APPEND(s, "A perfectly fair random balancer's busiest server would be %.1f%% above the mean "
              "at these call counts (sampling noise).\n",
           pct(scenario_fair(s, "balance")));
  }
}

static void multi_text(fleet_summary *s, const fleet_run *runs, int n) {
  int services = 0;
  for (int i = 0; i < n; i++) {
    if (runs[i].complete && strcmp(runs[i].scenario, "multi-service") == 0) services = runs[i].n_services;
  }
  int first = 1;
  for (int i = 0; i < s->n; i++) {
    const fleet_summary_entry *e = &s->entries[i];
    if (strcmp(e->scenario, "multi-service") != 0) continue;
    if (first) APPEND(s, "With %d services sharing the servers, busiest server above the mean: ", services);
    APPEND(s, "%s%s %.1f%%", first ? "" : ", ", e->mode, pct(e->busiest_above_mean));
    first = 0;
  }
  if (!first) {
    APPEND(s, " (fair random %.1f%%).\n", pct(scenario_fair(s, "multi-service")));
  }
}

int io_fleet_summary_of(const fleet_run *runs, int n, fleet_summary *out) {
  if (out != NULL) memset(out, 0, sizeof(*out));
  if (runs == NULL || out == NULL || n < 0) return -1;
  for (int i = 0; i < n && out->n < FLEET_SUMMARY_MAX; i++) {
    const fleet_run *r = &runs[i];
    if (!r->complete || !summarized_scenario(r->scenario)) continue;
    if (find_entry(out, r->scenario, r->mode) != NULL) continue; /* first run of a mode */
    fleet_summary_entry *e = &out->entries[out->n++];
    snprintf(e->scenario, sizeof(e->scenario), "%s", r->scenario);
    snprintf(e->mode, sizeof(e->mode), "%s", r->mode);
    e->connections = r->connections_total;
    const fleet_run *rr = find_run(runs, n, r->scenario, "round_robin");
    e->connections_vs_rr = (rr != NULL && rr->connections_total > 0)
                               ? (double)r->connections_total / (double)rr->connections_total
                               : -1;
    e->busiest_above_mean = r->calls.max_mean > 0 ? r->calls.max_mean - 1 : 0;
    e->fair_above_mean = r->fair_max_mean > 0 ? r->fair_max_mean - 1 : 0;
    e->calls_per_server = (long)(r->calls.mean + 0.5);
  }
  balance_text(out);
  multi_text(out, runs, n);
  return 0;
}

void io_fleet_summary_json(FILE *f, const fleet_summary *s) {
  if (f == NULL || s == NULL) return;
  fprintf(f, "\"summary\":{\"entries\":[");
  for (int i = 0; i < s->n; i++) {
    const fleet_summary_entry *e = &s->entries[i];
    fprintf(f, "%s\n{\"scenario\":", i ? "," : "");
    ap_json_write_string(f, e->scenario);
    fprintf(f, ",\"mode\":");
    ap_json_write_string(f, e->mode);
    fprintf(f,
            ",\"connections\":%ld,\"connections_vs_round_robin\":%.4f,"
            "\"busiest_above_mean\":%.4f,\"fair_above_mean\":%.4f,\"calls_per_server\":%ld}",
            e->connections, e->connections_vs_rr, e->busiest_above_mean, e->fair_above_mean,
            e->calls_per_server);
  }
  fprintf(f, "],\n\"text\":");
  ap_json_write_string(f, s->text);
  fputc('}', f);
}
