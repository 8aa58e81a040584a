/* One mode of a timeline scenario (see fleet_timeline.h): start the
 * servers and the clients, run the hooks until every client is done, stop
 * everything, then read the servers' stats files and the clients'
 * summaries into the run's figures. */
#define _GNU_SOURCE
#include "interop/fleet/fleet_timeline.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interop/common/json_read.h"
#include "interop/common/latency_hist.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_summary.h"

#define MAX_CLIENTS FLEET_TIMELINE_MAX_CLIENTS

/* The clients of a run (the hooks do not see them). */
typedef struct run_clients {
  int n;
  proc *p[MAX_CLIENTS];
  char summary[MAX_CLIENTS][4300];
  int service[MAX_CLIENTS];
} run_clients;

/* The scenario with the flags applied; the hooks' times scale by the
 * returned factor as the run's duration does. */
static double with_flags(const fleet_timeline *base, const fleet_args *a, fleet_timeline *sc) {
  *sc = *base;
  double scale = 1;
  if (a->servers > 0) sc->servers = (int)a->servers;
  if (a->clients > 0) {
    for (int s = 0; s < sc->n_services; s++) sc->service_clients[s] = (int)a->clients;
  }
  if (a->rate > 0) sc->rate = a->rate;
  if (a->duration_s > 0) {
    scale = a->duration_s / sc->duration_s;
    sc->duration_s = a->duration_s;
  }
  if (a->concurrency > 0) sc->concurrency = a->concurrency;
  if (a->grace_ms >= 0) sc->grace_ms = a->grace_ms;
  if (a->min_aperture > 0) sc->min_aperture = a->min_aperture;
  return scale;
}

/* Spawns server slot i on `port` (0: ephemeral) without waiting for it to
 * listen. */
static int spawn_server(fleet_timeline_fleet *f, int i, int port, const char *suffix) {
  char name[32];
  snprintf(name, sizeof(name), "s%d", i);
  const char *extra[FLEET_TIMELINE_MAX_ARGS + 1];
  int n = 0;
  const fleet_timeline_hooks *h = f->sc->hooks;
  if (h != NULL && h->server_args != NULL) n = h->server_args(f, i, extra);
  if (n < 0 || n > FLEET_TIMELINE_MAX_ARGS) n = 0; /* a hook's mistake: no extras */
  extra[n] = NULL;
  fleet_timeline_server *sv = &f->servers[i];
  int rc = io_fleet_server_spawn(f->a->server_bin, f->dir, name, port, suffix, extra, &sv->s);
  sv->s.port = port;
  return rc;
}

int io_fleet_timeline_start_server(fleet_timeline_fleet *f, int i, int port,
                                   const char *suffix) {
  if (f == NULL || i < 0 || i >= f->n_slots) return -1;
  if (spawn_server(f, i, port, suffix) != 0) return -1;
  return io_fleet_server_await(&f->servers[i].s);
}

/* A server's figures for the report: what its stats file says plus what
 * its earlier instances answered. */
static void read_server_stats(const fleet_timeline_server *sv, fleet_server_result *out) {
  char err[128];
  json_value *v = io_json_parse_file(sv->s.stats, err, sizeof(err));
  long calls = 0, peak = 0, opened = 0;
  if (v) {
    calls = (long)io_json_get_number(v, "calls", 0);
    peak = (long)io_json_get_number(v, "connections_peak", 0);
    opened = (long)io_json_get_number(v, "connections_opened", 0);
    io_json_free(v);
  }
  out->calls = sv->calls_before + calls;
  out->connections_peak = peak > sv->conns_peak_before ? peak : sv->conns_peak_before;
  out->connections_opened = sv->conns_opened_before + opened;
}

/* What instance ended answered, carried over to the next one. */
static void keep_figures(fleet_timeline_server *sv) {
  fleet_server_result before;
  read_server_stats(sv, &before);
  sv->calls_before = before.calls;
  sv->conns_peak_before = before.connections_peak;
  sv->conns_opened_before = before.connections_opened;
}

void io_fleet_timeline_down(fleet_timeline_fleet *f, int i, int kill) {
  if (f == NULL || i < 0 || i >= f->n_slots) return;
  fleet_timeline_server *sv = &f->servers[i];
  if (kill) {
    keep_figures(sv); /* no final stats after SIGKILL: the last snapshot */
    io_proc_signal(sv->s.p, SIGKILL);
    io_proc_stop(sv->s.p, 1000);
    sv->s.p = NULL;
  } else {
    io_proc_stop(sv->s.p, 5000);
    sv->s.p = NULL;
    keep_figures(sv);
  }
}

long io_fleet_timeline_calls(const fleet_timeline_fleet *f, int i) {
  if (f == NULL || i < 0 || i >= f->n_slots) return 0;
  char err[128];
  json_value *v = io_json_parse_file(f->servers[i].s.stats, err, sizeof(err));
  long calls = v ? (long)io_json_get_number(v, "calls", 0) : 0;
  io_json_free(v);
  return calls;
}

int io_fleet_timeline_publish(fleet_timeline_fleet *f, int from, int to, int except) {
  if (f == NULL || f->dns == NULL || from < 0 || to > f->n_slots || from > to) return -1;
  const char *hosts[FLEET_TIMELINE_MAX_SLOTS];
  size_t m = 0;
  for (int i = from; i < to; i++) {
    if (i != except) hosts[m++] = f->servers[i].s.host;
  }
  return io_fleet_dns_set(f->dns, hosts, m);
}

/* Starts the servers, s0 first (its port is the shared one with DNS),
 * then the rest side by side: one by one dominated a short run. Writes
 * the clients' target. */
static int start_servers(fleet_timeline_fleet *f, char *target, size_t target_len) {
  fleet_run *r = f->r;
  for (int i = 0; i < f->n_slots; i++) {
    fleet_server *s = &f->servers[i].s;
    io_fleet_net_server_host(i, f->sc->dns, s->host, sizeof(s->host));
  }
  int ok = 1;
  if (io_fleet_timeline_start_server(f, 0, 0, "") != 0) {
    snprintf(r->error, sizeof(r->error), "server s0 did not start (see %.100s)", f->dir);
    ok = 0;
  }
  if (f->sc->dns) f->port = f->servers[0].s.port;
  for (int i = 1; i < f->n_servers && ok; i++) {
    if (spawn_server(f, i, f->port, "") != 0) ok = 0;
  }
  for (int i = 1; i < f->n_servers && ok; i++) {
    if (io_fleet_server_await(&f->servers[i].s) != 0) ok = 0;
  }
  if (!ok && r->error[0] == '\0') {
    snprintf(r->error, sizeof(r->error), "a server did not start (see %.100s)", f->dir);
  }
  for (int i = f->n_servers; i < f->n_slots; i++) f->servers[i].s.port = f->port;
  if (!ok) return -1;
  if (f->sc->dns) {
    f->dns = io_fleet_dns_start("fleet.test");
    if (f->dns == NULL || io_fleet_timeline_publish(f, 0, f->n_servers, -1) != 0 ||
        io_fleet_dns_target(f->dns, f->port, target, target_len) != 0) {
      snprintf(r->error, sizeof(r->error), "cannot start the DNS server (dnsmasq; see the runner's stderr)");
      return -1;
    }
    return 0;
  }
  size_t at = (size_t)snprintf(target, target_len, "ipv4:");
  for (int i = 0; i < f->n_servers && at < target_len; i++) {
    const fleet_server *s = &f->servers[i].s;
    at += (size_t)snprintf(target + at, target_len - at, "%s%s:%d", i ? "," : "", s->host, s->port);
  }
  return 0;
}

/* The mode's service config: gRPC's fixed one, or aperture's with the
 * scenario's minAperture (and removalGraceMs and pickMetric when set). */
static void service_config(const fleet_timeline_fleet *f, char *out, size_t len) {
  if (f->mode->config) {
    snprintf(out, len, "%s", f->mode->config);
    return;
  }
  char grace[48] = "";
  if (f->sc->grace_ms > 0) snprintf(grace, sizeof(grace), ",\"removalGraceMs\":%ld", f->sc->grace_ms);
  char metric[48] = "";
  if (f->sc->pick_metric != NULL) {
    snprintf(metric, sizeof(metric), ",\"pickMetric\":\"%.24s\"", f->sc->pick_metric);
  }
  snprintf(out, len,
           "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"%s\",\"minAperture\":%ld%s%s%.64s}}]}",
           f->mode->name, f->sc->min_aperture, grace, metric,
           f->sc->extra_config ? f->sc->extra_config : "");
}

static int start_clients(fleet_timeline_fleet *f, const char *target, run_clients *cl) {
  const fleet_timeline *sc = f->sc;
  char config[256], rate_s[32], dur_s[32], conc_s[32], backoff_s[32];
  service_config(f, config, sizeof(config));
  snprintf(rate_s, sizeof(rate_s), "%g", sc->rate);
  snprintf(dur_s, sizeof(dur_s), "%g", sc->duration_s);
  snprintf(conc_s, sizeof(conc_s), "%ld", sc->concurrency);
  snprintf(backoff_s, sizeof(backoff_s), "%ld", sc->max_backoff_ms);
  for (int s = 0; s < sc->n_services; s++) {
    for (int c = 0; c < sc->service_clients[s] && cl->n < MAX_CLIENTS; c++) {
      char idx[16], cnt[16], log[4300];
      snprintf(idx, sizeof(idx), "%d", c);
      snprintf(cnt, sizeof(cnt), "%d", sc->service_clients[s]);
      snprintf(cl->summary[cl->n], sizeof(cl->summary[0]), "%s/client-%d-%d.json", f->dir, s, c);
      snprintf(log, sizeof(log), "%s/client-%d-%d.log", f->dir, s, c);
      char own_rate[32], own_conc[32];
      if (sc->hooks != NULL && sc->hooks->client_load != NULL) {
        double rate = sc->rate;
        long conc = sc->concurrency;
        sc->hooks->client_load(f, cl->n, &rate, &conc);
        snprintf(own_rate, sizeof(own_rate), "%g", rate);
        snprintf(own_conc, sizeof(own_conc), "%ld", conc);
      } else {
        snprintf(own_rate, sizeof(own_rate), "%s", rate_s);
        snprintf(own_conc, sizeof(own_conc), "%s", conc_s);
      }
      fleet_client_opts co = {
          .bin = f->a->client_bin,
          .target = target,
          .service_config = config,
          .rate = own_rate,
          .duration_s = dur_s,
          .concurrency = own_conc,
          .linger_s = "0.3",
          .summary_file = cl->summary[cl->n],
          .peer_index = f->mode->aperture ? idx : NULL,
          .peer_count = f->mode->aperture ? cnt : NULL,
          .max_backoff_ms = sc->max_backoff_ms > 0 ? backoff_s : NULL,
          .dns_min_interval_ms = sc->dns ? "100" : NULL,
      };
      cl->p[cl->n] = io_fleet_client_start(&co, log);
      if (cl->p[cl->n] == NULL) {
        snprintf(f->r->error, sizeof(f->r->error), "client %d/%d did not start", s, c);
        return -1;
      }
      cl->service[cl->n++] = s;
    }
  }
  return 0;
}

/* The hooks at their times, until every client is done. */
static int run_until_done(fleet_timeline_fleet *f, run_clients *cl) {
  const fleet_timeline_hooks *h = f->sc->hooks;
  double t0 = io_fleet_now_ms() / 1e3;
  int done[MAX_CLIENTS] = {0};
  int n_done = 0;
  while (n_done < cl->n) {
    double t = io_fleet_now_ms() / 1e3 - t0;
    if (t > f->sc->duration_s + 30) {
      snprintf(f->r->error, sizeof(f->r->error), "clients did not finish in time (see %.100s)",
               f->dir);
      return -1;
    }
    if (h != NULL && h->tick != NULL && h->tick(f, f->state, t) != 0) return -1;
    for (int c = 0; c < cl->n; c++) {
      if (!done[c] && io_proc_wait(cl->p[c], 0, NULL) == 0) {
        done[c] = 1;
        n_done++;
      }
    }
    io_fleet_sleep_ms(20);
  }
  if (h != NULL && h->end != NULL) h->end(f, f->state);
  return 0;
}

static void stop_all(fleet_timeline_fleet *f, run_clients *cl) {
  for (int c = 0; c < cl->n; c++) io_proc_stop(cl->p[c], 5000);
  for (int i = 0; i < f->n_slots; i++) { /* all shut down at once */
    if (f->servers[i].s.p) io_proc_signal(f->servers[i].s.p, SIGTERM);
  }
  for (int i = 0; i < f->n_slots; i++) {
    if (f->servers[i].s.p) io_proc_stop(f->servers[i].s.p, 10000);
    f->servers[i].s.p = NULL;
  }
  if (f->dns != NULL) {
    f->r->dns_queries = io_fleet_dns_queries(f->dns);
    io_fleet_dns_stop(f->dns);
    f->dns = NULL;
  }
}

/* Per-server figures; the balance figures are over the servers that were
 * up the whole run. */
static void server_figures(fleet_timeline_fleet *f) {
  fleet_run *r = f->r;
  const fleet_timeline_hooks *h = f->sc->hooks;
  r->n_servers = f->n_slots;
  double calls[FLEET_TIMELINE_MAX_SLOTS], conns[FLEET_TIMELINE_MAX_SLOTS];
  int n_steady = 0;
  for (int i = 0; i < f->n_slots; i++) {
    fleet_server_result *sv = &r->servers[i];
    snprintf(sv->name, sizeof(sv->name), "s%d", i);
    read_server_stats(&f->servers[i], sv);
    if (h != NULL && h->mark != NULL) h->mark(f, i, sv);
    r->connections_total += sv->connections_peak;
    r->connections_opened += sv->connections_opened;
    if (!sv->killed && !sv->removed && !sv->added) {
      calls[n_steady] = (double)sv->calls;
      conns[n_steady] = (double)sv->connections_peak;
      n_steady++;
    }
  }
  r->calls = io_fleet_spread_of(calls, n_steady);
  r->fair_max_mean = io_fleet_fair_max_mean(n_steady, (long)(r->calls.mean * n_steady + 0.5));
  r->connections = io_fleet_spread_of(conns, n_steady);
}

/* Calls, codes, latencies and per-service spreads from the clients'
 * summaries. Returns 0, or -1 when one is missing. */
static int client_figures(fleet_timeline_fleet *f, const run_clients *cl) {
  fleet_run *r = f->r;
  static latency_hist hist;
  io_latency_hist_reset(&hist);
  char disturbed_addr[64] = "";
  if (f->disturbed >= 0) {
    const fleet_server *d = &f->servers[f->disturbed].s;
    snprintf(disturbed_addr, sizeof(disturbed_addr), "ipv4:%s:%d", d->host, d->port);
  }
  long service_server_calls[FLEET_MAX_SERVICES][FLEET_TIMELINE_MAX_SLOTS];
  memset(service_server_calls, 0, sizeof(service_server_calls));
  r->n_services = f->sc->n_services;
  for (int s = 0; s < f->sc->n_services; s++) {
    snprintf(r->services[s].name, sizeof(r->services[s].name), "svc%d", s);
    r->services[s].clients = f->sc->service_clients[s];
  }
  for (int c = 0; c < cl->n; c++) {
    char err[160];
    json_value *v = io_json_parse_file(cl->summary[c], err, sizeof(err));
    if (v == NULL) {
      snprintf(r->error, sizeof(r->error), "client summary %.80s: %.60s", cl->summary[c], err);
      return -1;
    }
    long okc = (long)io_json_get_number(v, "ok", 0), failc = (long)io_json_get_number(v, "failed", 0);
    r->ok += okc;
    r->failed += failc;
    r->qps += io_json_get_number(v, "qps", 0); /* each client's own rate of finished calls */
    r->services[cl->service[c]].ok += okc;
    r->services[cl->service[c]].failed += failc;
    const json_value *codes = io_json_get(v, "by_code");
    for (size_t i = 0; i < io_json_size(codes); i++) {
      int code = atoi(io_json_key_at(codes, i));
      if (code >= 0 && code <= 16) r->by_code[code] += (long)io_json_number(io_json_at(codes, i), 0);
    }
    const json_value *fa = io_json_get(v, "failed_addresses");
    for (size_t i = 0; disturbed_addr[0] && i < io_json_size(fa); i++) {
      if (strcmp(io_json_key_at(fa, i), disturbed_addr) == 0) {
        r->failed_on_disturbed += (long)io_json_number(io_json_at(fa, i), 0);
      }
    }
    const json_value *hv = io_json_get(v, "latency_hist");
    for (size_t i = 0; i < io_json_size(hv); i++) {
      const json_value *pair = io_json_at(hv, i);
      io_latency_hist_record_n(&hist, (uint64_t)io_json_number(io_json_at(pair, 0), 0),
                               (uint64_t)io_json_number(io_json_at(pair, 1), 0));
    }
    const json_value *peers = io_json_get(v, "peers");
    for (size_t i = 0; i < io_json_size(peers); i++) {
      const char *name = io_json_key_at(peers, i);
      int idx = (name[0] == 's') ? atoi(name + 1) : -1;
      if (idx >= 0 && idx < f->n_slots) {
        service_server_calls[cl->service[c]][idx] += (long)io_json_number(io_json_at(peers, i), 0);
      }
    }
    io_json_free(v);
  }
  for (int s = 0; s < f->sc->n_services; s++) {
    double v[FLEET_TIMELINE_MAX_SLOTS];
    int n = 0;
    long used = 0;
    for (int i = 0; i < f->n_slots; i++) {
      if (service_server_calls[s][i] > 0) {
        v[n++] = (double)service_server_calls[s][i];
        used++;
      }
    }
    /* over the servers this service used: how evenly it spreads its own load */
    r->services[s].calls_max_mean = io_fleet_spread_of(v, n).max_mean;
    r->services[s].servers_used = used;
  }
  r->p50_us = io_latency_hist_quantile(&hist, 0.5);
  r->p99_us = io_latency_hist_quantile(&hist, 0.99);
  r->p999_us = io_latency_hist_quantile(&hist, 0.999);
  return 0;
}

int io_fleet_timeline_run_mode(const fleet_timeline *base, const fleet_args *a,
                               const fleet_mode *m, fleet_run *r) {
  if (base == NULL || a == NULL || m == NULL || r == NULL) return -1;
  memset(r, 0, sizeof(*r));
  static fleet_timeline sc;
  static fleet_timeline_fleet f; /* large: not on the stack */
  static run_clients cl;
  memset(&f, 0, sizeof(f));
  memset(&cl, 0, sizeof(cl));
  f.time_scale = with_flags(base, a, &sc);
  f.sc = &sc;
  f.a = a;
  f.mode = m;
  f.r = r;
  f.disturbed = -1;
  f.n_servers = sc.servers;
  f.n_slots = sc.servers + sc.spares;
  snprintf(r->scenario, sizeof(r->scenario), "%s", sc.name);
  snprintf(r->mode, sizeof(r->mode), "%s", m->name);
  r->slow_share = -1;
  r->recover_s = -1;
  r->duration_s = sc.duration_s;
  r->grace_ms = m->aperture ? sc.grace_ms : 0;
  r->min_aperture = m->aperture ? sc.min_aperture : 0;
  if (f.n_slots > FLEET_TIMELINE_MAX_SLOTS) {
    snprintf(r->error, sizeof(r->error), "too many servers");
    return -1;
  }
  const char *label = sc.label != NULL ? sc.label : sc.pick_metric;
  snprintf(f.dir, sizeof(f.dir), "%s/%s-%s%s%.24s", a->out_dir, sc.name, m->name,
           label ? "-" : "", label ? label : "");
  mkdir(f.dir, 0755);
  const fleet_timeline_hooks *h = sc.hooks;
  if (h != NULL && h->state_size > 0 && (f.state = calloc(1, h->state_size)) == NULL) {
    snprintf(r->error, sizeof(r->error), "out of memory");
    return -1;
  }
  char target[FLEET_MAX_SERVERS * 24 + 64];
  int ok = start_servers(&f, target, sizeof(target)) == 0 && start_clients(&f, target, &cl) == 0 &&
           run_until_done(&f, &cl) == 0;
  stop_all(&f, &cl);
  free(f.state);
  f.state = NULL;
  if (!ok) return -1;
  server_figures(&f);
  if (client_figures(&f, &cl) != 0) return -1;
  if (h != NULL && h->figures != NULL) h->figures(&f);
  r->fair_share = 1.0 / f.n_slots;
  r->complete = 1;
  return 0;
}
