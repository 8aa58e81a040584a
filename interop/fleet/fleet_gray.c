/* The gray scenario (fleet_gray.h): per fault and mode, a fleet of four
 * servers and four clients, the fault at its times, then the figures from
 * the clients' call logs. */
#define _GNU_SOURCE
#include "interop/fleet/fleet_gray.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "interop/common/delay_queue.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_gray_calls.h"
#include "interop/fleet/fleet_gray_faults.h"
#include "interop/fleet/fleet_modes.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_server.h"
#include "policy/status/ap_json_string.h"

#define WARM_S 1.5   /* calls before the fault starts */
#define AFTER_S 3.5  /* calls after it healed */
#define CONCURRENCY 8
#define DEADLINE_MS 300
#define DEADLINE_MS_TEXT "300"
#define MIN_APERTURE 4
#define FAULTY 1
#define MAX_ROWS 64
#define MAX_SKIPPED 8

typedef struct gray_row {
  char mode[24], fault[16];
  int complete;
  char error[200];
  int resumed; /* freeze: 1 resumed after SIGCONT and running at the end; -1: other faults */
  gray_figures fig;
} gray_row;

typedef struct gray_result {
  char network[24];
  int clients;
  long calls;
  double fault_s;
  int n_rows, n_skipped;
  gray_row rows[MAX_ROWS];
  struct {
    char fault[16], reason[96];
  } skipped[MAX_SKIPPED];
} gray_result;

static gray_result g_result;
static gray_call g_calls[FLEET_GRAY_MAX_CALLS + 4096]; /* a run's calls (a client may end a few late) */

/* --- flags --- */

typedef int (*item_fn)(const char *name, size_t len, void *ctx);

static int each_item(const char *list, item_fn fn, void *ctx) {
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len > 0 && fn(p, len, ctx) != 0) return -1;
    p += len + (p[len] == ',');
  }
  return 0;
}

static int known_fault(const char *name, size_t len, void *ctx) {
  char *err = ctx;
  if (io_fleet_gray_fault_find(name, len) != NULL) return 0;
  snprintf(err, 200, "flag --faults: unknown fault '%.*s' (known: %s)", (int)len, name,
           FLEET_GRAY_DEFAULT_FAULTS);
  return -1;
}

int io_fleet_gray_check(const fleet_args *a, char *err, size_t len) {
  char msg[200] = "";
  if (a == NULL || err == NULL) return -1;
  if (a->faults != NULL && each_item(a->faults, known_fault, msg) != 0) {
    snprintf(err, len, "%s", msg);
    return -1;
  }
  if (a->clients > GRAY_CLIENTS) {
    snprintf(err, len, "flag --clients: %ld is above the gray scenario's %d", a->clients,
             GRAY_CLIENTS);
    return -1;
  }
  if (a->calls > FLEET_GRAY_MAX_CALLS) {
    snprintf(err, len, "flag --calls: %ld is above the gray scenario's %d", a->calls,
             FLEET_GRAY_MAX_CALLS);
    return -1;
  }
  return 0;
}

/* --- one run --- */

typedef struct gray_plan {
  int clients;    /* 1..GRAY_CLIENTS (--clients; default GRAY_CLIENTS) */
  long calls;     /* over all clients */
  double fault_s;
  double total_s; /* WARM_S + fault_s + AFTER_S */
} gray_plan;

typedef struct gray_clients {
  proc *p[GRAY_CLIENTS];
  char log[GRAY_CLIENTS][4300];
} gray_clients;

/* Starts the four servers side by side; fills the clients' target and the
 * addresses their call logs name. */
static int start_servers(gray_fleet *g, const fleet_args *a, char *target, size_t tlen,
                         gray_servers *names) {
  names->n = GRAY_SERVERS;
  for (int i = 0; i < GRAY_SERVERS; i++) {
    fleet_server *s = &g->servers[i];
    char name[16];
    const char *extra[8];
    snprintf(name, sizeof(name), "s%d", i);
    io_fleet_gray_server_args(g, i, extra, 8);
    if (io_fleet_net_server_host(i, 0, s->host, sizeof(s->host)) != 0 ||
        io_fleet_server_spawn(a->server_bin, g->dir, name, 0, "", extra, s) != 0) {
      snprintf(g->error, sizeof(g->error), "server %s did not start (see %.100s)", name, g->dir);
      return -1;
    }
  }
  size_t at = (size_t)snprintf(target, tlen, "ipv4:");
  for (int i = 0; i < GRAY_SERVERS; i++) {
    fleet_server *s = &g->servers[i];
    if (io_fleet_server_await(s) != 0) {
      snprintf(g->error, sizeof(g->error), "server s%d did not listen (see %.100s)", i, g->dir);
      return -1;
    }
    snprintf(names->addrs[i], sizeof(names->addrs[i]), "%s:%d", s->host, s->port);
    at += (size_t)snprintf(target + at, at < tlen ? tlen - at : 0, "%s%s", i ? "," : "",
                           names->addrs[i]);
  }
  return at < tlen ? 0 : -1;
}

static int start_clients(gray_fleet *g, const fleet_args *a, const fleet_mode *m,
                         const gray_plan *plan, const char *target, gray_clients *cl) {
  char config[256], rate[32], duration[32], calls[32], conc[16];
  if (m->config) snprintf(config, sizeof(config), "%s", m->config);
  else
    snprintf(config, sizeof(config),
             "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"%s\",\"minAperture\":%d}}]}",
             m->name, MIN_APERTURE);
  const int n_clients = g->n_clients;
  long per_client = (plan->calls + n_clients - 1) / n_clients;
  snprintf(rate, sizeof(rate), "%.1f", (double)per_client / plan->total_s);
  snprintf(duration, sizeof(duration), "%.1f", plan->total_s + 10); /* a bound: --calls ends them */
  snprintf(calls, sizeof(calls), "%ld", per_client);
  snprintf(conc, sizeof(conc), "%d", CONCURRENCY);
  for (int c = 0; c < n_clients; c++) {
    char idx[16], cnt[16], summary[4300], log[4300], host[FLEET_NET_HOST_LEN];
    snprintf(idx, sizeof(idx), "%d", c);
    snprintf(cnt, sizeof(cnt), "%d", n_clients);
    snprintf(summary, sizeof(summary), "%s/client-%d.json", g->dir, c);
    snprintf(log, sizeof(log), "%s/client-%d.log", g->dir, c);
    snprintf(cl->log[c], sizeof(cl->log[c]), "%s/calls-%d.txt", g->dir, c);
    const char *extra[] = {"--timeout-ms", DEADLINE_MS_TEXT, "--calls", calls,
                           "--call-log", cl->log[c], NULL};
    if (io_fleet_net_client_host(c, host, sizeof(host)) != 0) return -1;
    fleet_client_opts o = {
        .bin = a->client_bin,
        .target = target,
        .service_config = config,
        .rate = rate,
        .duration_s = duration,
        .concurrency = conc,
        .linger_s = "0",
        .summary_file = summary,
        .peer_index = m->aperture ? idx : NULL,
        .peer_count = m->aperture ? cnt : NULL,
        .extra = extra,
        .host = host,
    };
    cl->p[c] = io_fleet_client_start(&o, log);
    if (cl->p[c] == NULL) {
      snprintf(g->error, sizeof(g->error), "client %d did not start", c);
      return -1;
    }
    g->client_pids[c] = io_proc_pid(cl->p[c]);
  }
  return 0;
}

/* The fault at its times while the clients run: begins WARM_S after they
 * started, ends fault_s later. Returns 0 when every client finished, -1
 * with g->error set. */
static int run_timeline(gray_fleet *g, const gray_fault *ft, const gray_plan *plan,
                        gray_clients *cl, gray_windows *w) {
  int64_t t0 = io_delay_queue_now_ns();
  int begun = 0, ended = 0, done[GRAY_CLIENTS] = {0}, n_done = 0;
  for (;;) {
    int64_t now = io_delay_queue_now_ns();
    double t = (double)(now - t0) / 1e9;
    if (!begun && t >= WARM_S) {
      w->fault_start_us = now / 1000;
      begun = 1;
      if (ft->begin(g) != 0) return -1;
    }
    if (begun && !ended &&
        (n_done == g->n_clients || now / 1000 >= w->fault_start_us + (int64_t)(plan->fault_s * 1e6))) {
      ended = 1;
      int rc = ft->end(g);
      w->heal_us = io_delay_queue_now_ns() / 1000;
      if (rc != 0) return -1;
    }
    for (int c = 0; c < g->n_clients; c++) {
      int status = 0;
      if (!done[c] && io_proc_wait(cl->p[c], 0, &status) == 0) {
        done[c] = 1;
        n_done++;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          snprintf(g->error, sizeof(g->error), "client %d failed (status %d, see %.100s)", c,
                   status, g->dir);
          return -1;
        }
      }
    }
    if (n_done == g->n_clients && ended) return 0;
    if (t > plan->total_s + 25) {
      snprintf(g->error, sizeof(g->error), "clients did not finish in time (see %.100s)", g->dir);
      return -1;
    }
    io_fleet_sleep_ms(10);
  }
}

/* Every exit path of a run: the fault undone first (a stopped server
 * resumed), then the clients and the servers stopped. */
static void stop_all(gray_fleet *g, const gray_fault *ft, gray_clients *cl, gray_row *row) {
  ft->cleanup(g);
  for (int i = 0; i < GRAY_SERVERS; i++) {
    if (g->servers[i].p) io_proc_signal(g->servers[i].p, SIGCONT);
  }
  if (g->resumed == 1) { /* still running (not stopped again) up to the end */
    char st = io_fleet_gray_proc_state(io_proc_pid(g->servers[g->faulty].p));
    if (st == 0 || st == 'T' || st == 't') g->resumed = 0;
  }
  row->resumed = g->resumed;
  for (int c = 0; c < GRAY_CLIENTS; c++) {
    if (cl->p[c]) io_proc_stop(cl->p[c], 5000);
    cl->p[c] = NULL;
  }
  for (int i = 0; i < GRAY_SERVERS; i++) {
    if (g->servers[i].p) io_proc_signal(g->servers[i].p, SIGTERM);
  }
  for (int i = 0; i < GRAY_SERVERS; i++) {
    if (g->servers[i].p) io_proc_stop(g->servers[i].p, 10000);
    g->servers[i].p = NULL;
  }
}

/* Reads the clients' call logs into g_calls; returns how many, or -1. */
static long read_call_logs(const gray_clients *cl, int n_clients, const gray_servers *names,
                           char *err, size_t len) {
  size_t n = 0, max = sizeof(g_calls) / sizeof(g_calls[0]);
  for (int c = 0; c < n_clients; c++) {
    FILE *f = fopen(cl->log[c], "r");
    if (f == NULL) {
      snprintf(err, len, "no call log %.150s", cl->log[c]);
      return -1;
    }
    char line[512];
    while (n < max && fgets(line, sizeof(line), f) != NULL) {
      if (io_fleet_gray_parse_line(names, line, &g_calls[n]) == 0) g_calls[n++].client = c;
    }
    fclose(f);
  }
  return (long)n;
}

static void run_one(const fleet_args *a, const char *no_answer_bin, const gray_fault *ft,
                    const fleet_mode *m, const gray_plan *plan, gray_row *row) {
  static gray_fleet g;
  static gray_clients cl;
  memset(&g, 0, sizeof(g));
  memset(&cl, 0, sizeof(cl));
  memset(row, 0, sizeof(*row));
  snprintf(row->mode, sizeof(row->mode), "%s", m->name);
  snprintf(row->fault, sizeof(row->fault), "%s", ft->name);
  row->fig.detect_ms = row->fig.recover_ms = -1;
  g.server_bin = a->server_bin;
  g.no_answer_bin = no_answer_bin;
  g.faulty = FAULTY;
  g.n_clients = plan->clients;
  g.resumed = -1;
  snprintf(g.dir, sizeof(g.dir), "%s/gray-%s-%s", a->out_dir, ft->name, m->name);
  mkdir(g.dir, 0755);
  char target[GRAY_SERVERS * 64 + 16];
  gray_servers names;
  memset(&names, 0, sizeof(names));
  /* fewer clients: the fault's among them (a partition of 1 client: client 0) */
  unsigned clients = ft->client_mask & ((1u << g.n_clients) - 1u);
  gray_windows w = {0, 0, FAULTY, GRAY_SERVERS, 200, 20, ft->faulty_mask, clients};
  int ok = start_servers(&g, a, target, sizeof(target), &names) == 0 &&
           start_clients(&g, a, m, plan, target, &cl) == 0 &&
           run_timeline(&g, ft, plan, &cl, &w) == 0;
  stop_all(&g, ft, &cl, row);
  if (!ok) {
    snprintf(row->error, sizeof(row->error), "%s", g.error[0] ? g.error : "run failed");
    return;
  }
  long n = read_call_logs(&cl, g.n_clients, &names, row->error, sizeof(row->error));
  if (n < 0) return;
  if (io_fleet_gray_figures(g_calls, (size_t)n, &w, &row->fig) != 0) {
    snprintf(row->error, sizeof(row->error), "no calls in the call logs (see %.100s)", g.dir);
    return;
  }
  row->complete = 1;
}

/* --- the scenario --- */

typedef struct mode_list {
  const fleet_mode *m[16];
  int n;
  int have_aperture;
} mode_list;

static int add_mode(const char *name, size_t len, void *ctx) {
  mode_list *ml = ctx;
  const fleet_mode *m = io_fleet_mode_find(name, len);
  if (m == NULL) {
    fprintf(stderr, "fleet: unknown mode '%.*s'\n", (int)len, name);
    return -1;
  }
  if (m->aperture && !ml->have_aperture) return 0;
  if (ml->n < 16) ml->m[ml->n++] = m;
  return 0;
}

typedef struct fault_list {
  const gray_fault *f[8];
  int n;
} fault_list;

static int add_fault(const char *name, size_t len, void *ctx) {
  fault_list *fl = ctx;
  const gray_fault *f = io_fleet_gray_fault_find(name, len);
  if (f == NULL) return -1;
  for (int i = 0; i < fl->n; i++) {
    if (fl->f[i] == f) return 0;
  }
  if (fl->n < 8) fl->f[fl->n++] = f;
  return 0;
}

int io_fleet_gray_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  if (a == NULL || out == NULL) return -1;
  gray_result *res = &g_result;
  memset(res, 0, sizeof(*res));
  out->rows = res;
  out->n_rows = 1;
  snprintf(res->network, sizeof(res->network), "%s", io_fleet_net_name());
  gray_plan plan;
  plan.clients = a->clients >= 1 && a->clients <= GRAY_CLIENTS ? (int)a->clients : GRAY_CLIENTS;
  plan.calls = a->calls > 0 ? a->calls : FLEET_GRAY_DEFAULT_CALLS;
  plan.fault_s = a->fault_s > 0 ? a->fault_s : FLEET_GRAY_DEFAULT_FAULT_S;
  plan.total_s = WARM_S + plan.fault_s + AFTER_S;
  res->calls = plan.calls;
  res->clients = plan.clients;
  res->fault_s = plan.fault_s;
  mode_list ml = {.n = 0, .have_aperture = a->have_aperture};
  fault_list fl = {.n = 0};
  if (each_item(a->modes ? a->modes : FLEET_GRAY_DEFAULT_MODES, add_mode, &ml) != 0 ||
      each_item(a->faults ? a->faults : FLEET_GRAY_DEFAULT_FAULTS, add_fault, &fl) != 0)
    return -1;
  /* no_answer sits beside the server binary (interop/testing) */
  char no_answer_bin[4200];
  snprintf(no_answer_bin, sizeof(no_answer_bin), "%s", a->server_bin);
  char *slash = strrchr(no_answer_bin, '/');
  snprintf(slash ? slash + 1 : no_answer_bin,
           sizeof(no_answer_bin) - (size_t)(slash ? slash + 1 - no_answer_bin : 0), "no_answer");
  int loopback = strcmp(io_fleet_net_name(), "loopback") == 0;
  int failed = 0;
  for (int f = 0; f < fl.n; f++) {
    const gray_fault *ft = fl.f[f];
    if (ft->netns_only && loopback) {
      if (res->n_skipped < MAX_SKIPPED) {
        snprintf(res->skipped[res->n_skipped].fault, sizeof(res->skipped[0].fault), "%s", ft->name);
        snprintf(res->skipped[res->n_skipped].reason, sizeof(res->skipped[0].reason),
                 "needs --network netns (network namespaces)");
        res->n_skipped++;
      }
      fprintf(stderr, "fleet: gray / %s skipped: needs --network netns\n", ft->name);
      continue;
    }
    for (int i = 0; i < ml.n && res->n_rows < MAX_ROWS; i++) {
      gray_row *row = &res->rows[res->n_rows++];
      fprintf(stderr, "fleet: gray / %s / %s ...\n", ft->name, ml.m[i]->name);
      run_one(a, no_answer_bin, ft, ml.m[i], &plan, row);
      if (!row->complete) {
        fprintf(stderr, "fleet: gray / %s / %s failed: %s\n", ft->name, ml.m[i]->name, row->error);
        failed = 1;
      }
    }
  }
  return failed ? -1 : 0;
}

/* --- the report --- */

static void json_ms(FILE *f, const char *key, double v) { fprintf(f, ",\"%s\":%.1f", key, v); }

static void write_row_json(FILE *f, const gray_row *r) {
  const gray_figures *x = &r->fig;
  fprintf(f, "{\"scenario\":\"gray\",\"mode\":\"%s\",\"fault\":\"%s\",\"calls\":%ld,\"failed\":%ld,"
             "\"failed_healthy\":%ld",
          r->mode, r->fault, x->calls, x->failed, x->failed_healthy);
  json_ms(f, "p99_ms", x->p99_ms);
  json_ms(f, "detect_ms", x->detect_ms);
  json_ms(f, "recover_ms", x->recover_ms);
  fprintf(f, ",\"ok\":%ld,\"failed_faulty\":%ld,\"failed_unattributed\":%ld,\"by_code\":{", x->ok,
          x->failed_faulty, x->failed_unattributed);
  int first = 1;
  for (int c = 0; c <= 16; c++) {
    if (x->by_code[c] == 0) continue;
    fprintf(f, "%s\"%d\":%ld", first ? "" : ",", c, x->by_code[c]);
    first = 0;
  }
  fputc('}', f);
  json_ms(f, "p50_ms", x->p50_ms);
  json_ms(f, "p999_ms", x->p999_ms);
  fprintf(f, ",\"relapses\":%ld,\"share_during\":%.4f,\"share_after\":%.4f", x->relapses,
          x->share_during, x->share_after);
  fprintf(f, ",\"inflight_at_fault\":%ld,\"failed_budget\":%ld,\"within_budget\":%s",
          x->inflight_at_fault, x->failed_budget, x->failed <= x->failed_budget ? "true" : "false");
  if (r->resumed >= 0) fprintf(f, ",\"resumed\":%s", r->resumed ? "true" : "false");
  fprintf(f, ",\"complete\":%s", r->complete ? "true" : "false");
  if (!r->complete) {
    fprintf(f, ",\"error\":");
    ap_json_write_string(f, r->error);
  }
  fputc('}', f);
}

void io_fleet_gray_write_json(FILE *f, const fleet_output *out) {
  const gray_result *res = out && out->n_rows == 1 ? out->rows : NULL;
  if (res == NULL) {
    fprintf(f, "{\"scenario\":\"gray\",\"runs\":[],\"skipped\":[]}\n");
    return;
  }
  fprintf(f,
          "{\"scenario\":\"gray\",\"network\":\"%s\",\"servers\":%d,\"clients\":%d,"
          "\"concurrency\":%d,\"deadline_ms\":%d,\"min_aperture\":%d,\"calls_per_run\":%ld,"
          "\"fault_at_s\":%.1f,\"fault_s\":%.1f,\"after_s\":%.1f,\"runs\":[",
          res->network, GRAY_SERVERS, res->clients, CONCURRENCY, DEADLINE_MS, MIN_APERTURE,
          res->calls, WARM_S, res->fault_s, AFTER_S);
  for (int i = 0; i < res->n_rows; i++) {
    fprintf(f, "%s\n", i ? "," : "");
    write_row_json(f, &res->rows[i]);
  }
  fprintf(f, "],\"skipped\":[");
  for (int i = 0; i < res->n_skipped; i++) {
    fprintf(f, "%s{\"fault\":\"%s\",\"reason\":\"%s\"}", i ? "," : "", res->skipped[i].fault,
            res->skipped[i].reason);
  }
  fprintf(f, "]}\n");
}

void io_fleet_gray_write_table(FILE *f, const fleet_output *out) {
  const gray_result *res = out && out->n_rows == 1 ? out->rows : NULL;
  if (res == NULL) return;
  fprintf(f,
          "gray: %d servers, %d clients x %d in flight, %d ms deadlines, %ld calls per run,\n"
          "      fault on s%d at %.1f s for %.1f s, %.1f s after (network %s)\n",
          GRAY_SERVERS, res->clients, CONCURRENCY, DEADLINE_MS, res->calls, FAULTY, WARM_S,
          res->fault_s, AFTER_S, res->network);
  fprintf(f, "%-10s %-11s %7s %6s %6s %8s %7s %7s %7s %7s %8s %9s %10s %6s %6s\n", "fault",
          "mode", "calls", "failed", "budget", "healthy", "faulty", "unattr", "p50_ms", "p99_ms",
          "p999_ms", "detect_ms", "recover_ms", "share", "after");
  for (int i = 0; i < res->n_rows; i++) {
    const gray_row *r = &res->rows[i];
    const gray_figures *x = &r->fig;
    if (!r->complete) {
      fprintf(f, "%-10s %-11s failed: %s\n", r->fault, r->mode, r->error);
      continue;
    }
    fprintf(f, "%-10s %-11s %7ld %6ld %6ld %8ld %7ld %7ld %7.1f %7.1f %8.1f %9.0f %10.0f %6.3f %6.3f\n",
            r->fault, r->mode, x->calls, x->failed, x->failed_budget, x->failed_healthy, x->failed_faulty,
            x->failed_unattributed, x->p50_ms, x->p99_ms, x->p999_ms, x->detect_ms, x->recover_ms,
            x->share_during, x->share_after);
  }
  for (int i = 0; i < res->n_skipped; i++) {
    fprintf(f, "%-10s skipped: %s\n", res->skipped[i].fault, res->skipped[i].reason);
  }
  fprintf(f, "budget: calls in flight to the faulty server(s) when the fault began + 0.1%% of the "
             "calls;\nhealthy/faulty/unattr: failed calls on a healthy server, on s%d, on no server gRPC "
             "named;\nshare/after: s%d's share of the calls started during the fault / after it\n",
          FAULTY, FAULTY);
}
