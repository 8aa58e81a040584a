/* Fleet runner: starts N interop servers and S client services of M
 * clients as separate processes on 127.0.0.1, runs a scenario once per LB
 * mode, collects the servers' stats files and the clients' summaries, and
 * prints a report (table, or JSON with --json) plus an SVG chart.
 *
 *   fleet [--scenario balance|multi-service|slow-backend|kill|churn|restart|remove|throughput|churn-grid|peers|xds|deploy|affinity|soak|all]
 *         [--modes m1,m2,...] [--servers N] [--clients M] [--rate QPS]
 *         [--duration-s S] [--concurrency K] [--min-aperture A] [--grace-ms G] [--json]
 *         [--points N:C:A,...] [--affinity sticky,hash] [--svg PATH] [--out-dir DIR]
 *
 * With no --scenario: the default run (kDefaultRun): balance and
 * multi-service for smooth, continuous (random too in multi-service) and
 * round_robin, at enough calls per server that sampling noise is ~2%, with
 * a closing summary; without the aperture policy linked, round_robin only.
 * churn-grid (fleet_churn.h) measures one removal and one addition per
 * (N, C, A) point of --points and mode, beside the core's prediction.
 * xds (fleet_xds.h) is churn-grid with the endpoints from EDS; deploy
 * (fleet_deploy.h) replaces every server in turn by one at a new address
 * (--servers, --clients, --min-aperture, --rate); affinity
 * (fleet_affinity.h) reports which servers served each key.
 * soak (fleet_soak.h) is a bounded run with kills, flaps, a status loop and
 * a sticky-key flood; --duration-s sets its length (default 300 s) and
 * --rss-bound-kib its memory bound; it is not part of `all`.
 * The JSON report is also written to <out-dir>/report.json.
 * Every child runs in its own process group and dies with the runner;
 * SIGINT/SIGTERM and every exit path stop them all.
 * Exit status: 0 when every run completed, 1 when one failed, 2 on a usage
 * error (a bad flag or value, an unknown scenario or mode), found before
 * any process starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "interop/common/delay_queue.h"
#include "interop/common/flags.h"
#include "interop/fleet/fleet_affinity.h"
#include "interop/fleet/fleet_churn.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_deploy.h"
#include "interop/fleet/fleet_dns.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_peers.h"
#include "interop/fleet/fleet_report.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_server.h"
#include "interop/fleet/fleet_soak.h"
#include "interop/fleet/fleet_summary.h"
#include "interop/fleet/fleet_xds.h"
#include "interop/common/json_read.h"
#include "interop/common/latency_hist.h"
#include "interop/common/proc.h"

#define MAX_CLIENTS 64
#define MAX_RUNS 64

typedef struct mode_def {
  const char *name;
  const char *config; /* service config JSON */
  int aperture;       /* needs the aperture policy and a coordinate */
} mode_def;

/* Aperture modes get {"aperture":{"mode":NAME,"minAperture":A}} built per
 * scenario; the others use their fixed config. */
static const mode_def kModes[] = {
    {"continuous", NULL, 1},
    {"discrete", NULL, 1},
    {"random", NULL, 1},
    {"vdc", NULL, 1},
    {"smooth", NULL, 1},
    {"mesh", NULL, 1},
    {"stable", NULL, 1},
    {"round_robin", "{\"loadBalancingConfig\":[{\"round_robin\":{}}]}", 0},
    {"pick_first", "{\"loadBalancingConfig\":[{\"pick_first\":{}}]}", 0},
};
#define N_MODES ((int)(sizeof(kModes) / sizeof(kModes[0])))

typedef struct scenario_cfg {
  const char *name;
  int servers;
  int n_services;
  int service_clients[FLEET_MAX_SERVICES];
  double rate;        /* calls/s per client */
  double duration_s;  /* traffic time per mode */
  long concurrency;   /* per client */
  int slow_server;    /* NO_SERVER: none */
  long slow_latency_ms;
  int kill_server;    /* NO_SERVER: none */
  double kill_at_s, restart_at_s;
  int churn;          /* remove s0 and add a spare server mid-run */
  double churn_at_s;
  long max_backoff_ms;
  const char *default_modes; /* comma separated; filtered by availability */
  long min_aperture;         /* aperture's minAperture (12 = the library default) */
  /* bounce: at churn_at_s server s1 leaves the DNS answer and is stopped
   * (SIGTERM: GOAWAY, so every client re-resolves); BOUNCE_RESTART brings
   * it back at the same address bounce_back_s later, BOUNCE_REMOVE never.
   * No connection recycling, so connections opened/closed on the servers
   * that stayed are the sessions the change moved. */
  int bounce;
  double bounce_back_s;
  long grace_ms;             /* aperture's removalGraceMs (0: not set) */
} scenario_cfg;

enum { BOUNCE_NONE = 0, BOUNCE_RESTART = 1, BOUNCE_REMOVE = 2 };

enum { NO_SERVER = -1 }; /* slow_server / kill_server: none */

static const scenario_cfg kScenarios[] = {
    {.name = "balance", .servers = 10, .n_services = 1, .service_clients = {4},
     .rate = 100, .duration_s = 3, .concurrency = 4,
     .slow_server = NO_SERVER, .kill_server = NO_SERVER,
     .default_modes = "smooth,continuous,discrete,random,vdc,mesh,round_robin,pick_first",
     .min_aperture = 2},
    {.name = "multi-service", .servers = 10, .n_services = 3, .service_clients = {2, 3, 5},
     .rate = 60, .duration_s = 3, .concurrency = 4,
     .slow_server = NO_SERVER, .kill_server = NO_SERVER,
     .default_modes = "smooth,continuous,discrete,random,vdc,mesh,round_robin",
     .min_aperture = 2},
    /* aperture over every server, so P2C alone decides the slow one's share */
    {.name = "slow-backend", .servers = 6, .n_services = 1, .service_clients = {3},
     .rate = 150, .duration_s = 3, .concurrency = 16,
     .slow_server = 0, .slow_latency_ms = 40, .kill_server = NO_SERVER,
     .default_modes = "continuous,round_robin", .min_aperture = 12},
    {.name = "kill", .servers = 5, .n_services = 1, .service_clients = {3},
     .rate = 100, .duration_s = 5, .concurrency = 4,
     .slow_server = NO_SERVER, .kill_server = 1, .kill_at_s = 1.0, .restart_at_s = 2.5,
     .max_backoff_ms = 500, .default_modes = "continuous,round_robin", .min_aperture = 2},
    {.name = "churn", .servers = 5, .n_services = 1, .service_clients = {3},
     .rate = 100, .duration_s = 4, .concurrency = 4,
     .slow_server = NO_SERVER, .kill_server = NO_SERVER, .churn = 1, .churn_at_s = 1.5,
     .max_backoff_ms = 500, .default_modes = "continuous,round_robin", .min_aperture = 2},
    {.name = "restart", .servers = 6, .n_services = 1, .service_clients = {5},
     .rate = 100, .duration_s = 4, .concurrency = 4,
     .slow_server = NO_SERVER, .kill_server = NO_SERVER, .churn_at_s = 1.0,
     .max_backoff_ms = 500, .default_modes = "continuous,smooth", .min_aperture = 2,
     .bounce = BOUNCE_RESTART, .bounce_back_s = 1.0, .grace_ms = 5000},
    {.name = "remove", .servers = 13, .n_services = 1, .service_clients = {7},
     .rate = 60, .duration_s = 4, .concurrency = 4,
     .slow_server = NO_SERVER, .kill_server = NO_SERVER, .churn_at_s = 1.0,
     .max_backoff_ms = 500,
     .default_modes = "continuous,smooth,discrete,random,vdc,round_robin",
     .min_aperture = 3, .bounce = BOUNCE_REMOVE},
    /* benchmark: unpaced (rate 0 = as fast as the concurrency allows) */
    {.name = "throughput", .servers = 6, .n_services = 1, .service_clients = {2},
     .rate = 0, .duration_s = 3, .concurrency = 32,
     .slow_server = NO_SERVER, .kill_server = NO_SERVER,
     .default_modes = "continuous,round_robin", .min_aperture = 3},
};
#define N_SCENARIOS ((int)(sizeof(kScenarios) / sizeof(kScenarios[0])))

/* The run with no --scenario: what aperture is for, beside round_robin.
 * One service (connections: a fraction of round_robin's, load as even),
 * then three services sharing the servers (where subsetting modes differ
 * most; random subsetting for contrast). Enough calls per server that a
 * fair random balancer's busiest server is ~2% above the mean, paced below
 * what a 2-core machine serves so that the balancers, not the CPU, decide;
 * about a minute in all. Flags override these as for any scenario. */
typedef struct default_step {
  const char *scenario;
  const char *modes;
  double rate;       /* calls/s per client */
  double duration_s; /* per mode */
  long concurrency;  /* per client */
} default_step;

static const default_step kDefaultRun[] = {
    {"balance", "smooth,continuous,round_robin", 1500, 5, 8},
    {"multi-service", "smooth,continuous,random,round_robin", 600, 5, 8},
};
#define N_DEFAULT_STEPS ((int)(sizeof(kDefaultRun) / sizeof(kDefaultRun[0])))

typedef struct runner {
  char server_bin[4096];
  char client_bin[4096];
  char out_dir[4096];
  int have_aperture;
  int json;
  const char *svg_path;
  const char *modes; /* NULL: scenario defaults */
  long servers, clients, concurrency, min_aperture; /* 0: scenario default */
  double rate, duration_s;           /* 0: scenario default */
  long grace_ms;                     /* -1: scenario default */
  long rss_bound_kib;                /* soak: 0 = its default */
} runner;

static void on_signal(int sig) {
  io_proc_kill_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

static double now_s(void) { return (double)io_delay_queue_now_ns() / 1e9; }

static const mode_def *find_mode(const char *name, size_t len) {
  for (int i = 0; i < N_MODES; i++) {
    if (strlen(kModes[i].name) == len && strncmp(kModes[i].name, name, len) == 0) return &kModes[i];
  }
  return NULL;
}

/* A server process of a run. */
typedef struct server_slot {
  proc *p;
  char host[32];
  int port;
  char stats[4200];
  long calls_before;       /* calls answered by an earlier (killed) instance */
  long conns_peak_before;
  long conns_opened_before;
} server_slot;

/* Spawns server i on slot->host:port (port 0 = ephemeral) without waiting
 * for it to listen (await_server). */
static int spawn_server(const runner *rn, const scenario_cfg *sc, const char *dir, int i,
                        int port, const char *stats_suffix, server_slot *slot) {
  char name[32], lat[16];
  snprintf(name, sizeof(name), "s%d", i);
  snprintf(lat, sizeof(lat), "%ld", sc->slow_latency_ms);
  const char *extra[8];
  int n = 0;
  if (i == sc->slow_server) {
    extra[n++] = "--extra-latency-ms";
    extra[n++] = lat;
  }
  if (sc->churn) {
    /* connections recycle every second: clients re-resolve regularly, so a
     * server removed from DNS drains before it is stopped */
    extra[n++] = "--max-connection-age-ms";
    extra[n++] = "1000";
  }
  extra[n] = NULL;
  fleet_server s;
  memset(&s, 0, sizeof(s));
  snprintf(s.host, sizeof(s.host), "%s", slot->host);
  int rc = io_fleet_server_spawn(rn->server_bin, dir, name, port, stats_suffix, extra, &s);
  slot->p = s.p;
  slot->port = port;
  snprintf(slot->stats, sizeof(slot->stats), "%s", s.stats);
  return rc;
}

/* Waits for a spawned server to listen; sets slot->port. */
static int await_server(server_slot *slot) {
  fleet_server s;
  memset(&s, 0, sizeof(s));
  s.p = slot->p;
  int rc = io_fleet_server_await(&s);
  slot->port = s.port;
  return rc;
}

/* Starts server i on slot->host:port (port 0 = ephemeral) and waits until
 * it listens. */
static int start_server(const runner *rn, const scenario_cfg *sc, const char *dir, int i,
                        int port, const char *stats_suffix, server_slot *slot) {
  if (spawn_server(rn, sc, dir, i, port, stats_suffix, slot) != 0) return -1;
  return await_server(slot);
}

/* Reads a server's stats file into the run's server entry (adding what
 * earlier instances of the same server answered). */
static void read_server_stats(const server_slot *slot, fleet_server_result *out) {
  char err[128];
  json_value *v = io_json_parse_file(slot->stats, err, sizeof(err));
  long calls = 0, peak = 0, opened = 0;
  if (v) {
    calls = (long)io_json_get_number(v, "calls", 0);
    peak = (long)io_json_get_number(v, "connections_peak", 0);
    opened = (long)io_json_get_number(v, "connections_opened", 0);
    io_json_free(v);
  }
  out->calls = slot->calls_before + calls;
  out->connections_peak = peak > slot->conns_peak_before ? peak : slot->conns_peak_before;
  out->connections_opened = slot->conns_opened_before + opened;
}

static long stats_calls(const char *path) {
  char err[128];
  json_value *v = io_json_parse_file(path, err, sizeof(err));
  long calls = v ? (long)io_json_get_number(v, "calls", 0) : 0;
  io_json_free(v);
  return calls;
}

/* A server's cumulative connections opened and its open connections now
 * (channelz, from its stats file; at most 50 ms old). */
static void server_counts(const server_slot *slot, long *opened, long *current) {
  io_fleet_server_counts(slot->stats, opened, current);
}

static int run_mode(const runner *rn, const scenario_cfg *sc, const mode_def *mode, fleet_run *r) {
  memset(r, 0, sizeof(*r));
  snprintf(r->scenario, sizeof(r->scenario), "%s", sc->name);
  snprintf(r->mode, sizeof(r->mode), "%s", mode->name);
  r->slow_share = -1;
  r->recover_s = -1;
  r->duration_s = sc->duration_s;
  char dir[4200];
  snprintf(dir, sizeof(dir), "%s/%s-%s", rn->out_dir, sc->name, mode->name);
  mkdir(dir, 0755);

  int n_servers = sc->servers;
  int total_servers = n_servers + (sc->churn ? 1 : 0);
  server_slot servers[FLEET_MAX_SERVERS + 1];
  memset(servers, 0, sizeof(servers));
  proc *clients[MAX_CLIENTS];
  char summaries[MAX_CLIENTS][4300];
  int client_service[MAX_CLIENTS];
  int n_clients = 0;
  int ok = 1;

  /* churn: servers at addresses of their own sharing one port, found by
   * the clients through a dns:// target served by the fleet's DNS, so
   * membership changes reach them as real resolver updates. Other
   * scenarios: a fixed ipv4: list. */
  fleet_dns *dns = NULL;
  int shared_port = 0;
  for (int i = 0; i < total_servers; i++) {
    io_fleet_net_server_host(i, sc->churn || sc->bounce, servers[i].host, sizeof(servers[i].host));
  }
  /* s0 first (its port is the shared one when they share), then the rest
   * side by side: starting them one by one dominated a short run */
  if (start_server(rn, sc, dir, 0, 0, "", &servers[0]) != 0) {
    snprintf(r->error, sizeof(r->error), "server s0 did not start (see %.100s)", dir);
    ok = 0;
  }
  if (sc->churn || sc->bounce) shared_port = servers[0].port;
  for (int i = 1; i < n_servers && ok; i++) {
    if (spawn_server(rn, sc, dir, i, shared_port, "", &servers[i]) != 0) ok = 0;
  }
  for (int i = 1; i < n_servers && ok; i++) {
    if (await_server(&servers[i]) != 0) ok = 0;
  }
  if (!ok && r->error[0] == '\0') {
    snprintf(r->error, sizeof(r->error), "a server did not start (see %.100s)", dir);
  }
  if (sc->churn) servers[n_servers].port = shared_port; /* the spare starts later */
  char target[FLEET_MAX_SERVERS * 24 + 64] = "ipv4:";
  if (ok && (sc->churn || sc->bounce)) {
    dns = io_fleet_dns_start("fleet.test");
    const char *members[FLEET_MAX_SERVERS];
    for (int i = 0; i < n_servers; i++) members[i] = servers[i].host;
    if (dns == NULL || io_fleet_dns_set(dns, members, (size_t)n_servers) != 0 ||
        io_fleet_dns_target(dns, shared_port, target, sizeof(target)) != 0) {
      snprintf(r->error, sizeof(r->error), "cannot start the DNS responder");
      ok = 0;
    }
  } else {
    for (int i = 0; ok && i < n_servers; i++) {
      char a[48];
      snprintf(a, sizeof(a), "%s%s:%d", i ? "," : "", servers[i].host, servers[i].port);
      strcat(target, a);
    }
  }

  char config[256];
  if (mode->config) {
    snprintf(config, sizeof(config), "%s", mode->config);
  } else {
    char grace[48] = "";
    if (sc->grace_ms > 0) snprintf(grace, sizeof(grace), ",\"removalGraceMs\":%ld", sc->grace_ms);
    snprintf(config, sizeof(config),
             "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"%s\",\"minAperture\":%ld%s}}]}",
             mode->name, sc->min_aperture, grace);
  }
  r->grace_ms = mode->aperture ? sc->grace_ms : 0;
  r->min_aperture = mode->aperture ? sc->min_aperture : 0;
  char rate_s[32], dur_s[32], conc_s[32], backoff_s[32];
  snprintf(rate_s, sizeof(rate_s), "%g", sc->rate);
  snprintf(dur_s, sizeof(dur_s), "%g", sc->duration_s);
  snprintf(conc_s, sizeof(conc_s), "%ld", sc->concurrency);
  snprintf(backoff_s, sizeof(backoff_s), "%ld", sc->max_backoff_ms);
  for (int s = 0; ok && s < sc->n_services; s++) {
    for (int c = 0; c < sc->service_clients[s] && n_clients < MAX_CLIENTS; c++) {
      char idx[16], cnt[16], log[4300], host[FLEET_NET_HOST_LEN];
      io_fleet_net_client_host(n_clients, host, sizeof(host));
      snprintf(idx, sizeof(idx), "%d", c);
      snprintf(cnt, sizeof(cnt), "%d", sc->service_clients[s]);
      snprintf(summaries[n_clients], sizeof(summaries[0]), "%s/client-%d-%d.json", dir, s, c);
      snprintf(log, sizeof(log), "%s/client-%d-%d.log", dir, s, c);
      fleet_client_opts co = {
          .bin = rn->client_bin,
          .target = target,
          .service_config = config,
          .rate = rate_s,
          .duration_s = dur_s,
          .concurrency = conc_s,
          .linger_s = "0.3",
          .summary_file = summaries[n_clients],
          .peer_index = mode->aperture ? idx : NULL,
          .peer_count = mode->aperture ? cnt : NULL,
          .max_backoff_ms = sc->max_backoff_ms > 0 ? backoff_s : NULL,
          .dns_min_interval_ms = (sc->churn || sc->bounce) ? "100" : NULL,
          .host = host,
      };
      clients[n_clients] = io_fleet_client_start(&co, log);
      if (clients[n_clients] == NULL) {
        snprintf(r->error, sizeof(r->error), "client %d/%d did not start", s, c);
        ok = 0;
        break;
      }
      client_service[n_clients++] = s;
    }
  }

  /* Timeline: disturbances at their times, until every client is done. */
  double t0 = now_s();
  int killed = 0, restarted = 0, churned = 0, disturbed = -1;
  double restart_time = 0, drain_started = 0;
  int dns_back = 0;
  int bounced = 0; /* 1: s1 out, 2: back (or measured, for a removal), 3: measured */
  long opened0[FLEET_MAX_SERVERS + 1], current0[FLEET_MAX_SERVERS + 1];
  int done[MAX_CLIENTS] = {0};
  int n_done = 0;
  while (ok && n_done < n_clients) {
    double t = now_s() - t0;
    if (t > sc->duration_s + 30) {
      snprintf(r->error, sizeof(r->error), "clients did not finish in time (see %.100s)", dir);
      ok = 0;
      break;
    }
    /* the kill waits until the server has served calls, so that it
     * disturbs traffic even when the clients start slowly */
    if (sc->kill_server >= 0 && !killed && t >= sc->kill_at_s &&
        stats_calls(servers[sc->kill_server].stats) > 0) {
      server_slot *k = &servers[sc->kill_server];
      fleet_server_result before;
      read_server_stats(k, &before); /* last snapshot, at most 50 ms old */
      io_proc_signal(k->p, SIGKILL);
      io_proc_stop(k->p, 1000);
      k->p = NULL;
      k->calls_before = before.calls;
      k->conns_peak_before = before.connections_peak;
      k->conns_opened_before = before.connections_opened;
      killed = 1;
      disturbed = sc->kill_server;
    }
    if (killed && !restarted && t >= sc->restart_at_s) {
      server_slot *k = &servers[sc->kill_server];
      int port = k->port;
      if (start_server(rn, sc, dir, sc->kill_server, port, ".restarted", k) != 0) {
        snprintf(r->error, sizeof(r->error), "server s%d did not restart on port %d",
                 sc->kill_server, port);
        ok = 0;
        break;
      }
      restarted = 1;
      restart_time = now_s();
    }
    if (restarted && r->recover_s < 0 && stats_calls(servers[sc->kill_server].stats) > 0) {
      r->recover_s = now_s() - restart_time;
    }
    if (sc->churn && !churned && t >= sc->churn_at_s) {
      /* add the spare and remove s0 in the DNS answer; the clients
       * re-resolve as their connections age out and stop using s0 */
      if (start_server(rn, sc, dir, n_servers, shared_port, "", &servers[n_servers]) != 0) {
        snprintf(r->error, sizeof(r->error), "spare server did not start");
        ok = 0;
        break;
      }
      const char *members[FLEET_MAX_SERVERS + 1];
      for (int i = 1; i <= n_servers; i++) members[i - 1] = servers[i].host;
      io_fleet_dns_set(dns, members, (size_t)n_servers);
      churned = 1;
      disturbed = 0;
      drain_started = now_s();
    }
    if (sc->bounce && bounced == 0 && t >= sc->churn_at_s) {
      /* snapshot the servers, then s1 leaves the answer and stops */
      r->sessions_before = 0;
      for (int i = 0; i < n_servers; i++) {
        server_counts(&servers[i], &opened0[i], &current0[i]);
        r->sessions_before += current0[i];
      }
      const char *members[FLEET_MAX_SERVERS];
      int m = 0;
      for (int i = 0; i < n_servers; i++) {
        if (i != 1) members[m++] = servers[i].host;
      }
      io_fleet_dns_set(dns, members, (size_t)m);
      server_slot *k = &servers[1];
      io_proc_stop(k->p, 5000);
      k->p = NULL;
      fleet_server_result before;
      read_server_stats(k, &before);
      k->calls_before = before.calls;
      k->conns_peak_before = before.connections_peak;
      k->conns_opened_before = before.connections_opened;
      bounced = 1;
      disturbed = 1;
      restart_time = now_s();
    }
    if (bounced == 1 && sc->bounce == BOUNCE_RESTART && !dns_back &&
        now_s() - restart_time >= sc->bounce_back_s / 2) {
      /* the address returns to the answer half-way, the process at the end:
       * the clients' failing reconnects to s1 ask the resolver again and
       * learn that it is back (gRPC's DNS resolver does not poll) */
      const char *members[FLEET_MAX_SERVERS];
      for (int i = 0; i < n_servers; i++) members[i] = servers[i].host;
      io_fleet_dns_set(dns, members, (size_t)n_servers);
      dns_back = 1;
    }
    if (bounced == 1 && sc->bounce == BOUNCE_RESTART && now_s() - restart_time >= sc->bounce_back_s) {
      if (start_server(rn, sc, dir, 1, shared_port, ".restarted", &servers[1]) != 0) {
        snprintf(r->error, sizeof(r->error), "server s1 did not restart on port %d", shared_port);
        ok = 0;
        break;
      }
      bounced = 2;
    }
    if (bounced == 1 && sc->bounce == BOUNCE_REMOVE) bounced = 2;
    if (bounced == 2 && now_s() - restart_time >= sc->bounce_back_s + 1.5) {
      /* settled: what moved on the servers that stayed */
      r->sessions_changed = 0;
      for (int i = 0; i < n_servers; i++) {
        if (i == 1) continue;
        long opened, current;
        server_counts(&servers[i], &opened, &current);
        long new_conns = opened - opened0[i];
        long closed = current0[i] + new_conns - current;
        r->sessions_changed += new_conns + (closed > 0 ? closed : 0);
      }
      r->bounce_measured = 1;
      bounced = 3;
    }
    if (churned == 1) {
      /* stop s0 once drained (no connection left), or after 5 s anyway */
      json_value *v = io_json_parse_file(servers[0].stats, NULL, 0);
      long current = v ? (long)io_json_get_number(v, "connections_current", 1) : 1;
      io_json_free(v);
      if (current == 0 || now_s() - drain_started > 5.0) {
        r->drain_s = now_s() - drain_started;
        io_proc_stop(servers[0].p, 5000);
        servers[0].p = NULL;
        churned = 2;
      }
    }
    for (int c = 0; c < n_clients; c++) {
      if (!done[c] && io_proc_wait(clients[c], 0, NULL) == 0) {
        done[c] = 1;
        n_done++;
      }
    }
    io_fleet_sleep_ms(20);
  }

  /* Stop everything of this run, then read the final figures. */
  if (ok && sc->bounce == BOUNCE_RESTART && bounced >= 2) {
    r->restarted_calls = stats_calls(servers[1].stats);
  }
  for (int c = 0; c < n_clients; c++) io_proc_stop(clients[c], 5000);
  for (int i = 0; i < total_servers; i++) { /* all shut down at once */
    if (servers[i].p) io_proc_signal(servers[i].p, SIGTERM);
  }
  for (int i = 0; i < total_servers; i++) {
    if (servers[i].p) io_proc_stop(servers[i].p, 10000);
    servers[i].p = NULL;
  }
  if (dns != NULL) {
    r->dns_queries = io_fleet_dns_queries(dns);
    io_fleet_dns_stop(dns);
  }
  if (!ok) return -1;

  r->n_servers = total_servers;
  double calls[FLEET_MAX_SERVERS + 1], conns[FLEET_MAX_SERVERS + 1];
  int n_steady = 0;
  for (int i = 0; i < total_servers; i++) {
    fleet_server_result *sv = &r->servers[i];
    snprintf(sv->name, sizeof(sv->name), "s%d", i);
    read_server_stats(&servers[i], sv);
    sv->slow = i == sc->slow_server;
    sv->killed = i == sc->kill_server;
    sv->removed = (sc->churn && i == 0) || (sc->bounce == BOUNCE_REMOVE && i == 1);
    sv->killed = sv->killed || (sc->bounce == BOUNCE_RESTART && i == 1);
    sv->added = sc->churn && i == n_servers;
    r->connections_total += sv->connections_peak;
    r->connections_opened += sv->connections_opened;
    /* balance figures over servers that were up the whole run */
    if (!sv->killed && !sv->removed && !sv->added) {
      calls[n_steady] = (double)sv->calls;
      conns[n_steady] = (double)sv->connections_peak;
      n_steady++;
    }
  }
  r->calls = io_fleet_spread_of(calls, n_steady);
  r->fair_max_mean = io_fleet_fair_max_mean(n_steady, (long)(r->calls.mean * n_steady + 0.5));
  r->connections = io_fleet_spread_of(conns, n_steady);

  static latency_hist hist;
  io_latency_hist_reset(&hist);
  char disturbed_addr[64] = "";
  if (disturbed >= 0) snprintf(disturbed_addr, sizeof(disturbed_addr), "ipv4:%s:%d", servers[disturbed].host, servers[disturbed].port);
  long service_server_calls[FLEET_MAX_SERVICES][FLEET_MAX_SERVERS + 1];
  memset(service_server_calls, 0, sizeof(service_server_calls));
  r->n_services = sc->n_services;
  for (int s = 0; s < sc->n_services; s++) {
    snprintf(r->services[s].name, sizeof(r->services[s].name), "svc%d", s);
    r->services[s].clients = sc->service_clients[s];
  }
  for (int c = 0; c < n_clients; c++) {
    char err[160];
    json_value *v = io_json_parse_file(summaries[c], err, sizeof(err));
    if (v == NULL) {
      snprintf(r->error, sizeof(r->error), "client summary %.80s: %.60s", summaries[c], err);
      return -1;
    }
    long okc = (long)io_json_get_number(v, "ok", 0), failc = (long)io_json_get_number(v, "failed", 0);
    r->ok += okc;
    r->failed += failc;
    r->qps += io_json_get_number(v, "qps", 0); /* each client's own rate of finished calls */
    r->services[client_service[c]].ok += okc;
    r->services[client_service[c]].failed += failc;
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
    const json_value *h = io_json_get(v, "latency_hist");
    for (size_t i = 0; i < io_json_size(h); i++) {
      const json_value *pair = io_json_at(h, i);
      io_latency_hist_record_n(&hist, (uint64_t)io_json_number(io_json_at(pair, 0), 0),
                            (uint64_t)io_json_number(io_json_at(pair, 1), 0));
    }
    const json_value *peers = io_json_get(v, "peers");
    for (size_t i = 0; i < io_json_size(peers); i++) {
      const char *name = io_json_key_at(peers, i);
      int idx = (name[0] == 's') ? atoi(name + 1) : -1;
      if (idx >= 0 && idx < total_servers) {
        service_server_calls[client_service[c]][idx] += (long)io_json_number(io_json_at(peers, i), 0);
      }
    }
    io_json_free(v);
  }
  for (int s = 0; s < sc->n_services; s++) {
    double v[FLEET_MAX_SERVERS + 1];
    int n = 0;
    long used = 0;
    for (int i = 0; i < total_servers; i++) {
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
  if (sc->slow_server >= 0) {
    long total = 0;
    for (int i = 0; i < total_servers; i++) total += r->servers[i].calls;
    r->slow_share = total ? (double)r->servers[sc->slow_server].calls / (double)total : 0;
  }
  r->fair_share = 1.0 / total_servers;
  r->complete = 1;
  return 0;
}

/* Runs one scenario for each requested, available mode; appends to runs. */
static int run_scenario(const runner *rn, const scenario_cfg *base, fleet_run *runs, int *n_runs) {
  scenario_cfg sc = *base;
  if (rn->servers > 0) sc.servers = (int)rn->servers;
  if (rn->clients > 0) {
    for (int s = 0; s < sc.n_services; s++) sc.service_clients[s] = (int)rn->clients;
  }
  if (rn->rate > 0) sc.rate = rn->rate;
  if (rn->duration_s > 0) {
    double scale = rn->duration_s / sc.duration_s;
    sc.duration_s = rn->duration_s;
    sc.kill_at_s *= scale;
    sc.restart_at_s *= scale;
    sc.churn_at_s *= scale;
  }
  if (rn->concurrency > 0) sc.concurrency = rn->concurrency;
  if (rn->grace_ms >= 0) sc.grace_ms = rn->grace_ms;
  if (rn->min_aperture > 0) sc.min_aperture = rn->min_aperture;
  if (sc.slow_server >= sc.servers) sc.slow_server = sc.servers - 1;
  if (sc.kill_server >= sc.servers) sc.kill_server = sc.servers - 1;
  const char *list = rn->modes ? rn->modes : sc.default_modes;
  int failures = 0;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    const mode_def *m = find_mode(p, len);
    if (m == NULL) {
      fprintf(stderr, "fleet: unknown mode '%.*s'\n", (int)len, p);
      return -1;
    }
    p += len + (p[len] == ',');
    if (m->aperture && !rn->have_aperture) {
      if (rn->modes) fprintf(stderr, "fleet: mode %s needs the aperture policy (not linked); skipped\n", m->name);
      continue;
    }
    if (*n_runs >= MAX_RUNS) break;
    fprintf(stderr, "fleet: %s / %s ...\n", sc.name, m->name);
    if (run_mode(rn, &sc, m, &runs[*n_runs]) != 0) {
      fprintf(stderr, "fleet: %s / %s failed: %s\n", sc.name, m->name, runs[*n_runs].error);
      failures++;
    }
    (*n_runs)++;
  }
  return failures ? -1 : 0;
}

/* A scenario's report writer: rows (or one result) and their count. */
typedef void (*report_writer)(FILE *f, const void *rows, int n);

/* Whether the client has the aperture policy, which `scenario` needs. */
static int aperture_linked(const runner *rn, const char *scenario) {
  if (!rn->have_aperture) {
    fprintf(stderr, "fleet: %s needs the aperture policy in the client\n", scenario);
  }
  return rn->have_aperture;
}

/* Writes <out-dir>/report.json, the JSON or the table on stdout and where
 * the logs are; returns the scenario's exit code. */
static int finish_scenario(const runner *rn, int failed, report_writer json, report_writer table,
                           const void *rows, int n) {
  char report[4300];
  snprintf(report, sizeof(report), "%s/report.json", rn->out_dir);
  FILE *rf = fopen(report, "w");
  if (rf != NULL) {
    json(rf, rows, n);
    fclose(rf);
  }
  if (rn->json) json(stdout, rows, n);
  else table(stdout, rows, n);
  fprintf(rn->json ? stderr : stdout, "logs: %s\n", rn->out_dir);
  return failed ? 1 : 0;
}

static void peers_json(FILE *f, const void *rows, int n) { io_fleet_peers_json(f, rows, n); }
static void peers_table(FILE *f, const void *rows, int n) { io_fleet_peers_table(f, rows, n); }
static void xds_json(FILE *f, const void *rows, int n) { io_fleet_xds_json(f, rows, n); }
static void xds_table(FILE *f, const void *rows, int n) { io_fleet_xds_table(f, rows, n); }
static void deploy_json(FILE *f, const void *rows, int n) { io_fleet_deploy_json(f, rows, n); }
static void deploy_table(FILE *f, const void *rows, int n) { io_fleet_deploy_table(f, rows, n); }
static void affinity_json(FILE *f, const void *rows, int n) { io_fleet_affinity_json(f, rows, n); }
static void affinity_table(FILE *f, const void *rows, int n) { io_fleet_affinity_table(f, rows, n); }
static void soak_json(FILE *f, const void *res, int n) {
  (void)n;
  io_fleet_soak_json(f, res);
}
static void soak_table(FILE *f, const void *res, int n) {
  (void)n;
  io_fleet_soak_table(f, res);
}

/* The peers scenario (fleet_peers.h): its own rows, report and table. */
static int run_peers(const runner *rn) {
  if (!aperture_linked(rn, "peers")) return 1;
  fleet_peers_opts po = {rn->server_bin, rn->client_bin, rn->out_dir, rn->modes,
                         (int)rn->servers, (int)rn->clients, (int)rn->min_aperture, rn->rate};
  static fleet_peers_row rows[FLEET_PEERS_MAX_MODES];
  int n = 0;
  int failed = io_fleet_peers_run(&po, rows, FLEET_PEERS_MAX_MODES, &n) != 0;
  return finish_scenario(rn, failed, peers_json, peers_table, rows, n);
}

/* The xds scenario (fleet_xds.h): churn-grid through EDS; its own rows,
 * report and table. */
static int run_xds(const runner *rn, const char *points) {
  if (!aperture_linked(rn, "xds")) return 1;
  fleet_xds_opts xo = {rn->server_bin, rn->client_bin, rn->out_dir, rn->modes, points, rn->rate};
  static fleet_churn_row rows[FLEET_CHURN_MAX_POINTS * 8];
  int n = 0;
  int failed = io_fleet_xds_run(&xo, rows, (int)(sizeof(rows) / sizeof(rows[0])), &n) != 0;
  return finish_scenario(rn, failed, xds_json, xds_table, rows, n);
}

/* The deploy scenario (fleet_deploy.h): a rolling replacement at new
 * addresses; fails when a mode's measurement differs from the prediction
 * or a call failed. */
static int run_deploy(const runner *rn) {
  if (!aperture_linked(rn, "deploy")) return 1;
  fleet_deploy_opts dop = {rn->server_bin, rn->client_bin, rn->out_dir, rn->modes,
                           (int)rn->servers, (int)rn->clients, (int)rn->min_aperture, rn->rate};
  static fleet_deploy_row rows[FLEET_DEPLOY_MAX_MODES];
  int n = 0;
  int failed = io_fleet_deploy_run(&dop, rows, FLEET_DEPLOY_MAX_MODES, &n) != 0;
  return finish_scenario(rn, failed, deploy_json, deploy_table, rows, n);
}

/* The affinity scenario (fleet_affinity.h): per-key owners. */
static int run_affinity(const runner *rn, const char *kinds) {
  if (!aperture_linked(rn, "affinity")) return 1;
  fleet_affinity_opts ao = {rn->server_bin, rn->client_bin, rn->out_dir, kinds,
                            (int)rn->servers, (int)rn->clients, (int)rn->min_aperture, rn->rate};
  static fleet_affinity_row rows[FLEET_AFFINITY_MAX_KINDS];
  int n = 0;
  int failed = io_fleet_affinity_run(&ao, rows, FLEET_AFFINITY_MAX_KINDS, &n) != 0;
  return finish_scenario(rn, failed, affinity_json, affinity_table, rows, n);
}

/* The soak scenario (fleet_soak.h): its own report. */
static int run_soak(const runner *rn) {
  if (!aperture_linked(rn, "soak")) return 1;
  fleet_soak_opts so = {rn->server_bin, rn->client_bin, rn->out_dir, rn->duration_s,
                        (int)rn->servers, (int)rn->clients, rn->rate, rn->rss_bound_kib};
  static fleet_soak_result res;
  int failed = io_fleet_soak_run(&so, &res) != 0;
  return finish_scenario(rn, failed, soak_json, soak_table, &res, 1);
}

/* Runs one step of the default run: its scenario with its modes, rate,
 * duration and concurrency, where the flags did not set them. */
static int run_default_step(const runner *rn, const default_step *step, fleet_run *runs,
                            int *n_runs) {
  const scenario_cfg *sc = NULL;
  for (int s = 0; s < N_SCENARIOS; s++) {
    if (strcmp(kScenarios[s].name, step->scenario) == 0) sc = &kScenarios[s];
  }
  if (sc == NULL) return -1;
  static runner r; /* large: not on the stack */
  r = *rn;
  if (r.modes == NULL) r.modes = step->modes;
  if (r.rate <= 0) r.rate = step->rate;
  if (r.duration_s <= 0) r.duration_s = step->duration_s;
  if (r.concurrency <= 0) r.concurrency = step->concurrency;
  return run_scenario(&r, sc, runs, n_runs);
}

static void usage(void) {
  fprintf(stderr,
          "usage: fleet [--scenario balance|multi-service|slow-backend|kill|churn|restart|remove|throughput|churn-grid|peers|xds|deploy|affinity|soak|all]\n"
          "             [--modes m1,m2,...] [--servers N] [--clients M] [--rate QPS]\n"
          "             [--duration-s S] [--concurrency K] [--min-aperture A] [--grace-ms G] [--json]\n"
          "             [--points N:C:A,...] [--affinity sticky,hash] [--svg PATH] [--out-dir DIR]\n"
          "no --scenario: balance, then multi-service, for smooth, continuous, (random,) round_robin\n"
          "churn-grid points (servers:clients:minAperture): default " FLEET_CHURN_DEFAULT_POINTS "\n"
          "xds: churn-grid with EDS instead of DNS; points default " FLEET_XDS_DEFAULT_POINTS ", modes " FLEET_XDS_DEFAULT_MODES "\n"
          "deploy: every server replaced in turn at a new address (--servers 8, --clients 4, --min-aperture 3, --rate 50); modes " FLEET_DEPLOY_DEFAULT_MODES "\n"
          "affinity: per-key owners for --affinity " FLEET_AFFINITY_DEFAULT_KINDS " (--servers, --clients, --min-aperture, --rate)\n"
          "soak: [--duration-s S] (default 300) [--rss-bound-kib K] (default 8192)\n"
          "modes: continuous discrete random vdc smooth mesh stable (aperture) round_robin pick_first\n");
}

/* Asks the client binary which policies it can use. */
static int client_has_aperture(const char *client_bin) {
  char *argv[] = {(char *)client_bin, "--print-policies", NULL};
  proc *p = io_proc_start(argv, NULL);
  if (p == NULL) return 0;
  char line[256] = "";
  int got = io_proc_wait_line(p, "policies: ", 10000, line, sizeof(line)) == 0;
  io_proc_stop(p, 2000);
  return got && strstr(line, "aperture") != NULL;
}

int main(int argc, char **argv) {
  static runner rn;
  rn.grace_ms = -1;
  const char *scenario = NULL; /* NULL: the default run (kDefaultRun) */
  const char *out_dir = NULL;
  const char *points = NULL;
  const char *affinity_kinds = NULL; /* affinity scenario: sticky, hash */
  for (int i = 1; i < argc; i++) {
    const char *v;
    int r;
    if ((r = io_flag_match(argc, argv, &i, "scenario", &v)) != 0) {
      if (r < 0) return 2;
      scenario = v;
    } else if ((r = io_flag_match(argc, argv, &i, "modes", &v)) != 0) {
      if (r < 0) return 2;
      /* an unknown mode is a usage error, found before anything starts */
      for (const char *m = v; *m;) {
        size_t len = strcspn(m, ",");
        if (find_mode(m, len) == NULL) {
          fprintf(stderr, "flag --modes: unknown mode '%.*s'\n", (int)len, m);
          usage();
          return 2;
        }
        m += len + (m[len] == ',');
      }
      rn.modes = v;
    } else if ((r = io_flag_match(argc, argv, &i, "points", &v)) != 0) {
      if (r < 0) return 2;
      fleet_churn_point check[FLEET_CHURN_MAX_POINTS];
      char perr[200];
      if (io_fleet_churn_parse_points(v, check, FLEET_CHURN_MAX_POINTS, perr, sizeof(perr)) < 0) {
        fprintf(stderr, "flag %s\n", perr);
        return 2;
      }
      points = v;
    } else if ((r = io_flag_match(argc, argv, &i, "affinity", &v)) != 0) {
      char kerr[200];
      if (r < 0) return 2;
      if (io_fleet_affinity_check_kinds(v, kerr, sizeof(kerr)) != 0) {
        fprintf(stderr, "flag --affinity: %s\n", kerr);
        return 2;
      }
      affinity_kinds = v;
    } else if ((r = io_flag_match(argc, argv, &i, "svg", &v)) != 0) {
      if (r < 0) return 2;
      rn.svg_path = v;
    } else if ((r = io_flag_match(argc, argv, &i, "out-dir", &v)) != 0) {
      if (r < 0) return 2;
      out_dir = v;
    } else if ((r = io_flag_match(argc, argv, &i, "servers", &v)) != 0) {
      if (r < 0 || io_flag_long("servers", v, 1, FLEET_MAX_SERVERS - 1, &rn.servers) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "clients", &v)) != 0) {
      if (r < 0 || io_flag_long("clients", v, 1, MAX_CLIENTS / FLEET_MAX_SERVICES, &rn.clients) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "min-aperture", &v)) != 0) {
      if (r < 0 || io_flag_long("min-aperture", v, 1, 1000000, &rn.min_aperture) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "grace-ms", &v)) != 0) {
      if (r < 0 || io_flag_long("grace-ms", v, 0, 86400000, &rn.grace_ms) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "concurrency", &v)) != 0) {
      if (r < 0 || io_flag_long("concurrency", v, 1, 1000, &rn.concurrency) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "rate", &v)) != 0) {
      if (r < 0 || io_flag_double("rate", v, 1, 100000, &rn.rate) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "rss-bound-kib", &v)) != 0) {
      if (r < 0 || io_flag_long("rss-bound-kib", v, 1, 16777216, &rn.rss_bound_kib) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "duration-s", &v)) != 0) {
      if (r < 0 || io_flag_double("duration-s", v, 0.5, 600, &rn.duration_s) != 0) return 2;
    } else if (strcmp(argv[i], "--json") == 0) {
      rn.json = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage();
      return 0;
    } else {
      fprintf(stderr, "fleet: unknown argument '%s'\n", argv[i]);
      usage();
      return 2;
    }
  }
  int want_default = scenario == NULL;
  int want_all = !want_default && strcmp(scenario, "all") == 0;
  int want_grid = want_all || (!want_default && strcmp(scenario, "churn-grid") == 0);
  int want_peers = !want_default && strcmp(scenario, "peers") == 0; /* fleet_peers.h */
  int want_xds = !want_default && strcmp(scenario, "xds") == 0;       /* fleet_xds.h */
  int want_affinity = !want_default && strcmp(scenario, "affinity") == 0; /* fleet_affinity.h */
  if (want_affinity && (rn.clients == 1 || rn.clients > FLEET_AFFINITY_MAX_CLIENTS ||
                        rn.servers == 1 || rn.servers > FLEET_AFFINITY_MAX_SERVERS)) {
    fprintf(stderr, "fleet: affinity: --servers in [2, %d] and --clients in [2, %d]\n",
            FLEET_AFFINITY_MAX_SERVERS, FLEET_AFFINITY_MAX_CLIENTS);
    return 2;
  }
  char xds_err[200];
  if (want_xds && rn.modes != NULL && io_fleet_xds_check_modes(rn.modes, xds_err, sizeof(xds_err)) != 0) {
    fprintf(stderr, "flag %s\n", xds_err);
    return 2;
  }
  int want_deploy = !want_default && strcmp(scenario, "deploy") == 0; /* fleet_deploy.h */
  if (want_deploy && rn.modes != NULL &&
      io_fleet_deploy_check_modes(rn.modes, xds_err, sizeof(xds_err)) != 0) {
    fprintf(stderr, "flag %s\n", xds_err);
    return 2;
  }
  if (want_deploy && (rn.servers == 1 || rn.servers > FLEET_DEPLOY_MAX_SERVERS ||
                      rn.clients > 16)) {
    fprintf(stderr, "fleet: deploy: --servers in [2, %d] and --clients in [1, 16]\n",
            FLEET_DEPLOY_MAX_SERVERS);
    return 2;
  }
  int want_soak = !want_default && strcmp(scenario, "soak") == 0;   /* fleet_soak.h */
  const scenario_cfg *chosen = NULL;
  for (int s = 0; s < N_SCENARIOS && !want_default; s++) {
    if (strcmp(kScenarios[s].name, scenario) == 0) chosen = &kScenarios[s];
  }
  if (!want_default && !want_all && !want_grid && !want_peers && !want_xds && !want_affinity &&
      !want_deploy && !want_soak && chosen == NULL) {
    fprintf(stderr, "flag --scenario: unknown scenario '%s'\n", scenario);
    usage();
    return 2;
  }
  if (io_proc_find_binary(argv[0], "testing/server", rn.server_bin, sizeof(rn.server_bin)) != 0 ||
      io_proc_find_binary(argv[0], "testing/client", rn.client_bin, sizeof(rn.client_bin)) != 0) {
    fprintf(stderr, "fleet: cannot find the interop server/client binaries (run with bazel run //interop:fleet)\n");
    return 1;
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  atexit(io_proc_kill_all);

  if (out_dir) {
    snprintf(rn.out_dir, sizeof(rn.out_dir), "%s", out_dir);
    mkdir(rn.out_dir, 0755);
  } else {
    const char *tmp = getenv("TMPDIR");
    snprintf(rn.out_dir, sizeof(rn.out_dir), "%s/aperture-fleet.XXXXXX", tmp ? tmp : "/tmp");
    if (mkdtemp(rn.out_dir) == NULL) {
      fprintf(stderr, "fleet: cannot create a work directory: %s\n", strerror(errno));
      return 1;
    }
  }
  rn.have_aperture = client_has_aperture(rn.client_bin);
  if (!rn.have_aperture) {
    fprintf(stderr, "fleet: the aperture policy is not linked into the client; comparing gRPC's own policies only\n");
  }

  if (want_peers) return run_peers(&rn);
  if (want_xds) return run_xds(&rn, points);
  if (want_deploy) return run_deploy(&rn);
  if (want_affinity) return run_affinity(&rn, affinity_kinds);
  if (want_soak) return run_soak(&rn);

  static fleet_run runs[MAX_RUNS];
  int n_runs = 0, failed = 0;
  for (int s = 0; s < N_SCENARIOS && !want_default; s++) {
    if (!want_all && &kScenarios[s] != chosen) continue;
    if (run_scenario(&rn, &kScenarios[s], runs, &n_runs) != 0) failed = 1;
  }
  for (int d = 0; d < N_DEFAULT_STEPS && want_default; d++) {
    if (run_default_step(&rn, &kDefaultRun[d], runs, &n_runs) != 0) failed = 1;
  }
  static fleet_churn_row churn_rows[FLEET_CHURN_MAX_POINTS * 16];
  int n_churn = 0;
  if (want_grid) {
    fleet_churn_opts co;
    memset(&co, 0, sizeof(co));
    co.server_bin = rn.server_bin;
    co.client_bin = rn.client_bin;
    co.out_dir = rn.out_dir;
    co.modes = rn.modes;
    co.points = points;
    co.have_aperture = rn.have_aperture;
    co.rate = rn.rate;
    int max_rows = (int)(sizeof(churn_rows) / sizeof(churn_rows[0]));
    if (io_fleet_churn_grid(&co, churn_rows, max_rows, &n_churn) != 0) failed = 1;
  }

  char svg[4300];
  const char *wd = getenv("BUILD_WORKING_DIRECTORY"); /* set by bazel run */
  if (rn.svg_path && (rn.svg_path[0] == '/' || wd == NULL)) {
    snprintf(svg, sizeof(svg), "%s", rn.svg_path);
  } else { /* relative to where `bazel run` was typed, not to the runfiles */
    snprintf(svg, sizeof(svg), "%s/%s", wd ? wd : ".", rn.svg_path ? rn.svg_path : "fleet.svg");
  }
  char report[4300];
  snprintf(report, sizeof(report), "%s/report.json", rn.out_dir);
  FILE *rf = fopen(report, "w");
  if (rf != NULL) {
    io_fleet_report_json(rf, runs, n_runs, churn_rows, n_churn);
    fclose(rf);
  }
  if (rn.json) {
    io_fleet_report_json(stdout, runs, n_runs, churn_rows, n_churn);
  } else {
    if (n_runs > 0) io_fleet_report_table(stdout, runs, n_runs);
    static fleet_summary summary;
    if (io_fleet_summary_of(runs, n_runs, &summary) == 0 && summary.text[0] != '\0') {
      fprintf(stdout, "\nsummary:\n%s", summary.text);
    }
    io_fleet_report_churn_table(stdout, churn_rows, n_churn);
  }
  if (n_runs == 0) { /* churn-grid alone: nothing to chart */
    fprintf(rn.json ? stderr : stdout, "logs: %s\n", rn.out_dir);
  } else if (io_fleet_report_svg(svg, runs, n_runs) != 0) {
    fprintf(stderr, "fleet: cannot write %s\n", svg);
    failed = 1;
  } else {
    fprintf(rn.json ? stderr : stdout, "chart: %s\nlogs: %s\n", svg, rn.out_dir);
  }
  return failed ? 1 : 0;
}
