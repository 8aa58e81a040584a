#include "interop/fleet/fleet_report.h"

#include <math.h>
#include <string.h>

#include "interop/common/json_write.h"
#include "interop/fleet/fleet_summary.h"

fleet_spread io_fleet_spread_of(const double *values, int n) {
  fleet_spread s;
  memset(&s, 0, sizeof(s));
  if (values == NULL || n <= 0) return s;
  double sum = 0;
  s.max = values[0];
  s.min = values[0];
  for (int i = 0; i < n; i++) {
    sum += values[i];
    if (values[i] > s.max) s.max = values[i];
    if (values[i] < s.min) s.min = values[i];
  }
  s.mean = sum / n;
  if (s.mean <= 0) return s;
  double var = 0;
  for (int i = 0; i < n; i++) var += (values[i] - s.mean) * (values[i] - s.mean);
  s.cv = sqrt(var / n) / s.mean;
  s.max_mean = s.max / s.mean;
  return s;
}

static int same_scenario(const fleet_run *a, const fleet_run *b) {
  return strcmp(a->scenario, b->scenario) == 0;
}

void io_fleet_report_table(FILE *f, const fleet_run *runs, int n) {
  for (int i = 0; i < n; i++) {
    const fleet_run *r = &runs[i];
    if (i == 0 || !same_scenario(r, &runs[i - 1])) {
      int clients = 0;
      for (int s = 0; s < r->n_services; s++) clients += r->services[s].clients;
      fprintf(f, "\nscenario %s: %d servers, %d service(s), %d clients, %.1f s per mode",
              r->scenario, r->n_servers, r->n_services, clients, r->duration_s);
      for (int j = i; j < n && same_scenario(&runs[j], r); j++) {
        if (runs[j].min_aperture > 0) {
          fprintf(f, ", aperture minAperture %ld", runs[j].min_aperture);
          break;
        }
      }
      fputc('\n', f);
      fprintf(f, "%-12s %8s %6s %8s %7s %6s %6s %6s %6s %8s %8s %8s %s\n", "mode", "ok", "failed",
              "calls/s", "ld max", "fair", "ld cv", "conns", "cn max", "p50 ms", "p99 ms", "p999 ms",
              "notes");
    }
    if (!r->complete) {
      fprintf(f, "%-12s run failed: %s\n", r->mode, r->error);
      continue;
    }
    fprintf(f, "%-12s %8ld %6ld %8.0f %7.3f %6.3f %6.2f %6ld %6.2f %8.2f %8.2f %8.2f", r->mode, r->ok,
            r->failed, r->qps, r->calls.max_mean, r->fair_max_mean, r->calls.cv, r->connections_total,
            r->connections.max_mean, r->p50_us / 1000.0, r->p99_us / 1000.0,
            r->p999_us / 1000.0);
    if (r->slow_share >= 0) {
      fprintf(f, " slow share %.1f%% (fair %.1f%%)", 100 * r->slow_share, 100 * r->fair_share);
    }
    if (strcmp(r->scenario, "kill") == 0 || strcmp(r->scenario, "churn") == 0) {
      fprintf(f, " failed on disturbed %ld, elsewhere %ld", r->failed_on_disturbed,
              r->failed - r->failed_on_disturbed);
      fprintf(f, ", conns opened %ld", r->connections_opened);
    }
    if (strcmp(r->scenario, "churn") == 0) {
      const fleet_server_result *added = &r->servers[r->n_servers - 1];
      fprintf(f, ", added server got %ld calls, dns queries %ld, s0 drained in %.2f s", added->calls,
              r->dns_queries, r->drain_s);
    }
    if (r->bounce_measured) {
      fprintf(f, " failed on s1 %ld, elsewhere %ld, sessions changed %ld of %ld (%.1f%%)",
              r->failed_on_disturbed, r->failed - r->failed_on_disturbed, r->sessions_changed,
              r->sessions_before,
              r->sessions_before > 0 ? 100.0 * r->sessions_changed / r->sessions_before : 0.0);
      if (strcmp(r->scenario, "restart") == 0) {
        fprintf(f, ", restarted s1 got %ld calls", r->restarted_calls);
      }
      if (r->grace_ms > 0) fprintf(f, ", removalGraceMs %ld", r->grace_ms);
    }
    if (strcmp(r->scenario, "kill") == 0) {
      if (r->recover_s >= 0) fprintf(f, ", traffic back %.2f s after restart", r->recover_s);
      else fprintf(f, ", traffic never returned");
    }
    if (r->n_services > 1) {
      fprintf(f, " per service max/mean:");
      for (int s = 0; s < r->n_services; s++) {
        fprintf(f, " %s(%d)=%.2f/%ld srv", r->services[s].name, r->services[s].clients,
                r->services[s].calls_max_mean, r->services[s].servers_used);
      }
    }
    fputc('\n', f);
  }
  fprintf(f,
          "\nld max = busiest server's calls / mean calls per server; fair = the ld max a perfectly "
          "fair random\nbalancer would show at the same calls and servers (its sampling noise: "
          "mean of fixed-seed\nMonte Carlo multinomial draws); ld cv = coefficient of variation;\nconns = connections (sum of per-server peaks); cn max = max/mean of "
          "connections; latency over all clients.\n");
}

static void spread_json(FILE *f, const char *name, const fleet_spread *s) {
  fprintf(f, "\"%s\":{\"mean\":%.3f,\"max\":%.0f,\"min\":%.0f,\"max_mean\":%.4f,\"cv\":%.4f}", name,
          s->mean, s->max, s->min, s->max_mean, s->cv);
}

static double pct(long part, long whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0; }

/* "measured (share) | predicted (share) | optimum measured/predicted" */
static void churn_step_cells(FILE *f, const fleet_churn_step *st) {
  if (!st->measured) {
    fprintf(f, " %14s", "not measured");
  } else {
    fprintf(f, " %3ld %6.1f%%%s", st->changed, pct(st->changed, st->sessions_before),
            st->settled ? "   " : "(!)");
  }
  fprintf(f, " %3ld %6.1f%%", st->predicted_changed,
          pct(st->predicted_changed, st->predicted_before));
  if (st->measured) fprintf(f, " %3ld/%-3ld |", st->optimum, st->predicted_optimum);
  else fprintf(f, "   -/%-3ld |", st->predicted_optimum);
}

/* Worst (largest) share over the rows of `mode`; *at gets its row. */
static double churn_worst(const fleet_churn_row *rows, int n, const char *mode, int addition,
                          int predicted, int *at) {
  double worst = -1;
  *at = -1;
  for (int i = 0; i < n; i++) {
    const fleet_churn_row *r = &rows[i];
    if (!r->complete || strcmp(r->mode, mode) != 0) continue;
    const fleet_churn_step *st = addition ? &r->addition : &r->removal;
    if (!predicted && !st->measured) continue;
    double v = predicted ? pct(st->predicted_changed, st->predicted_before)
                         : pct(st->changed, st->sessions_before);
    if (v > worst) {
      worst = v;
      *at = i;
    }
  }
  return worst;
}

/* Whether `mode` was already listed in rows[0..i). */
static int mode_seen_before(const fleet_churn_row *rows, int i) {
  for (int j = 0; j < i; j++) {
    if (strcmp(rows[j].mode, rows[i].mode) == 0) return 1;
  }
  return 0;
}

void io_fleet_report_churn_rows(FILE *f, const fleet_churn_row *rows, int n,
                                fleet_churn_cells cells) {
  if (f == NULL || rows == NULL || cells == NULL || n <= 0) return;
  fprintf(f, "%4s %3s %2s %-12s %6s | %-38s | %-38s | %s\n", "N", "C", "A", "mode", "before",
          "removal: measured  predicted  optimum", "addition: measured predicted  optimum",
          "calls ok/failed");
  for (int i = 0; i < n; i++) {
    const fleet_churn_row *r = &rows[i];
    fprintf(f, "%4d %3d %2d %-12s", r->servers, r->clients, r->min_aperture, r->mode);
    if (!r->complete) {
      fprintf(f, " run failed: %s\n", r->error);
      continue;
    }
    fprintf(f, " %6ld |", r->removal.sessions_before);
    cells(f, &r->removal);
    cells(f, &r->addition);
    fprintf(f, " %ld/%ld\n", r->ok, r->failed);
  }
}

void io_fleet_report_churn_table(FILE *f, const fleet_churn_row *rows, int n) {
  if (n <= 0) return;
  fprintf(f,
          "\nscenario churn-grid: sessions changed (connections closed + opened on all servers) when s1\n"
          "leaves the DNS answer (and stops once no client holds it), then when it comes back;\n"
          "measured on the servers (channelz) beside the core's prediction for the same fleet.\n"
          "%% = of the sessions before the change; optimum = the removed/added server's sessions,\n"
          "measured/predicted; before = sessions before the removal (measured).\n\n");
  io_fleet_report_churn_rows(f, rows, n, churn_step_cells);
  fprintf(f, "\nworst over the points (measured; predicted):\n");
  for (int i = 0; i < n; i++) {
    if (mode_seen_before(rows, i)) continue;
    const char *mode = rows[i].mode;
    fprintf(f, "  %-12s", mode);
    for (int addition = 0; addition < 2; addition++) {
      int at_m, at_p;
      double m = churn_worst(rows, n, mode, addition, 0, &at_m);
      double p = churn_worst(rows, n, mode, addition, 1, &at_p);
      fprintf(f, " %s", addition ? "addition" : "removal");
      if (at_m >= 0) {
        fprintf(f, " %6.1f%% (%d:%d:%d)", m, rows[at_m].servers, rows[at_m].clients,
                rows[at_m].min_aperture);
      } else {
        fprintf(f, " %16s", "not measured");
      }
      if (at_p >= 0) {
        fprintf(f, "; %6.1f%% (%d:%d:%d)", p, rows[at_p].servers, rows[at_p].clients,
                rows[at_p].min_aperture);
      }
      fprintf(f, "%s", addition ? "\n" : " |");
    }
  }
  int notes = 0;
  for (int i = 0; i < n; i++) {
    if (rows[i].note[0] == '\0') continue;
    int repeated = 0; /* the same note for the same mode at another point */
    for (int j = 0; j < i; j++) {
      repeated |= strcmp(rows[j].mode, rows[i].mode) == 0 && strcmp(rows[j].note, rows[i].note) == 0;
    }
    if (repeated) continue;
    if (!notes++) fprintf(f, "\nnotes:\n");
    fprintf(f, "  %s: %s\n", rows[i].mode, rows[i].note);
  }
  for (int i = 0; i < n; i++) {
    if (rows[i].complete && ((rows[i].removal.measured && !rows[i].removal.settled) ||
                             (rows[i].addition.measured && !rows[i].addition.settled))) {
      fprintf(f, "(!) = the clients had not all settled within the bound when the figures were read.\n");
      break;
    }
  }
}

static void churn_step_json(FILE *f, const char *name, const fleet_churn_step *st,
                            int with_shares) {
  fprintf(f,
          "\"%s\":{\"measured\":%s,\"settled\":%s,\"sessions_before\":%ld,\"changed\":%ld,"
          "\"optimum\":%ld,\"predicted_before\":%ld,\"predicted_changed\":%ld,"
          "\"predicted_optimum\":%ld",
          name, st->measured ? "true" : "false", st->settled ? "true" : "false",
          st->sessions_before, st->changed, st->optimum, st->predicted_before,
          st->predicted_changed, st->predicted_optimum);
  if (with_shares) {
    fprintf(f, ",\"changed_share\":%.4f,\"predicted_share\":%.4f",
            pct(st->changed, st->sessions_before) / 100,
            pct(st->predicted_changed, st->predicted_before) / 100);
  }
  fputc('}', f);
}

void io_fleet_report_churn_row_json(FILE *f, const fleet_churn_row *r, int with_shares) {
  if (f == NULL || r == NULL) return;
  fprintf(f, "{\"servers\":%d,\"clients\":%d,\"min_aperture\":%d,\"mode\":", r->servers,
          r->clients, r->min_aperture);
  ap_json_write_string(f, r->mode);
  fprintf(f, ",\"complete\":%s,\"error\":", r->complete ? "true" : "false");
  ap_json_write_string(f, r->error);
  fprintf(f, ",\"ok\":%ld,\"failed\":%ld,", r->ok, r->failed);
  churn_step_json(f, "removal", &r->removal, with_shares);
  fputc(',', f);
  churn_step_json(f, "addition", &r->addition, with_shares);
}

static void churn_json(FILE *f, const fleet_churn_row *rows, int n) {
  fprintf(f, ",\"churn_grid\":{\"rows\":[");
  for (int i = 0; i < n; i++) {
    const fleet_churn_row *r = &rows[i];
    fprintf(f, "%s\n", i ? "," : "");
    io_fleet_report_churn_row_json(f, r, 1);
    fprintf(f, ",\"note\":");
    ap_json_write_string(f, r->note);
    fputc('}', f);
  }
  fprintf(f, "],\n\"worst\":[");
  int first = 1;
  for (int i = 0; i < n; i++) {
    if (mode_seen_before(rows, i)) continue;
    fprintf(f, "%s{\"mode\":", first ? "" : ",");
    first = 0;
    ap_json_write_string(f, rows[i].mode);
    static const char *const kKeys[2][2] = {{"removal_changed", "removal_predicted"},
                                            {"addition_changed", "addition_predicted"}};
    for (int addition = 0; addition < 2; addition++) {
      for (int predicted = 0; predicted < 2; predicted++) {
        int at;
        double v = churn_worst(rows, n, rows[i].mode, addition, predicted, &at);
        if (at < 0) {
          fprintf(f, ",\"%s\":null", kKeys[addition][predicted]);
        } else {
          fprintf(f, ",\"%s\":{\"share\":%.4f,\"servers\":%d,\"clients\":%d,\"min_aperture\":%d}",
                  kKeys[addition][predicted], v / 100, rows[at].servers, rows[at].clients,
                  rows[at].min_aperture);
        }
      }
    }
    fputc('}', f);
  }
  fprintf(f, "]}");
}

void io_fleet_report_json(FILE *f, const fleet_run *runs, int n, const fleet_churn_row *churn,
                       int n_churn) {
  fprintf(f, "{\"runs\":[");
  for (int i = 0; i < n; i++) {
    const fleet_run *r = &runs[i];
    fprintf(f, "%s\n{\"scenario\":", i ? "," : "");
    ap_json_write_string(f, r->scenario);
    fprintf(f, ",\"mode\":");
    ap_json_write_string(f, r->mode);
    if (r->pick_metric[0] != '\0') {
      fprintf(f, ",\"pick_metric\":");
      ap_json_write_string(f, r->pick_metric);
    }
    fprintf(f, ",\"complete\":%s,\"error\":", r->complete ? "true" : "false");
    ap_json_write_string(f, r->error);
    fprintf(f, ",\"duration_s\":%.2f,\"ok\":%ld,\"failed\":%ld,\"failed_on_disturbed\":%ld",
            r->duration_s, r->ok, r->failed, r->failed_on_disturbed);
    fprintf(f, ",\"by_code\":{");
    int first = 1;
    for (int c = 0; c <= 16; c++) {
      if (!r->by_code[c]) continue;
      fprintf(f, "%s\"%d\":%ld", first ? "" : ",", c, r->by_code[c]);
      first = 0;
    }
    fprintf(f, "},\"qps\":%.1f,\"latency_us\":{\"p50\":%llu,\"p99\":%llu,\"p999\":%llu},", r->qps,
            (unsigned long long)r->p50_us, (unsigned long long)r->p99_us,
            (unsigned long long)r->p999_us);
    fprintf(f, "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,", r->p50_us / 1000.0,
            r->p99_us / 1000.0, r->p999_us / 1000.0);
    if (r->util_measured) {
      fprintf(f, "\"share_over_capacity_max\":%.4f,", r->share_over_capacity_max);
      fprintf(f, "\"util_max_mean\":%.4f,\"util\":{\"mean\":%.4f,\"max\":%.4f,\"min\":%.4f,"
              "\"max_mean\":%.4f,\"cv\":%.4f},",
              r->util.max_mean, r->util.mean, r->util.max, r->util.min, r->util.max_mean,
              r->util.cv);
    }
    spread_json(f, "calls", &r->calls);
    fprintf(f, ",\"fair_max_mean\":%.4f,", r->fair_max_mean);
    if (r->steady_measured) {
      spread_json(f, "calls_steady", &r->calls_steady);
      fprintf(f, ",\"fair_steady_max_mean\":%.4f,", r->fair_steady_max_mean);
    }
    spread_json(f, "connections", &r->connections);
    fprintf(f, ",\"connections_total\":%ld,\"connections_opened\":%ld", r->connections_total,
            r->connections_opened);
    fprintf(f, ",\"slow_share\":%.4f,\"fair_share\":%.4f,\"recover_s\":%.3f,\"dns_queries\":%ld,"
            "\"min_aperture\":%ld,\"drain_s\":%.3f",
            r->slow_share, r->fair_share, r->recover_s, r->dns_queries, r->min_aperture,
            r->drain_s);
    fprintf(f, ",\"grace_ms\":%ld,\"sessions_changed\":%ld,\"sessions_before\":%ld,"
            "\"bounce_measured\":%d,\"restarted_calls\":%ld",
            r->grace_ms, r->sessions_changed, r->sessions_before, r->bounce_measured,
            r->restarted_calls);
    fprintf(f, ",\"servers\":[");
    double total_calls = 0, total_capacity = 0;
    for (int s = 0; s < r->n_servers; s++) {
      total_calls += (double)r->servers[s].calls;
      total_capacity += r->servers[s].capacity;
    }
    for (int s = 0; s < r->n_servers; s++) {
      const fleet_server_result *sv = &r->servers[s];
      fprintf(f, "%s{\"name\":", s ? "," : "");
      ap_json_write_string(f, sv->name);
      fprintf(f,
              ",\"calls\":%ld,\"connections_peak\":%ld,\"connections_opened\":%ld,\"slow\":%d,"
              "\"killed\":%d,\"removed\":%d,\"added\":%d",
              sv->calls, sv->connections_peak, sv->connections_opened, sv->slow, sv->killed,
              sv->removed, sv->added);
      if (r->util_measured) {
        fprintf(f, ",\"capacity\":%g,\"utilization\":%.4f,\"calls_share\":%.4f,\"capacity_share\":%.4f",
                sv->capacity, sv->utilization, total_calls > 0 ? (double)sv->calls / total_calls : 0,
                total_capacity > 0 ? sv->capacity / total_capacity : 0);
      }
      fputc('}', f);
    }
    fprintf(f, "],\"services\":[");
    for (int s = 0; s < r->n_services; s++) {
      const fleet_service_result *sv = &r->services[s];
      fprintf(f, "%s{\"name\":", s ? "," : "");
      ap_json_write_string(f, sv->name);
      fprintf(f, ",\"clients\":%d,\"ok\":%ld,\"failed\":%ld,\"calls_max_mean\":%.4f,\"servers_used\":%ld}",
              sv->clients, sv->ok, sv->failed, sv->calls_max_mean, sv->servers_used);
    }
    fprintf(f, "]}");
  }
  fprintf(f, "\n],");
  static fleet_summary summary;
  io_fleet_summary_of(runs, n, &summary);
  io_fleet_summary_json(f, &summary);
  if (churn != NULL && n_churn > 0) churn_json(f, churn, n_churn);
  fprintf(f, "}\n");
}
