/* The tail scenario (fleet_tail.h): per mode, healthy servers with a
 * seeded latency tail, clients with deadlines inside it; ejections from
 * the clients' own status, load from the servers' counts and the call
 * logs. */
#define _GNU_SOURCE
#include "interop/fleet/fleet_tail.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "aperture/v1/status.pb-c.h"
#include "interop/common/delay_queue.h"
#include "interop/common/json_read.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_gray_calls.h"
#include "interop/fleet/fleet_modes.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_server.h"
#include "interop/fleet/fleet_summary.h"
#include "interop/fleet/fleet_tail_calls.h"
#include "policy/status/ap_json_string.h"

#define MAX_ROWS 16
#define MAX_CALLS 2000000 /* over a run's clients: 10 s at 200,000 calls/s */
#define WINDOW_MS 1000.0
#define MIN_WINDOW_CALLS 100

typedef struct tail_params {
  int servers, clients, concurrency, min_aperture;
  double share, duration_s;
  long tail_ms, deadline_ms, seed;
} tail_params;

typedef struct tail_row {
  char mode[24];
  int aperture;
  int complete;
  char error[200];
  long ejections;                               /* aperture: over clients and endpoints */
  long ejections_of[FLEET_TAIL_MAX_SERVERS];    /* per server */
  long server_calls[FLEET_TAIL_MAX_SERVERS];    /* as each server counted them */
  long tail_calls;                              /* the servers' delayed calls */
  double max_mean, fair_max_mean;
  tail_figures fig;
} tail_row;

typedef struct tail_result {
  tail_params p;
  int n_rows;
  tail_row rows[MAX_ROWS];
} tail_result;

static tail_result g_result;

static double now_s(void) { return io_fleet_now_ms() / 1000.0; }
static gray_call g_calls[MAX_CALLS];

int io_fleet_tail_check(const fleet_args *a, char *err, size_t len) {
  if (a == NULL || err == NULL) return -1;
  if (a->servers > FLEET_TAIL_MAX_SERVERS) {
    snprintf(err, len, "flag --servers: %ld is above the tail scenario's %d", a->servers,
             FLEET_TAIL_MAX_SERVERS);
    return -1;
  }
  if (a->clients > FLEET_TAIL_MAX_CLIENTS) {
    snprintf(err, len, "flag --clients: %ld is above the tail scenario's %d", a->clients,
             FLEET_TAIL_MAX_CLIENTS);
    return -1;
  }
  return 0;
}

static void params_of(const fleet_args *a, tail_params *p) {
  p->servers = a->servers > 0 ? (int)a->servers : 4;
  p->clients = a->clients > 0 ? (int)a->clients : 1;
  p->concurrency = a->concurrency > 0 ? (int)a->concurrency : 2;
  p->min_aperture = a->min_aperture > 0 ? (int)a->min_aperture : p->servers;
  p->duration_s = a->duration_s > 0 ? a->duration_s : 10;
  p->share = a->has_tail_share ? a->tail_share : FLEET_TAIL_DEFAULT_SHARE;
  p->tail_ms = a->tail_ms > 0 ? a->tail_ms : FLEET_TAIL_DEFAULT_MS;
  p->deadline_ms = a->deadline_ms > 0 ? a->deadline_ms : FLEET_TAIL_DEFAULT_DEADLINE_MS;
  p->seed = a->tail_seed > 0 ? a->tail_seed : FLEET_TAIL_DEFAULT_SEED;
}

/* --- one run --- */

typedef struct tail_fleet {
  char dir[4200];
  fleet_server servers[FLEET_TAIL_MAX_SERVERS];
  gray_servers names;
  proc *clients[FLEET_TAIL_MAX_CLIENTS];
  grpc_channel *status[FLEET_TAIL_MAX_CLIENTS];
  char log[FLEET_TAIL_MAX_CLIENTS][4300];
} tail_fleet;

static int start_servers(tail_fleet *f, const fleet_args *a, const tail_params *p, char *target,
                         size_t tlen, char *err, size_t elen) {
  f->names.n = p->servers;
  char share[32], ms[32];
  snprintf(share, sizeof(share), "%.6f", p->share);
  snprintf(ms, sizeof(ms), "%ld", p->tail_ms);
  for (int i = 0; i < p->servers; i++) {
    char name[16], seed[32];
    snprintf(name, sizeof(name), "s%d", i);
    snprintf(seed, sizeof(seed), "%ld", p->seed + i);
    const char *extra[] = {"--tail-share", share, "--tail-ms", ms, "--tail-seed", seed, NULL};
    fleet_server *s = &f->servers[i];
    if (io_fleet_net_server_host(i, 0, s->host, sizeof(s->host)) != 0 ||
        io_fleet_server_spawn(a->server_bin, f->dir, name, 0, "", extra, s) != 0) {
      snprintf(err, elen, "server %s did not start (see %.100s)", name, f->dir);
      return -1;
    }
  }
  size_t at = (size_t)snprintf(target, tlen, "ipv4:");
  for (int i = 0; i < p->servers; i++) {
    fleet_server *s = &f->servers[i];
    if (io_fleet_server_await(s) != 0) {
      snprintf(err, elen, "server s%d did not listen (see %.100s)", i, f->dir);
      return -1;
    }
    snprintf(f->names.addrs[i], sizeof(f->names.addrs[i]), "%s:%d", s->host, s->port);
    at += (size_t)snprintf(target + at, at < tlen ? tlen - at : 0, "%s%s", i ? "," : "",
                           f->names.addrs[i]);
  }
  return at < tlen ? 0 : -1;
}

static int start_clients(tail_fleet *f, const fleet_args *a, const fleet_mode *m,
                         const tail_params *p, const char *target, char *err, size_t elen) {
  char config[256], duration[32], conc[16], deadline[16];
  if (m->config) snprintf(config, sizeof(config), "%s", m->config);
  else
    snprintf(config, sizeof(config),
             "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"%s\",\"minAperture\":%d}}]}",
             m->name, p->min_aperture);
  snprintf(duration, sizeof(duration), "%.1f", p->duration_s);
  snprintf(conc, sizeof(conc), "%d", p->concurrency);
  snprintf(deadline, sizeof(deadline), "%ld", p->deadline_ms);
  for (int c = 0; c < p->clients; c++) {
    char idx[16], cnt[16], summary[4300], log[4300], host[FLEET_NET_HOST_LEN];
    snprintf(idx, sizeof(idx), "%d", c);
    snprintf(cnt, sizeof(cnt), "%d", p->clients);
    snprintf(summary, sizeof(summary), "%s/client-%d.json", f->dir, c);
    snprintf(log, sizeof(log), "%s/client-%d.log", f->dir, c);
    snprintf(f->log[c], sizeof(f->log[c]), "%s/calls-%d.txt", f->dir, c);
    const char *extra[] = {"--timeout-ms", deadline, "--call-log", f->log[c], NULL};
    if (io_fleet_net_client_host(c, host, sizeof(host)) != 0) return -1;
    fleet_client_opts o = {
        .bin = a->client_bin,
        .target = target,
        .service_config = config,
        .rate = "0", /* as fast as the calls in flight allow */
        .duration_s = duration,
        .concurrency = conc,
        /* aperture clients wait for the runner to read their status */
        .linger_s = m->aperture ? "120" : "0",
        .summary_file = summary,
        .peer_index = m->aperture ? idx : NULL,
        .peer_count = m->aperture ? cnt : NULL,
        .status_server = m->aperture,
        .extra = extra,
        .host = host,
    };
    f->clients[c] = io_fleet_client_start(&o, log);
    if (f->clients[c] == NULL) {
      snprintf(err, elen, "client %d did not start", c);
      return -1;
    }
    if (m->aperture) {
      const char *why = "";
      f->status[c] = io_fleet_client_status_channel(f->clients[c], &why);
      if (f->status[c] == NULL) {
        snprintf(err, elen, "client %d: %s (see %.100s)", c, why, f->dir);
        return -1;
      }
    }
  }
  return 0;
}

/* The slot of a status endpoint's address, or -1. */
static int slot_of(const gray_servers *names, const char *address) {
  for (int i = 0; i < names->n; i++) {
    if (address != NULL && strcmp(address, names->addrs[i]) == 0) return i;
  }
  return -1;
}

/* Client c's ring once its calls ended (nothing in flight, picks the same
 * over two readings 200 ms apart): adds its endpoints' ejections to the
 * row. Returns 0, or -1 when it did not end in time. */
static int read_ejections(tail_fleet *f, int c, double deadline_s, tail_row *row) {
  uint64_t last_picks = UINT64_MAX;
  while (now_s() < deadline_s) {
    unary_result u;
    const Aperture__V1__RingState *ring = io_fleet_client_ring_state(f->status[c], &u);
    if (ring != NULL) {
      uint64_t picks = 0, outstanding = 0, ejections = 0;
      for (size_t e = 0; e < ring->n_endpoints; e++) {
        picks += ring->endpoints[e]->picks;
        outstanding += ring->endpoints[e]->outstanding;
      }
      if (picks > 0 && outstanding == 0 && picks == last_picks) {
        for (size_t e = 0; e < ring->n_endpoints; e++) {
          const Aperture__V1__EndpointState *ep = ring->endpoints[e];
          ejections += ep->ejections;
          const int slot = slot_of(&f->names, ep->address);
          if (slot >= 0) row->ejections_of[slot] += (long)ep->ejections;
        }
        row->ejections += (long)ejections;
        io_unary_result_free(&u);
        return 0;
      }
      last_picks = picks;
    }
    io_unary_result_free(&u);
    io_fleet_sleep_ms(200);
  }
  return -1;
}

/* Waits for every client's calls to end (aperture: reading its status
 * first, then SIGTERM ends its linger) and for its exit. */
static int finish_clients(tail_fleet *f, const fleet_mode *m, const tail_params *p, double t0,
                          tail_row *row, char *err, size_t elen) {
  const double bound = t0 + p->duration_s + 60;
  if (m->aperture) {
    while (now_s() < t0 + p->duration_s) io_fleet_sleep_ms(100);
    for (int c = 0; c < p->clients; c++) {
      if (read_ejections(f, c, bound, row) != 0) {
        snprintf(err, elen, "client %d: its calls did not end, or no status (see %.100s)", c,
                 f->dir);
        return -1;
      }
    }
    for (int c = 0; c < p->clients; c++) io_proc_signal(f->clients[c], SIGTERM);
  }
  for (int c = 0; c < p->clients; c++) {
    int status = 0;
    const double left = bound - now_s();
    if (io_proc_wait(f->clients[c], left > 0 ? (int)(left * 1000) : 0, &status) != 0 ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      snprintf(err, elen, "client %d did not finish well (status %d, see %.100s)", c, status,
               f->dir);
      return -1;
    }
  }
  return 0;
}

/* Every exit path: the clients and the servers stopped, channels closed. */
static void stop_all(tail_fleet *f, const tail_params *p) {
  for (int c = 0; c < FLEET_TAIL_MAX_CLIENTS; c++) {
    if (f->status[c]) grpc_channel_destroy(f->status[c]);
    f->status[c] = NULL;
    if (f->clients[c]) io_proc_stop(f->clients[c], 5000);
    f->clients[c] = NULL;
  }
  for (int i = 0; i < p->servers; i++) {
    if (f->servers[i].p) io_proc_signal(f->servers[i].p, SIGTERM);
  }
  for (int i = 0; i < p->servers; i++) {
    if (f->servers[i].p) io_proc_stop(f->servers[i].p, 10000);
    f->servers[i].p = NULL;
  }
}

/* The servers' own counts (their stats files, written at exit). */
static int read_server_calls(tail_fleet *f, const tail_params *p, tail_row *row) {
  double calls[FLEET_TAIL_MAX_SERVERS];
  long total = 0;
  for (int i = 0; i < p->servers; i++) {
    json_value *v = io_json_parse_file(f->servers[i].stats, NULL, 0);
    if (v == NULL) return -1;
    row->server_calls[i] = (long)io_json_get_number(v, "calls", 0);
    row->tail_calls += (long)io_json_get_number(v, "tail_calls", 0);
    io_json_free(v);
    calls[i] = (double)row->server_calls[i];
    total += row->server_calls[i];
  }
  fleet_spread spread = io_fleet_spread_of(calls, p->servers);
  row->max_mean = spread.max_mean;
  row->fair_max_mean = io_fleet_fair_max_mean(p->servers, total);
  return total > 0 ? 0 : -1;
}

static long read_call_logs(const tail_fleet *f, const tail_params *p, char *err, size_t len) {
  size_t n = 0, max = sizeof(g_calls) / sizeof(g_calls[0]);
  for (int c = 0; c < p->clients; c++) {
    FILE *in = fopen(f->log[c], "r");
    if (in == NULL) {
      snprintf(err, len, "no call log %.150s", f->log[c]);
      return -1;
    }
    char line[512];
    while (n < max && fgets(line, sizeof(line), in) != NULL) {
      if (io_fleet_gray_parse_line(&f->names, line, &g_calls[n]) == 0) g_calls[n++].client = c;
    }
    fclose(in);
  }
  return (long)n;
}

static void run_one(const fleet_args *a, const fleet_mode *m, const tail_params *p, tail_row *row) {
  static tail_fleet f;
  memset(&f, 0, sizeof(f));
  memset(row, 0, sizeof(*row));
  snprintf(row->mode, sizeof(row->mode), "%s", m->name);
  row->aperture = m->aperture;
  snprintf(f.dir, sizeof(f.dir), "%s/tail-%s", a->out_dir, m->name);
  mkdir(f.dir, 0755);
  char target[FLEET_TAIL_MAX_SERVERS * 64 + 16];
  const double t0 = now_s();
  int ok = start_servers(&f, a, p, target, sizeof(target), row->error, sizeof(row->error)) == 0 &&
           start_clients(&f, a, m, p, target, row->error, sizeof(row->error)) == 0 &&
           finish_clients(&f, m, p, t0, row, row->error, sizeof(row->error)) == 0;
  stop_all(&f, p);
  if (!ok) {
    if (row->error[0] == '\0') snprintf(row->error, sizeof(row->error), "run failed");
    return;
  }
  if (read_server_calls(&f, p, row) != 0) {
    snprintf(row->error, sizeof(row->error), "no server stats (see %.100s)", f.dir);
    return;
  }
  long n = read_call_logs(&f, p, row->error, sizeof(row->error));
  if (n < 0) return;
  if (io_fleet_tail_figures(g_calls, (size_t)n, p->servers, WINDOW_MS, MIN_WINDOW_CALLS,
                            &row->fig) != 0) {
    snprintf(row->error, sizeof(row->error), "no calls in the call logs (see %.100s)", f.dir);
    return;
  }
  row->complete = 1;
}

int io_fleet_tail_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  if (a == NULL || out == NULL) return -1;
  tail_result *res = &g_result;
  memset(res, 0, sizeof(*res));
  out->rows = res;
  out->n_rows = 1;
  params_of(a, &res->p);
  grpc_init(); /* the status channels */
  const char *list = a->modes ? a->modes : FLEET_TAIL_DEFAULT_MODES;
  const fleet_mode *m;
  int more, failed = 0;
  while ((more = io_fleet_modes_next(&list, a->have_aperture, a->modes != NULL, &m)) > 0) {
    if (res->n_rows >= MAX_ROWS) break;
    tail_row *row = &res->rows[res->n_rows++];
    fprintf(stderr, "fleet: tail / %s ...\n", m->name);
    run_one(a, m, &res->p, row);
    if (!row->complete) {
      fprintf(stderr, "fleet: tail / %s failed: %s\n", m->name, row->error);
      failed = 1;
    }
  }
  grpc_shutdown();
  return more < 0 || failed ? -1 : 0;
}

/* --- the report --- */

/* round_robin's failed share in the same run, or -1. */
static double rr_failed_share(const tail_result *res) {
  for (int i = 0; i < res->n_rows; i++) {
    const tail_row *r = &res->rows[i];
    if (r->complete && strcmp(r->mode, "round_robin") == 0) return r->fig.failed_share;
  }
  return -1;
}

typedef struct row_targets {
  int ejections, max_mean, failed;
} row_targets;

static row_targets targets_of(const tail_result *res, const tail_row *r) {
  const double rr = rr_failed_share(res);
  row_targets t = {r->ejections <= FLEET_TAIL_MAX_EJECTIONS,
                   r->max_mean <= FLEET_TAIL_MAX_MAX_MEAN,
                   rr >= 0 && r->fig.failed_share <= rr + FLEET_TAIL_FAILED_MARGIN};
  return t;
}

static const char *yes(int v) { return v ? "true" : "false"; }

static void write_row_json(FILE *f, const tail_result *res, const tail_row *r) {
  const tail_figures *x = &r->fig;
  fprintf(f, "{\"scenario\":\"tail\",\"mode\":\"%s\",\"ejections\":%ld,\"ejections_by_server\":[",
          r->mode, r->ejections);
  for (int i = 0; i < res->p.servers; i++) fprintf(f, "%s%ld", i ? "," : "", r->ejections_of[i]);
  long total = 0;
  for (int i = 0; i < res->p.servers; i++) total += r->server_calls[i];
  fprintf(f, "],\"calls\":{\"max_mean\":%.4f,\"fair_max_mean\":%.4f,\"total\":%ld,\"per_server\":[",
          r->max_mean, r->fair_max_mean, total);
  for (int i = 0; i < res->p.servers; i++) fprintf(f, "%s%ld", i ? "," : "", r->server_calls[i]);
  fprintf(f, "]},\"failed\":%ld,\"failed_share\":%.5f,\"client_calls\":%ld,\"tail_calls\":%ld",
          x->failed, x->failed_share, x->calls, r->tail_calls);
  fprintf(f, ",\"busiest_window\":{\"max_mean\":%.4f,\"second\":%d,\"server\":%d,\"windows\":%ld}",
          x->busiest_max_mean, x->busiest_window, x->busiest_server, x->windows);
  fprintf(f, ",\"p50_ms\":%.2f,\"p99_ms\":%.2f", x->p50_ms, x->p99_ms);
  if (r->aperture && r->complete) {
    const row_targets t = targets_of(res, r);
    fprintf(f, ",\"targets\":{\"ejections\":%s,\"max_mean\":%s,\"failed\":%s}",
            yes(t.ejections), yes(t.max_mean), yes(t.failed));
    fprintf(f, ",\"within_targets\":%s", yes(t.ejections && t.max_mean && t.failed));
  }
  fprintf(f, ",\"complete\":%s", yes(r->complete));
  if (!r->complete) {
    fprintf(f, ",\"error\":");
    ap_json_write_string(f, r->error);
  }
  fputc('}', f);
}

void io_fleet_tail_write_json(FILE *f, const fleet_output *out) {
  const tail_result *res = out && out->n_rows == 1 ? out->rows : NULL;
  if (res == NULL) {
    fprintf(f, "{\"scenario\":\"tail\",\"runs\":[]}\n");
    return;
  }
  const tail_params *p = &res->p;
  fprintf(f,
          "{\"scenario\":\"tail\",\"network\":\"%s\",\"servers\":%d,\"clients\":%d,"
          "\"concurrency\":%d,\"deadline_ms\":%ld,\"tail_share\":%.4f,\"tail_ms\":%ld,"
          "\"tail_seed\":%ld,\"duration_s\":%.1f,\"min_aperture\":%d,"
          "\"targets\":{\"max_ejections\":%d,\"max_max_mean\":%.2f,\"failed_above_round_robin\":%.3f},"
          "\"runs\":[",
          io_fleet_net_name(), p->servers, p->clients, p->concurrency, p->deadline_ms, p->share,
          p->tail_ms, p->seed, p->duration_s, p->min_aperture, FLEET_TAIL_MAX_EJECTIONS,
          FLEET_TAIL_MAX_MAX_MEAN, FLEET_TAIL_FAILED_MARGIN);
  for (int i = 0; i < res->n_rows; i++) {
    fprintf(f, "%s\n", i ? "," : "");
    write_row_json(f, res, &res->rows[i]);
  }
  fprintf(f, "]}\n");
}

void io_fleet_tail_write_table(FILE *f, const fleet_output *out) {
  const tail_result *res = out && out->n_rows == 1 ? out->rows : NULL;
  if (res == NULL) return;
  const tail_params *p = &res->p;
  fprintf(f,
          "tail: %d servers (%.1f%% of calls %ld ms late), %d client(s) x %d in flight, %ld ms "
          "deadlines,\n      %.1f s per mode, minAperture %d (network %s)\n",
          p->servers, p->share * 100, p->tail_ms, p->clients, p->concurrency, p->deadline_ms,
          p->duration_s, p->min_aperture, io_fleet_net_name());
  fprintf(f, "%-12s %9s %8s %8s %8s %8s %7s %8s %7s %7s  %s\n", "mode", "ejections", "calls",
          "max/mean", "fair", "busiest", "failed", "share", "p50_ms", "p99_ms", "targets");
  for (int i = 0; i < res->n_rows; i++) {
    const tail_row *r = &res->rows[i];
    const tail_figures *x = &r->fig;
    if (!r->complete) {
      fprintf(f, "%-12s failed: %s\n", r->mode, r->error);
      continue;
    }
    long total = 0;
    for (int s = 0; s < p->servers; s++) total += r->server_calls[s];
    char ej[16] = "-", tg[16] = "";
    if (r->aperture) {
      const row_targets t = targets_of(res, r);
      snprintf(ej, sizeof(ej), "%ld", r->ejections);
      snprintf(tg, sizeof(tg), "%s", t.ejections && t.max_mean && t.failed ? "met" : "MISSED");
    }
    fprintf(f, "%-12s %9s %8ld %8.3f %8.3f %8.3f %7ld %7.2f%% %7.1f %7.1f  %s\n", r->mode, ej,
            total, r->max_mean, r->fair_max_mean, x->busiest_max_mean, x->failed,
            x->failed_share * 100, x->p50_ms, x->p99_ms, tg);
  }
  fprintf(f,
          "ejections: every endpoint's, from each client's status at the end; calls: as the "
          "servers counted\nthem, max/mean beside a fair random balancer's (fair); busiest: the "
          "most one server took above\nthe mean in a 1 s window; targets (aperture): at most %d "
          "ejections, max/mean at most %.2f,\nfailed share at most round_robin's + %.1f points\n",
          FLEET_TAIL_MAX_EJECTIONS, FLEET_TAIL_MAX_MAX_MEAN, FLEET_TAIL_FAILED_MARGIN * 100);
}
