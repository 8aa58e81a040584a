/* The soak scenario (fleet_soak.h): servers killed and restarted, a member
 * flapping in DNS, status queried in a loop, and a key flood into sticky
 * tables, all at once for a bounded time; failed calls and client RSS. */
#define _GNU_SOURCE
#include "interop/fleet/fleet_soak.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <grpc/grpc.h>

#include "aperture/v1/status.pb-c.h"
#include "interop/common/delay_queue.h"
#include "interop/common/json_read.h"
#include "interop/common/json_write.h"
#include "interop/common/proc.h"
#include "interop/common/unary_call.h"
#include "interop/fleet/fleet_dns.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_server.h"

#define MAX_SERVERS 32
/* Disturbance cycles (seconds from the start of traffic). */
#define KILL_FIRST_S 3.0
#define KILL_PERIOD_S 8.0
#define KILL_DOWN_S 2.0
#define FLAP_FIRST_S 5.0
#define FLAP_PERIOD_S 8.0
#define FLAP_OUT_S 3.0
#define STATUS_EVERY_MS 100.0
#define KILLED 0  /* s0 is killed and restarted */
#define FLAPPER 1 /* s1 leaves the DNS answer and comes back */

typedef struct soak {
  const fleet_soak_opts *o;
  char dir[4200];
  int n_servers, n_clients, port;
  fleet_server servers[MAX_SERVERS];
  fleet_dns *dns;
  proc *clients[FLEET_SOAK_MAX_CLIENTS];
  grpc_channel *status[FLEET_SOAK_MAX_CLIENTS];
  char summary[FLEET_SOAK_MAX_CLIENTS][4300];
} soak;

static double now_s(void) { return (double)io_delay_queue_now_ns() / 1e9; }

/* VmRSS of a process in KiB, or -1. */
static long rss_kib(proc *p) {
  char path[64], line[256];
  snprintf(path, sizeof(path), "/proc/%ld/status", (long)io_proc_pid(p));
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  long kib = -1;
  while (fgets(line, sizeof(line), f) != NULL) {
    if (strncmp(line, "VmRSS:", 6) == 0) {
      kib = strtol(line + 6, NULL, 10);
      break;
    }
  }
  fclose(f);
  return kib;
}

static int set_members(soak *s, int without) {
  const char *hosts[MAX_SERVERS];
  size_t n = 0;
  for (int i = 0; i < s->n_servers; i++)
    if (i != without) hosts[n++] = s->servers[i].host;
  return io_fleet_dns_set(s->dns, hosts, n);
}

/* Connections recycle every 2 s: the clients re-resolve regularly, so a
 * member that left the DNS answer is dropped and one that came back is
 * used again. */
static const char *const kServerExtra[] = {"--max-connection-age-ms", "2000", NULL};

static int start_servers(soak *s, fleet_soak_result *r) {
  for (int i = 0; i < s->n_servers; i++)
    io_fleet_net_server_host(i, 1, s->servers[i].host, sizeof(s->servers[i].host));
  if (io_fleet_server_start(s->o->server_bin, s->dir, "s0", 0, "", kServerExtra,
                            &s->servers[0]) != 0) {
    snprintf(r->error, sizeof(r->error), "server s0 did not start");
    return -1;
  }
  s->port = s->servers[0].port;
  for (int i = 1; i < s->n_servers; i++) {
    char name[16];
    snprintf(name, sizeof(name), "s%d", i);
    if (io_fleet_server_spawn(s->o->server_bin, s->dir, name, s->port, "", kServerExtra,
                              &s->servers[i]) != 0) {
      snprintf(r->error, sizeof(r->error), "server %s did not start", name);
      return -1;
    }
  }
  for (int i = 1; i < s->n_servers; i++) {
    if (io_fleet_server_await(&s->servers[i]) != 0) {
      snprintf(r->error, sizeof(r->error), "server s%d did not listen", i);
      return -1;
    }
  }
  s->dns = io_fleet_dns_start("soak.test");
  if (s->dns == NULL || set_members(s, -1) != 0) {
    snprintf(r->error, sizeof(r->error), "cannot start the DNS server (dnsmasq; see the runner's stderr)");
    return -1;
  }
  return 0;
}

static int start_clients(soak *s, fleet_soak_result *r) {
  char target[160], config[512], rate[32], duration[32], count[16];
  if (io_fleet_dns_target(s->dns, s->port, target, sizeof(target)) != 0) {
    snprintf(r->error, sizeof(r->error), "no DNS target");
    return -1;
  }
  /* every client's aperture covers every server, so each sees the kills */
  snprintf(config, sizeof(config),
           "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"continuous\","
           "\"minAperture\":%d,\"affinity\":\"sticky\","
           "\"affinityHeader\":\"x-session-key\",\"maxSessions\":%d}}]}",
           s->n_servers, FLEET_SOAK_MAX_SESSIONS);
  snprintf(rate, sizeof(rate), "%g", r->rate);
  snprintf(duration, sizeof(duration), "%g", r->duration_s);
  snprintf(count, sizeof(count), "%d", s->n_clients);
  for (int k = 0; k < s->n_clients; k++) {
    char index[16], keys[48], log[4300];
    snprintf(index, sizeof(index), "%d", k);
    snprintf(keys, sizeof(keys), "x-session-key:c%d-", k);
    snprintf(s->summary[k], sizeof(s->summary[k]), "%s/client-%d.json", s->dir, k);
    snprintf(log, sizeof(log), "%s/client-%d.log", s->dir, k);
    fleet_client_opts co = {
        .bin = s->o->client_bin,
        .target = target,
        .service_config = config,
        .rate = rate,
        .duration_s = duration,
        .concurrency = "8",
        .linger_s = "0.3",
        .summary_file = s->summary[k],
        .peer_index = index,
        .peer_count = count,
        .max_backoff_ms = "500",
        .dns_min_interval_ms = "100",
        .status_server = 1,
        .unique_metadata = keys,
    };
    s->clients[k] = io_fleet_client_start(&co, log);
    const char *why = "did not start";
    s->status[k] = s->clients[k] ? io_fleet_client_status_channel(s->clients[k], &why) : NULL;
    if (s->status[k] == NULL) {
      snprintf(r->error, sizeof(r->error), "client %d: %s", k, why);
      return -1;
    }
  }
  return 0;
}

/* One GetRingState on client k; records the sticky table's size. */
static void query_status(soak *s, int k, fleet_soak_result *r) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  unary_result u;
  if (io_unary_call(s->status[k], "/aperture.v1.ApertureStatus/GetRingState", &req.base,
                    &aperture__v1__get_ring_state_response__descriptor, NULL, NULL, 3000,
                    &u) != 0) {
    r->status_failed++;
    return;
  }
  const Aperture__V1__GetRingStateResponse *resp =
      u.code == GRPC_STATUS_OK ? (const Aperture__V1__GetRingStateResponse *)u.response : NULL;
  if (resp == NULL) {
    r->status_failed++;
  } else {
    r->status_ok++;
    for (size_t i = 0; i < resp->n_rings; i++) {
      long n = (long)resp->rings[i]->affinity_sessions;
      if (n > r->clients[k].sessions_max) r->clients[k].sessions_max = n;
    }
  }
  io_unary_result_free(&u);
}

/* The disturbances and the status loop until every client has finished. */
static int run_timeline(soak *s, fleet_soak_result *r) {
  double t0 = now_s(), next_kill = KILL_FIRST_S, restart_at = -1;
  double next_flap = FLAP_FIRST_S, flap_back = -1, next_status = 0;
  int rss_start_taken = 0, rss_mid_taken = 0, rss_end_taken = 0, done = 0, q = 0;
  int finished[FLEET_SOAK_MAX_CLIENTS] = {0};
  const double end = r->duration_s;
  while (done < s->n_clients) {
    double t = now_s() - t0;
    if (t > end + 30) {
      snprintf(r->error, sizeof(r->error), "clients did not finish in time");
      return -1;
    }
    fleet_server *killed = &s->servers[KILLED];
    if (killed->p != NULL && t >= next_kill && t < end - KILL_DOWN_S - 1) {
      io_proc_signal(killed->p, SIGKILL);
      io_proc_stop(killed->p, 1000);
      killed->p = NULL;
      r->kills++;
      restart_at = t + KILL_DOWN_S;
      next_kill += KILL_PERIOD_S;
    }
    if (killed->p == NULL && restart_at >= 0 && t >= restart_at) {
      char suffix[32];
      snprintf(suffix, sizeof(suffix), ".restart%d", r->kills);
      if (io_fleet_server_start(s->o->server_bin, s->dir, "s0", s->port, suffix, kServerExtra,
                                killed) != 0) {
        snprintf(r->error, sizeof(r->error), "server s0 did not restart on port %d", s->port);
        return -1;
      }
      r->restarts++;
      restart_at = -1;
    }
    if (flap_back < 0 && t >= next_flap && t < end - FLAP_OUT_S - 1) {
      set_members(s, FLAPPER);
      r->flaps++;
      flap_back = t + FLAP_OUT_S;
      next_flap += FLAP_PERIOD_S;
    }
    if (flap_back >= 0 && t >= flap_back) {
      set_members(s, -1);
      flap_back = -1;
    }
    /* until the clients start to wind down (a finished client has no
     * status server to ask) */
    if (t * 1000 >= next_status && t < end - 0.5) {
      query_status(s, q++ % s->n_clients, r);
      next_status = t * 1000 + STATUS_EVERY_MS;
    }
    if (!rss_start_taken && t >= r->warmup_s) {
      for (int k = 0; k < s->n_clients; k++) r->clients[k].rss_start_kib = rss_kib(s->clients[k]);
      rss_start_taken = 1;
    }
    if (!rss_mid_taken && t >= (r->warmup_s + end - 1) / 2) {
      for (int k = 0; k < s->n_clients; k++) r->clients[k].rss_mid_kib = rss_kib(s->clients[k]);
      rss_mid_taken = 1;
    }
    if (!rss_end_taken && t >= end - 1) {
      for (int k = 0; k < s->n_clients; k++) r->clients[k].rss_end_kib = rss_kib(s->clients[k]);
      rss_end_taken = 1;
    }
    for (int k = 0; k < s->n_clients; k++) {
      if (!finished[k] && io_proc_wait(s->clients[k], 0, NULL) == 0) {
        finished[k] = 1;
        done++;
      }
    }
    io_fleet_sleep_ms(20);
  }
  if (!rss_start_taken || !rss_end_taken) {
    snprintf(r->error, sizeof(r->error), "a client ended before its memory was read");
    return -1;
  }
  return 0;
}

static void stop_all(soak *s) {
  for (int k = 0; k < s->n_clients; k++) {
    if (s->status[k]) grpc_channel_destroy(s->status[k]);
    s->status[k] = NULL;
    if (s->clients[k]) io_proc_stop(s->clients[k], 5000);
    s->clients[k] = NULL;
  }
  for (int i = 0; i < s->n_servers; i++) {
    if (s->servers[i].p) io_proc_signal(s->servers[i].p, SIGTERM);
  }
  for (int i = 0; i < s->n_servers; i++) {
    if (s->servers[i].p) io_proc_stop(s->servers[i].p, 10000);
    s->servers[i].p = NULL;
  }
  if (s->dns) io_fleet_dns_stop(s->dns);
  s->dns = NULL;
}

/* Calls per client from its summary; failures on the killed server's
 * address are the kills' own, every other failure counts against the run. */
static int read_summaries(soak *s, fleet_soak_result *r) {
  char killed_addr[64];
  snprintf(killed_addr, sizeof(killed_addr), "ipv4:%s:%d", s->servers[KILLED].host, s->port);
  for (int k = 0; k < s->n_clients; k++) {
    char err[160];
    json_value *v = io_json_parse_file(s->summary[k], err, sizeof(err));
    if (v == NULL) {
      snprintf(r->error, sizeof(r->error), "client %d summary: %.100s", k, err);
      return -1;
    }
    fleet_soak_client *c = &r->clients[k];
    c->ok = (long)io_json_get_number(v, "ok", 0);
    c->failed = (long)io_json_get_number(v, "failed", 0);
    const json_value *fa = io_json_get(v, "failed_addresses");
    for (size_t i = 0; i < io_json_size(fa); i++) {
      if (strcmp(io_json_key_at(fa, i), killed_addr) == 0)
        c->failed_on_killed += (long)io_json_number(io_json_at(fa, i), 0);
    }
    io_json_free(v);
    r->ok += c->ok;
    r->failed += c->failed;
    r->failed_on_killed += c->failed_on_killed;
  }
  r->failed_live = r->failed - r->failed_on_killed;
  return 0;
}

int io_fleet_soak_run(const fleet_soak_opts *o, fleet_soak_result *r) {
  if (r == NULL) return -1;
  memset(r, 0, sizeof(*r));
  if (o == NULL || o->server_bin == NULL || o->client_bin == NULL || o->out_dir == NULL) {
    snprintf(r->error, sizeof(r->error), "soak: missing binaries or output directory");
    return -1;
  }
  static soak s; /* large: not on the stack */
  memset(&s, 0, sizeof(s));
  s.o = o;
  s.n_servers = o->servers > 0 ? o->servers : 6;
  s.n_clients = o->clients > 0 ? o->clients : 3;
  if (s.n_servers < 3 || s.n_servers > MAX_SERVERS || s.n_clients > FLEET_SOAK_MAX_CLIENTS) {
    snprintf(r->error, sizeof(r->error), "soak: servers must be in [3, %d], clients in [1, %d]",
             MAX_SERVERS, FLEET_SOAK_MAX_CLIENTS);
    return -1;
  }
  r->servers = s.n_servers;
  r->n_clients = s.n_clients;
  r->duration_s = o->duration_s > 0 ? o->duration_s : FLEET_SOAK_DEFAULT_DURATION_S;
  r->rate = o->rate > 0 ? o->rate : 200;
  r->rss_bound_kib = o->rss_bound_kib > 0 ? o->rss_bound_kib : FLEET_SOAK_DEFAULT_RSS_BOUND_KIB;
  /* the warm-up fills the sticky tables (maxSessions keys at the rate) and
   * lets the first connections settle before memory is read */
  r->warmup_s = r->duration_s * 0.2;
  if (r->warmup_s > 30) r->warmup_s = 30;
  if (r->warmup_s < 3) r->warmup_s = 3;
  if (r->duration_s < r->warmup_s + 5) {
    snprintf(r->error, sizeof(r->error), "soak: --duration-s must be at least 8");
    return -1;
  }
  snprintf(s.dir, sizeof(s.dir), "%s/soak", o->out_dir);
  mkdir(s.dir, 0755);
  int ok = 0;
  grpc_init(); /* the status channels */
  if (start_servers(&s, r) == 0 && start_clients(&s, r) == 0 && run_timeline(&s, r) == 0) ok = 1;
  stop_all(&s);
  grpc_shutdown();
  if (ok && read_summaries(&s, r) != 0) ok = 0;
  if (!ok) return -1;
  r->complete = 1;
  int memory_ok = 1;
  for (int k = 0; k < s.n_clients; k++) {
    const fleet_soak_client *c = &r->clients[k];
    long growth = c->rss_end_kib - c->rss_start_kib;
    if (c->rss_start_kib <= 0 || c->rss_end_kib <= 0 || growth > r->rss_bound_kib) memory_ok = 0;
    if (growth > r->rss_growth_max_kib) r->rss_growth_max_kib = growth;
  }
  r->pass = r->failed_live == 0 && memory_ok && r->ok > 0;
  if (!r->pass) {
    snprintf(r->error, sizeof(r->error), "%ld failed calls on live servers, RSS growth up to %ld KiB (bound %ld)",
             r->failed_live, r->rss_growth_max_kib, r->rss_bound_kib);
  }
  return r->pass ? 0 : -1;
}

void io_fleet_soak_table(FILE *out, const fleet_soak_result *r) {
  fprintf(out, "soak: %g s, %d servers, %d clients at %g calls/s each, every call a new sticky key (maxSessions %d)\n",
          r->duration_s, r->servers, r->n_clients, r->rate, FLEET_SOAK_MAX_SESSIONS);
  fprintf(out, "disturbances: %d kills of s0 (%d restarts), %d flaps of s1 in DNS, %ld status queries (%ld failed)\n",
          r->kills, r->restarts, r->flaps, r->status_ok + r->status_failed, r->status_failed);
  fprintf(out, "calls: %ld ok, %ld failed: %ld on the killed server, %ld on live servers\n", r->ok,
          r->failed, r->failed_on_killed, r->failed_live);
  fprintf(out, "%-8s %10s %10s %10s %10s %9s %8s %9s\n", "client", "calls", "rss@warm", "rss@mid",
          "rss@end", "growth", "failed", "sessions");
  for (int k = 0; k < r->n_clients; k++) {
    const fleet_soak_client *c = &r->clients[k];
    char name[16];
    snprintf(name, sizeof(name), "c%d", k);
    fprintf(out, "%-8s %10ld %8ld K %8ld K %8ld K %7ld K %8ld %9ld\n", name, c->ok + c->failed,
            c->rss_start_kib, c->rss_mid_kib, c->rss_end_kib, c->rss_end_kib - c->rss_start_kib,
            c->failed, c->sessions_max);
  }
  fprintf(out, "(VmRSS after the %g s warm-up, half-way and 1 s before the end; growth bound %ld KiB per client)\n",
          r->warmup_s, r->rss_bound_kib);
  if (!r->complete) fprintf(out, "INCOMPLETE: %s\n", r->error);
  else fprintf(out, "%s%s%s\n", r->pass ? "PASS" : "FAIL", r->pass ? "" : ": ", r->pass ? "" : r->error);
}

void io_fleet_soak_json(FILE *out, const fleet_soak_result *r) {
  fprintf(out,
          "{\"soak\":{\"complete\":%s,\"pass\":%s,\"error\":", r->complete ? "true" : "false",
          r->pass ? "true" : "false");
  ap_json_write_string(out, r->error);
  fprintf(out,
          ",\"duration_s\":%g,\"warmup_s\":%g,\"servers\":%d,\"clients\":%d,\"rate\":%g,"
          "\"max_sessions\":%d,\"kills\":%d,\"restarts\":%d,\"flaps\":%d,\"status_ok\":%ld,"
          "\"status_failed\":%ld,\"ok\":%ld,\"failed\":%ld,\"failed_on_killed\":%ld,"
          "\"failed_live\":%ld,\"rss_bound_kib\":%ld,\"rss_growth_max_kib\":%ld,\"per_client\":[",
          r->duration_s, r->warmup_s, r->servers, r->n_clients, r->rate, FLEET_SOAK_MAX_SESSIONS,
          r->kills, r->restarts, r->flaps, r->status_ok, r->status_failed, r->ok, r->failed,
          r->failed_on_killed, r->failed_live, r->rss_bound_kib, r->rss_growth_max_kib);
  for (int k = 0; k < r->n_clients; k++) {
    const fleet_soak_client *c = &r->clients[k];
    fprintf(out,
            "%s{\"ok\":%ld,\"failed\":%ld,\"failed_on_killed\":%ld,\"rss_start_kib\":%ld,"
            "\"rss_mid_kib\":%ld,\"rss_end_kib\":%ld,\"sessions_max\":%ld}",
            k ? "," : "", c->ok, c->failed, c->failed_on_killed, c->rss_start_kib, c->rss_mid_kib,
            c->rss_end_kib, c->sessions_max);
  }
  fprintf(out, "]}}\n");
}

/* --- the scenario table's row --- */

int io_fleet_soak_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  if (a == NULL || out == NULL) return -1;
  fleet_soak_opts so = {a->server_bin, a->client_bin, a->out_dir, a->duration_s,
                        (int)a->servers, (int)a->clients, a->rate, a->rss_bound_kib};
  static fleet_soak_result res;
  int rc = io_fleet_soak_run(&so, &res);
  out->rows = &res;
  out->n_rows = 1;
  return rc != 0 ? -1 : 0;
}

void io_fleet_soak_write_json(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_soak_json(f, out->rows);
}

void io_fleet_soak_write_table(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_soak_table(f, out->rows);
}
