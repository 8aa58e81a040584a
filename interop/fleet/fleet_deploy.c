/* deploy: every server replaced in turn by one at a new address, measured
 * at the servers and predicted by the core (see fleet_deploy.h). The
 * clients, the DNS answer, the settling and the connection counts are
 * churn-grid's (churn_run.h, fleet_churn_grid.h); what differs is the
 * sequence of changes. Slot i of the fleet is s<i>, slot N+i is r<i>,
 * each at an address of its own (fleet_net.h; on loopback
 * 127.0.0.(10+slot)); all listen on one port, the one the DNS clients
 * dial. */
#define _GNU_SOURCE
#include "interop/fleet/fleet_deploy.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <grpc/grpc.h>

#include "interop/common/json_read.h"
#include "interop/fleet/churn_model.h"
#include "interop/fleet/churn_run.h"
#include "interop/fleet/fleet_churn_grid.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_dns.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_report.h"
#include "interop/fleet/fleet_server.h"
#include "interop/fleet/fleet_summary.h"
#include "policy/status/ap_json_string.h"

#define MAX_N FLEET_DEPLOY_MAX_SERVERS
#define TRAFFIC_MS 500 /* calls flow this long on a settled fleet after each step */
#define WINDOW_MS 2000 /* the closing window the busiest server is measured in */

int io_fleet_deploy_check_modes(const char *modes, char *err, size_t err_len) {
  churn_run_mode m[FLEET_DEPLOY_MAX_MODES];
  if (err == NULL) return -1;
  if (modes == NULL) {
    snprintf(err, err_len, "--modes: missing");
    return -1;
  }
  return io_churn_run_parse_aperture_modes(modes, "deploy", m, FLEET_DEPLOY_MAX_MODES, err,
                                           err_len) < 0 ? -1 : 0;
}

int io_fleet_deploy_row_ok(const fleet_deploy_row *r) {
  if (r == NULL || !r->complete || r->failed != 0 || r->steps != r->servers) return 0;
  if (r->sessions_before != r->predicted_before) return 0;
  for (int i = 0; i < r->steps; i++) {
    if (!r->step[i].settled || r->step[i].changed != r->step[i].predicted) return 0;
  }
  return 1;
}

/* One mode's fleet: churn_run's servers (2N slots) and the DNS answer. */
typedef struct deploy_fleet {
  churn_run_fleet f;
  int n;                   /* servers at a time */
  uint8_t in_answer[2 * MAX_N];
  fleet_churn_dns dns;
  churn_answer answer;
} deploy_fleet;

/* Slot of the server at position `pos` of the answer before step `step`
 * (the replacements of the positions before it are in). */
static int slot_at(const deploy_fleet *d, int pos, int step) {
  return pos < step ? d->n + pos : pos;
}

/* The answer's addresses before step `step` (step == n: after the last). */
static void answer_addresses(const deploy_fleet *d, int step, const char **out) {
  for (int pos = 0; pos < d->n; pos++) out[pos] = d->f.addr[slot_at(d, pos, step)];
}

static int publish(deploy_fleet *d, int step) {
  const char *hosts[MAX_N];
  memset(d->in_answer, 0, sizeof(d->in_answer));
  for (int pos = 0; pos < d->n; pos++) {
    int s = slot_at(d, pos, step);
    hosts[pos] = d->f.servers[s].host;
    d->in_answer[s] = 1;
  }
  return io_fleet_dns_set(d->dns.dns, hosts, (size_t)d->n);
}

/* Starts the server of slot s (s<i> or r<i>) on the fleet's port (the
 * first one picks it). */
static int start_slot(deploy_fleet *d, int s) {
  char name[16];
  if (s < d->n) snprintf(name, sizeof(name), "s%d", s);
  else snprintf(name, sizeof(name), "r%d", s - d->n);
  fleet_server *sv = &d->f.servers[s];
  char host[FLEET_NET_HOST_LEN];
  if (io_fleet_net_server_host(s, 1, host, sizeof(host)) != 0) return -1;
  snprintf(sv->host, sizeof(sv->host), "%s", host);
  if (io_fleet_server_start(d->f.server_bin, d->f.dir, name, d->f.port, "", NULL, sv) != 0) {
    return -1;
  }
  d->f.port = sv->port;
  snprintf(d->f.addr[s], sizeof(d->f.addr[s]), "%s:%d", host, d->f.port);
  return 0;
}

static long server_calls(const fleet_server *s) {
  json_value *v = io_json_parse_file(s->stats, NULL, 0);
  long calls = v ? (long)io_json_get_number(v, "calls", 0) : 0;
  io_json_free(v);
  return calls;
}

static long sum_current(const deploy_fleet *d, const churn_run_counts *c) {
  long sum = 0;
  for (int s = 0; s < 2 * d->n; s++) sum += c->current[s];
  return sum;
}

/* Step i: r<i> starts, the answer swaps s<i> for r<i>, the clients settle,
 * s<i> stops. Fills st; 0, or -1 with a message in row->error. */
static int run_step(deploy_fleet *d, const churn_run_mode *m, const churn_run_clients *mc,
                    const churn_model_fleet *model, int i, fleet_deploy_step *st,
                    fleet_deploy_row *row) {
  const int old_slot = i, new_slot = d->n + i;
  if (start_slot(d, new_slot) != 0) {
    snprintf(row->error, sizeof(row->error), "r%d did not start (see %.100s)", i, d->f.dir);
    return -1;
  }
  const char *before[MAX_N], *after[MAX_N];
  answer_addresses(d, i, before);
  answer_addresses(d, i + 1, after);
  churn_model_change ch;
  ap_error err;
  if (io_churn_model_diff(model, before, (size_t)d->n, after, (size_t)d->n, &ch, &err) != AP_OK) {
    snprintf(row->error, sizeof(row->error), "model: %.160s", err.message);
    return -1;
  }
  st->predicted = ch.changed;
  st->optimum = ch.optimum;
  if (i == 0) row->predicted_before = ch.sessions_before;

  churn_run_counts c0, c1;
  io_churn_run_snapshot(&d->f, &c0);
  if (i == 0) row->sessions_before = sum_current(d, &c0);
  if (publish(d, i + 1) != 0) {
    snprintf(row->error, sizeof(row->error), "the DNS server did not take the answer");
    return -1;
  }
  st->settled = io_churn_run_settle_on(&d->f, m, mc, d->in_answer);
  io_proc_stop(d->f.servers[old_slot].p, 10000);
  d->f.servers[old_slot].p = NULL;
  io_churn_run_snapshot(&d->f, &c1); /* s<i>'s figures are from its last write, at exit */
  for (int s = 0; s < 2 * d->n; s++) {
    st->changed += s == old_slot ? io_churn_run_stopped_moved(&c0, &c1, s)
                                 : io_fleet_server_moved(c0.opened[s], c0.current[s],
                                                         c1.opened[s], c1.current[s]);
  }
  if (!st->settled) {
    snprintf(row->error, sizeof(row->error), "the clients did not settle on step %d (see %.100s)",
             i, d->f.dir);
    return -1;
  }
  io_fleet_sleep_ms(TRAFFIC_MS);
  return 0;
}

/* The replacements' calls over WINDOW_MS once the deploy is done. */
static void closing_window(const deploy_fleet *d, fleet_deploy_row *row) {
  long start[MAX_N];
  for (int i = 0; i < d->n; i++) start[i] = server_calls(&d->f.servers[d->n + i]);
  io_fleet_sleep_ms(WINDOW_MS);
  double calls[MAX_N];
  for (int i = 0; i < d->n; i++) {
    calls[i] = (double)(server_calls(&d->f.servers[d->n + i]) - start[i]);
    row->final_calls += (long)calls[i];
  }
  row->busiest = io_fleet_spread_of(calls, d->n).max_mean;
  row->fair = io_fleet_fair_max_mean(d->n, row->final_calls);
}

static void run_mode(const fleet_deploy_opts *o, const churn_run_mode *m, int n, int c, int a,
                     fleet_churn_opts *co, fleet_deploy_row *row) {
  memset(row, 0, sizeof(*row));
  snprintf(row->mode, sizeof(row->mode), "%s", m->name);
  row->servers = n;
  row->clients = c;
  row->min_aperture = a;
  static deploy_fleet d; /* large: not on the stack */
  memset(&d, 0, sizeof(d));
  d.n = n;
  d.f.pt.servers = 2 * n;
  d.f.pt.clients = c;
  d.f.pt.min_aperture = a;
  d.f.server_bin = o->server_bin;
  snprintf(d.f.dir, sizeof(d.f.dir), "%s/deploy-%d-%d-%d-%s", o->out_dir, n, c, a, m->name);
  mkdir(d.f.dir, 0755);
  d.dns.o = co;
  io_fleet_churn_dns_answer(&d.dns, &d.answer);
  churn_run_clients mc;
  memset(&mc, 0, sizeof(mc));
  churn_model_fleet model = {m->model, (uint32_t)c, (uint32_t)a, NULL};
  int ok = 1;
  for (int s = 0; s < n && ok; s++) {
    if (start_slot(&d, s) != 0) {
      snprintf(row->error, sizeof(row->error), "s%d did not start (see %.100s)", s, d.f.dir);
      ok = 0;
    }
  }
  if (ok) {
    d.dns.dns = io_fleet_dns_start("fleet.test");
    if (d.dns.dns == NULL) snprintf(row->error, sizeof(row->error), "the DNS server did not start");
    ok = d.dns.dns != NULL && publish(&d, 0) == 0;
  }
  if (ok && io_churn_run_start_clients(&d.answer, &d.f, m, &mc, row->error,
                                       sizeof(row->error)) != 0) {
    ok = 0;
  }
  if (ok && !io_churn_run_settle_on(&d.f, m, &mc, d.in_answer)) {
    snprintf(row->error, sizeof(row->error), "the clients did not settle before the deploy "
             "(see %.100s)", d.f.dir);
    ok = 0;
  }
  if (ok) io_fleet_sleep_ms(TRAFFIC_MS);
  for (int i = 0; i < n && ok; i++) {
    fprintf(stderr, "fleet: deploy %s: s%d -> r%d\n", m->name, i, i);
    ok = run_step(&d, m, &mc, &model, i, &row->step[i], row) == 0;
    row->steps = i + 1;
    row->changed += row->step[i].changed;
    row->predicted += row->step[i].predicted;
    row->optimum += row->step[i].optimum;
  }
  if (ok) closing_window(&d, row);
  char err[64] = "";
  if (io_churn_run_stop_clients(&mc, &row->ok, &row->failed, err, sizeof(err)) != 0 && ok) {
    snprintf(row->error, sizeof(row->error), "%s", err);
    ok = 0;
  }
  if (io_churn_run_drain(&d.f) != 0 && ok) {
    snprintf(row->error, sizeof(row->error), "connections stayed open after the clients stopped");
    ok = 0;
  }
  row->port = d.f.port;
  io_churn_run_stop_servers(&d.f);
  io_fleet_dns_stop(d.dns.dns);
  row->complete = ok;
}

int io_fleet_deploy_run(const fleet_deploy_opts *o, fleet_deploy_row *rows, int max_rows,
                        int *n_rows) {
  if (o == NULL || o->server_bin == NULL || o->client_bin == NULL || o->out_dir == NULL ||
      rows == NULL || n_rows == NULL) {
    fprintf(stderr, "fleet: deploy: missing options\n");
    return -1;
  }
  int n = o->servers > 0 ? o->servers : 8;
  int c = o->clients > 0 ? o->clients : 4;
  int a = o->min_aperture > 0 ? o->min_aperture : 3;
  if (n < 2 || n > MAX_N || c > CHURN_RUN_MAX_CLIENTS) {
    fprintf(stderr, "fleet: deploy: --servers in [2, %d], --clients in [1, %d]\n", MAX_N,
            CHURN_RUN_MAX_CLIENTS);
    return -1;
  }
  churn_run_mode modes[FLEET_DEPLOY_MAX_MODES];
  char err[200];
  int n_modes = io_churn_run_parse_aperture_modes(o->modes ? o->modes : FLEET_DEPLOY_DEFAULT_MODES,
                                                  "deploy", modes, FLEET_DEPLOY_MAX_MODES, err,
                                                  sizeof(err));
  if (n_modes < 0) {
    fprintf(stderr, "fleet: %s\n", err);
    return -1;
  }
  fleet_churn_opts co;
  memset(&co, 0, sizeof(co));
  co.client_bin = o->client_bin;
  co.rate = o->rate > 0 ? o->rate : 50;
  grpc_init();
  int failures = 0;
  for (int k = 0; k < n_modes && *n_rows < max_rows; k++) {
    fleet_deploy_row *row = &rows[(*n_rows)++];
    fprintf(stderr, "fleet: deploy %d:%d:%d / %s ...\n", n, c, a, modes[k].name);
    run_mode(o, &modes[k], n, c, a, &co, row);
    if (!row->complete) {
      fprintf(stderr, "fleet: deploy / %s failed: %s\n", modes[k].name, row->error);
    }
    failures += !io_fleet_deploy_row_ok(row);
  }
  grpc_shutdown();
  return failures ? -1 : 0;
}

void io_fleet_deploy_json(FILE *out, const fleet_deploy_row *rows, int n) {
  if (out == NULL || (rows == NULL && n > 0)) return;
  fprintf(out, "{\"deploy\":[");
  for (int i = 0; i < n; i++) {
    const fleet_deploy_row *r = &rows[i];
    fprintf(out, "%s\n{\"mode\":", i ? "," : "");
    ap_json_write_string(out, r->mode);
    fprintf(out,
            ",\"servers\":%d,\"clients\":%d,\"min_aperture\":%d,\"port\":%d,\"complete\":%s,"
            "\"error\":",
            r->servers, r->clients, r->min_aperture, r->port, r->complete ? "true" : "false");
    ap_json_write_string(out, r->error);
    fprintf(out,
            ",\"matches_prediction\":%s,\"sessions_before\":%ld,\"predicted_before\":%ld,"
            "\"changed\":%ld,\"predicted\":%ld,\"optimum\":%ld,\"ok\":%ld,\"failed\":%ld,"
            "\"final_calls\":%ld,\"busiest_max_mean\":%.4f,\"fair_max_mean\":%.4f,\"steps\":[",
            io_fleet_deploy_row_ok(r) ? "true" : "false", r->sessions_before,
            r->predicted_before, r->changed, r->predicted, r->optimum, r->ok, r->failed,
            r->final_calls, r->busiest, r->fair);
    for (int s = 0; s < r->steps; s++) {
      const fleet_deploy_step *st = &r->step[s];
      fprintf(out, "%s{\"settled\":%s,\"changed\":%ld,\"predicted\":%ld,\"optimum\":%ld}",
              s ? "," : "", st->settled ? "true" : "false", st->changed, st->predicted,
              st->optimum);
    }
    fprintf(out, "]}");
  }
  fprintf(out, "]}\n");
}

void io_fleet_deploy_table(FILE *out, const fleet_deploy_row *rows, int n) {
  if (out == NULL || rows == NULL || n <= 0) return;
  fprintf(out,
          "deploy: %d servers replaced one at a time by servers at new addresses; %d clients, "
          "minAperture %d\n"
          "changed = sessions closed + opened over the whole deploy, measured at the servers "
          "(predicted by the core); optimum = each replaced server's sessions plus its "
          "replacement's; busiest = the replacements' busiest server's calls / mean over %d ms "
          "after the deploy (fair = a fair random balancer's at that call count)\n\n",
          rows[0].servers, rows[0].clients, rows[0].min_aperture, WINDOW_MS);
  fprintf(out, "  mode        port  | sessions (pred) | changed (pred)  optimum | ok      failed | "
               "busiest  fair   calls | match\n");
  for (int i = 0; i < n; i++) {
    const fleet_deploy_row *r = &rows[i];
    fprintf(out,
            "  %-11s %5d | %8ld (%4ld) | %7ld (%4ld)  %7ld | %-7ld %6ld | %7.2f  %4.2f  %6ld | %s%s\n",
            r->mode, r->port, r->sessions_before, r->predicted_before, r->changed, r->predicted,
            r->optimum, r->ok, r->failed, r->busiest, r->fair, r->final_calls,
            io_fleet_deploy_row_ok(r) ? "yes" : "NO", r->complete ? "" : "  INCOMPLETE: ");
    if (!r->complete) fprintf(out, "      %s\n", r->error);
  }
}

/* --- the scenario table's row --- */

int io_fleet_deploy_check(const fleet_args *a, char *err, size_t err_len) {
  if (a == NULL || err == NULL) return -1;
  char why[200];
  if (a->modes != NULL && io_fleet_deploy_check_modes(a->modes, why, sizeof(why)) != 0) {
    snprintf(err, err_len, "flag %s", why);
    return -1;
  }
  if (a->servers == 1 || a->servers > FLEET_DEPLOY_MAX_SERVERS || a->clients > 16) {
    snprintf(err, err_len, "fleet: deploy: --servers in [2, %d] and --clients in [1, 16]",
             FLEET_DEPLOY_MAX_SERVERS);
    return -1;
  }
  return 0;
}

int io_fleet_deploy_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  if (a == NULL || out == NULL) return -1;
  fleet_deploy_opts dop = {a->server_bin, a->client_bin, a->out_dir, a->modes,
                           (int)a->servers, (int)a->clients, (int)a->min_aperture, a->rate};
  static fleet_deploy_row rows[FLEET_DEPLOY_MAX_MODES];
  int n = 0;
  int rc = io_fleet_deploy_run(&dop, rows, FLEET_DEPLOY_MAX_MODES, &n);
  out->rows = rows;
  out->n_rows = n;
  return rc != 0 ? -1 : 0;
}

void io_fleet_deploy_write_json(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_deploy_json(f, out->rows, out->n_rows);
}

void io_fleet_deploy_write_table(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_deploy_table(f, out->rows, out->n_rows);
}
