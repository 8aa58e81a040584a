/* peers: client processes that discover each other through a peer target,
 * one joining and one leaving, measured at the servers and predicted by
 * the core (see fleet_peers.h).
 *
 * The servers are a static ipv4: list (the backends never change); the
 * peer list is the fleet's DNS answer for "peers.test", each client's own
 * address (fleet_net.h; on loopback 127.0.1.x, a label: nothing listens
 * there, nor on the peer port).
 * Each client names its own entry (peerSelf) on loopback, where its
 * address is a label; on a network where it is the client's own interface
 * address (netns) it leaves peerSelf out and the policy finds its entry
 * from its interfaces, as in a real deployment. It re-resolves the peer
 * target every PEER_REFRESH_MS; the runner reads every client's ring from
 * its status server (GetRingState) to know when all show the new peer
 * count and fingerprint, and when the servers' connection counts equal
 * what the clients hold. */
#define _GNU_SOURCE
#include "interop/fleet/fleet_peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <grpc/grpc.h>

#include "aperture/v1/status.pb-c.h"
#include "interop/fleet/churn_model.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_dns.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_server.h"
#include "interop/common/proc.h"
#include "interop/common/unary_call.h"
#include "policy/core/ring/ap_order.h"

#define MAX_N 60
#define MAX_C 16                 /* clients after the join */
#define PEER_PORT 7001
#define PEER_REFRESH_MS 200
#define SETTLE_TIMEOUT_MS 20000
#define POLL_MS 50
#define TRAFFIC_MS 500
#define LEAVER 1                 /* identity of the client that leaves */

typedef struct peers_fleet {
  const fleet_peers_opts *o;
  char mode[32];
  ap_mode model;
  int n, c, a;                 /* servers, clients before the join, minAperture */
  char dir[4200];
  fleet_server servers[MAX_N];
  int port;
  char addr[MAX_N][48];        /* "127.0.0.X:PORT", as the policy names them */
  char target[MAX_N * 48 + 8]; /* ipv4:... */
  fleet_dns *dns;
  char peer_target[160];       /* the DNS target of the peer list */
  char ip[MAX_C][FLEET_NET_HOST_LEN]; /* client identity k: its own address */
  int listed[MAX_C];           /* in the DNS answer */
  int active[MAX_C];           /* counted in the fleet's rings */
  proc *p[MAX_C];
  grpc_channel *status[MAX_C];
  char summary[MAX_C][4400];
  long held_by[MAX_C];         /* sessions each client held at its last poll */
} peers_fleet;

static int set_peers(peers_fleet *pf) {
  const char *ips[MAX_C];
  size_t m = 0;
  for (int k = 0; k < MAX_C; k++)
    if (pf->listed[k]) ips[m++] = pf->ip[k];
  return io_fleet_dns_set(pf->dns, ips, m);
}

static int start_servers(peers_fleet *pf) {
  snprintf(pf->dir, sizeof(pf->dir), "%s/peers-%s", pf->o->out_dir, pf->mode);
  mkdir(pf->dir, 0755);
  size_t at = (size_t)snprintf(pf->target, sizeof(pf->target), "ipv4:");
  for (int i = 0; i < pf->n; i++) {
    char name[16];
    snprintf(name, sizeof(name), "s%d", i);
    io_fleet_net_server_host(i, 1, pf->servers[i].host, sizeof(pf->servers[i].host));
    if (io_fleet_server_start(pf->o->server_bin, pf->dir, name, pf->port, "", NULL, &pf->servers[i]) != 0)
      return -1;
    pf->port = pf->servers[i].port;
    snprintf(pf->addr[i], sizeof(pf->addr[i]), "%s:%d", pf->servers[i].host, pf->port);
    at += (size_t)snprintf(pf->target + at, sizeof(pf->target) - at, "%s%s", i ? "," : "",
                           pf->addr[i]);
  }
  for (int k = 0; k < MAX_C; k++) io_fleet_net_client_host(k, pf->ip[k], sizeof(pf->ip[k]));
  pf->dns = io_fleet_dns_start("peers.test");
  if (pf->dns == NULL) return -1;
  return io_fleet_dns_target(pf->dns, PEER_PORT, pf->peer_target, sizeof(pf->peer_target));
}

static int start_client(peers_fleet *pf, int k, char *err, size_t err_len) {
  char config[600], rate[32], log[4400], self[80] = "";
  if (!io_fleet_net_own_interfaces()) snprintf(self, sizeof(self), "\"peerSelf\":\"%s\",", pf->ip[k]);
  snprintf(config, sizeof(config),
           "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"%s\",\"minAperture\":%d,"
           "\"eagerConnect\":true,\"peerTarget\":\"%s\","
           "%s\"peerRefreshMs\":%d}}]}",
           pf->mode, pf->a, pf->peer_target, self, PEER_REFRESH_MS);
  snprintf(rate, sizeof(rate), "%g", pf->o->rate > 0 ? pf->o->rate : 20.0);
  snprintf(pf->summary[k], sizeof(pf->summary[k]), "%s/client%d.json", pf->dir, k);
  snprintf(log, sizeof(log), "%s/client%d.log", pf->dir, k);
  fleet_client_opts co =
      io_fleet_client_until_stopped(pf->o->client_bin, pf->target, config, rate, pf->summary[k]);
  co.status_server = 1;
  co.host = pf->ip[k];
  pf->p[k] = io_fleet_client_start(&co, log);
  const char *why = "did not start";
  pf->status[k] = pf->p[k] ? io_fleet_client_status_channel(pf->p[k], &why) : NULL;
  if (pf->status[k] == NULL) {
    snprintf(err, err_len, "client %d %s (see %.100s)", k, why, pf->dir);
    return -1;
  }
  return 0;
}

/* Stops client k and adds its calls to the row. */
static void stop_client(peers_fleet *pf, int k, fleet_peers_row *row) {
  if (pf->status[k]) grpc_channel_destroy(pf->status[k]);
  pf->status[k] = NULL;
  if (pf->p[k] == NULL) return;
  io_proc_stop(pf->p[k], 10000);
  pf->p[k] = NULL;
  if (io_fleet_client_read_summary(pf->summary[k], &row->ok, &row->failed) != 0) {
    if (row->error[0] == '\0') snprintf(row->error, sizeof(row->error), "client %d wrote no summary", k);
    row->complete = 0;
  }
}

/* Reads client k's ring: 1 when it shows `count` peers from the peer
 * target; fingerprint copied to fp[17]. With `full`, also 1 only when no
 * member is widened and every member is READY; held[] gets its members. */
static int client_ring(peers_fleet *pf, int k, uint32_t count, int full, long *held, char *fp) {
  unary_result r;
  fp[0] = '\0';
  const Aperture__V1__RingState *ring = io_fleet_client_ring_state(pf->status[k], &r);
  int ok = ring != NULL && ring->peer_count == count &&
       ring->coordinate_source == APERTURE__V1__COORDINATE_SOURCE__COORDINATE_SOURCE_PEER_TARGET;
  if (ok) snprintf(fp, 17, "%s", ring->peer_fingerprint);
  if (ok && full) {
    ok = !ring->truncated && ring->widened == 0 && ring->n_endpoints == (size_t)pf->n;
    long mine = 0;
    for (size_t e = 0; ok && e < ring->n_endpoints; e++) {
      const Aperture__V1__EndpointState *ep = ring->endpoints[e];
      if (!ep->in_aperture) continue;
      if (ep->connectivity != APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_READY) ok = 0;
      for (int i = 0; i < pf->n; i++)
        if (strcmp(pf->addr[i], ep->address) == 0) held[i]++;
      mine++;
    }
    pf->held_by[k] = mine;
  }
  io_unary_result_free(&r);
  return ok;
}

static uint32_t active_count(const peers_fleet *pf) {
  uint32_t m = 0;
  for (int k = 0; k < MAX_C; k++) m += pf->active[k] != 0;
  return m;
}

/* 1 when every active client shows the active count of peers with one
 * and the same fingerprint. */
static int agree_now(void *ctx) {
  peers_fleet *pf = ctx;
  uint32_t count = active_count(pf);
  int ok = 1;
  char first[17] = "", fp[17];
  for (int k = 0; ok && k < MAX_C; k++) {
    if (!pf->active[k]) continue;
    ok = client_ring(pf, k, count, 0, NULL, fp) && fp[0] != '\0';
    if (ok && first[0] == '\0') memcpy(first, fp, sizeof(first));
    ok = ok && strcmp(first, fp) == 0;
  }
  return ok;
}

/* Waits until the active clients agree (agree_now); *agree_ms = time from
 * `t0`. 1 on success. */
static int wait_agree(peers_fleet *pf, double t0, double *agree_ms) {
  if (io_fleet_wait_steady(agree_now, pf, 1, SETTLE_TIMEOUT_MS, POLL_MS) != 1) return 0;
  *agree_ms = io_fleet_now_ms() - t0;
  return 1;
}

/* 1 when the active clients' members are all READY and each server's
 * open connections equal the clients holding it. */
static int settled_now(void *ctx) {
  peers_fleet *pf = ctx;
  uint32_t count = active_count(pf);
  long held[MAX_N];
  memset(held, 0, sizeof(held));
  int ok = 1;
  char fp[17];
  for (int k = 0; k < MAX_C; k++)
    if (pf->active[k]) ok = client_ring(pf, k, count, 1, held, fp) && ok;
  return ok && io_fleet_servers_hold(pf->servers, pf->n, held);
}

/* An enum value's name in the status proto ("?" when unknown). */
static const char *enum_name(const ProtobufCEnumDescriptor *d, int value) {
  const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(d, value);
  return v != NULL ? v->name : "?";
}

/* For a fleet that did not settle, on stderr (the fleet's log): what each
 * active client's ring shows and what each server holds, so the log says
 * which condition of agree_now/settled_now failed. */
static void log_unsettled(peers_fleet *pf, const char *when) {
  fprintf(stderr, "fleet: peers / %s: not settled %s; %u clients active\n", pf->mode, when,
          active_count(pf));
  for (int k = 0; k < MAX_C; k++) {
    if (!pf->active[k]) continue;
    unary_result r;
    const Aperture__V1__RingState *ring = io_fleet_client_ring_state(pf->status[k], &r);
    if (ring == NULL) {
      fprintf(stderr, "  client %d: no status answer\n", k);
      io_unary_result_free(&r);
      continue;
    }
    fprintf(stderr, "  client %d: peer %u of %u, source %s, fingerprint %s, widened %u, members:",
            k, ring->peer_index, ring->peer_count,
            enum_name(&aperture__v1__coordinate_source__descriptor, (int)ring->coordinate_source),
            ring->peer_fingerprint, ring->widened);
    for (size_t e = 0; e < ring->n_endpoints; e++) {
      const Aperture__V1__EndpointState *ep = ring->endpoints[e];
      if (ep->in_aperture)
        fprintf(stderr, " %s (%s)", ep->address,
                enum_name(&aperture__v1__connectivity_state__descriptor, (int)ep->connectivity));
    }
    fprintf(stderr, "\n");
    io_unary_result_free(&r);
  }
  for (int i = 0; i < pf->n; i++) {
    long opened = -1, current = -1;
    if (pf->servers[i].p) io_fleet_server_counts(pf->servers[i].stats, &opened, &current);
    fprintf(stderr, "  server %s: %ld connections open, %ld opened\n", pf->addr[i], current, opened);
  }
}

/* Waits until settled_now holds two polls in a row. */
static int settle(peers_fleet *pf) {
  return io_fleet_wait_steady(settled_now, pf, 2, SETTLE_TIMEOUT_MS, POLL_MS) == 1;
}

typedef struct counts {
  long opened[MAX_N], current[MAX_N];
} counts;

static void snapshot(const peers_fleet *pf, counts *out) {
  for (int i = 0; i < pf->n; i++)
    io_fleet_server_counts(pf->servers[i].stats, &out->opened[i], &out->current[i]);
}

static long moved_total(const peers_fleet *pf, const counts *a, const counts *b) {
  long sum = 0;
  for (int i = 0; i < pf->n; i++)
    sum += io_fleet_server_moved(a->opened[i], a->current[i], b->opened[i], b->current[i]);
  return sum;
}

static long total_current(const peers_fleet *pf, const counts *c) {
  long sum = 0;
  for (int i = 0; i < pf->n; i++) sum += c->current[i];
  return sum;
}

/* Peer index of every identity in `set` (others -1), as the policy orders
 * the peer entries. */
static int indices(const peers_fleet *pf, const int *set, int *index_of, uint32_t *count) {
  char entries[MAX_C][48];
  const char *ptrs[MAX_C];
  int who[MAX_C];
  size_t m = 0, order[MAX_C];
  for (int k = 0; k < MAX_C; k++) {
    index_of[k] = -1;
    if (!set[k]) continue;
    snprintf(entries[m], sizeof(entries[m]), "%s:%d", pf->ip[k], PEER_PORT);
    ptrs[m] = entries[m];
    who[m++] = k;
  }
  if (m == 0 || ap_order_endpoints(ptrs, m, order, NULL) != AP_OK) return -1;
  for (size_t pos = 0; pos < m; pos++) index_of[who[order[pos]]] = (int)pos;
  *count = (uint32_t)m;
  return 0;
}

/* The core's sessions changed from the fleet `before` to `after`
 * (identity sets), and the sessions of the one identity in only one. */
static int predict(const peers_fleet *pf, const int *before, const int *after,
                   fleet_peers_change *out, char *err, size_t err_len) {
  int ib[MAX_C], ia[MAX_C];
  uint32_t cb = 0, ca = 0;
  if (indices(pf, before, ib, &cb) != 0 || indices(pf, after, ia, &ca) != 0) {
    snprintf(err, err_len, "model: cannot order the peers");
    return -1;
  }
  const char *addrs[MAX_N];
  for (int i = 0; i < pf->n; i++) addrs[i] = pf->addr[i];
  churn_model_fleet fb = {pf->model, cb, (uint32_t)pf->a, NULL};
  churn_model_fleet fa = {pf->model, ca, (uint32_t)pf->a, NULL};
  long changed = 0, optimum = 0;
  for (int k = 0; k < MAX_C; k++) {
    uint8_t mb[MAX_N], ma[MAX_N];
    memset(mb, 0, sizeof(mb));
    memset(ma, 0, sizeof(ma));
    ap_error e;
    if ((ib[k] >= 0 && io_churn_model_members(&fb, addrs, (size_t)pf->n, (uint32_t)ib[k], mb, &e) != AP_OK) ||
        (ia[k] >= 0 && io_churn_model_members(&fa, addrs, (size_t)pf->n, (uint32_t)ia[k], ma, &e) != AP_OK)) {
      snprintf(err, err_len, "model: %.150s", e.message);
      return -1;
    }
    long diff = 0;
    for (int i = 0; i < pf->n; i++) diff += mb[i] != ma[i];
    changed += diff;
    if ((ib[k] >= 0) != (ia[k] >= 0)) optimum += diff;
  }
  out->predicted = changed;
  out->predicted_optimum = optimum;
  return 0;
}

static void run_mode(peers_fleet *pf, fleet_peers_row *row) {
  memset(row, 0, sizeof(*row));
  snprintf(row->mode, sizeof(row->mode), "%s", pf->mode);
  row->servers = pf->n;
  row->clients = pf->c;
  row->min_aperture = pf->a;
  row->complete = 1;
  int joiner = pf->c;
  int before[MAX_C] = {0}, after[MAX_C] = {0};
  if (start_servers(pf) != 0) {
    snprintf(row->error, sizeof(row->error), "the servers or the DNS server did not start");
    row->complete = 0;
    return;
  }
  for (int k = 0; k < pf->c; k++) pf->listed[k] = pf->active[k] = 1;
  set_peers(pf);
  for (int k = 0; k < pf->c && row->complete; k++)
    if (start_client(pf, k, row->error, sizeof(row->error)) != 0) row->complete = 0;
  double agree = 0;
  if (row->complete && !(wait_agree(pf, io_fleet_now_ms(), &agree) && settle(pf))) {
    snprintf(row->error, sizeof(row->error), "the clients did not settle before the join (see %.100s)", pf->dir);
    log_unsettled(pf, "before the join");
    row->complete = 0;
  }

  /* Join: the new client's address enters the peer answer, then it starts. */
  counts c0, c1, c2;
  if (row->complete) {
    io_fleet_sleep_ms(TRAFFIC_MS);
    memcpy(before, pf->active, sizeof(before));
    memcpy(after, pf->active, sizeof(after));
    after[joiner] = 1;
    predict(pf, before, after, &row->join, row->error, sizeof(row->error));
    snapshot(pf, &c0);
    row->join.sessions_before = total_current(pf, &c0);
    double t0 = io_fleet_now_ms();
    pf->listed[joiner] = pf->active[joiner] = 1;
    set_peers(pf);
    if (start_client(pf, joiner, row->error, sizeof(row->error)) != 0) row->complete = 0;
    int agreed = row->complete && wait_agree(pf, t0, &row->join.agree_ms);
    row->join.settled = agreed && settle(pf);
    if (!row->join.settled) log_unsettled(pf, "after the join");
    snapshot(pf, &c1);
    row->join.measured = row->complete;
    row->join.changed = moved_total(pf, &c0, &c1);
    row->join.optimum = pf->held_by[joiner];
  }

  /* Leave: the leaver's address leaves the peer answer; once the others
   * agree, it stops. */
  if (row->complete) {
    io_fleet_sleep_ms(TRAFFIC_MS);
    memcpy(before, pf->active, sizeof(before));
    memcpy(after, pf->active, sizeof(after));
    after[LEAVER] = 0;
    predict(pf, before, after, &row->leave, row->error, sizeof(row->error));
    snapshot(pf, &c1);
    row->leave.sessions_before = total_current(pf, &c1);
    long leaver_sessions = pf->held_by[LEAVER];
    double t0 = io_fleet_now_ms();
    pf->listed[LEAVER] = pf->active[LEAVER] = 0;
    set_peers(pf);
    int agreed = wait_agree(pf, t0, &row->leave.agree_ms);
    stop_client(pf, LEAVER, row);
    row->leave.settled = agreed && settle(pf);
    if (!row->leave.settled) log_unsettled(pf, "after the leave");
    snapshot(pf, &c2);
    row->leave.measured = 1;
    row->leave.changed = moved_total(pf, &c1, &c2);
    row->leave.optimum = leaver_sessions;
    io_fleet_sleep_ms(TRAFFIC_MS);
  }
  for (int k = 0; k < MAX_C; k++) stop_client(pf, k, row);
  if (row->complete && !(row->join.settled && row->leave.settled)) {
    snprintf(row->error, sizeof(row->error), "a change did not settle (see %.100s)", pf->dir);
    row->complete = 0;
  }
  for (int i = 0; i < pf->n; i++) {
    if (pf->servers[i].p) io_proc_stop(pf->servers[i].p, 10000);
    pf->servers[i].p = NULL;
  }
  io_fleet_dns_stop(pf->dns);
  pf->dns = NULL;
}

int io_fleet_peers_run(const fleet_peers_opts *o, fleet_peers_row *rows, int max_rows,
                    int *n_rows) {
  int n = o->servers > 0 ? o->servers : 12, c = o->clients > 0 ? o->clients : 4;
  int a = o->min_aperture > 0 ? o->min_aperture : 3;
  if (n < 2 || n > MAX_N || c < 2 || c + 1 > MAX_C) {
    fprintf(stderr, "fleet: peers: servers must be in [2, %d] and clients in [2, %d]\n", MAX_N,
            MAX_C - 1);
    return -1;
  }
  grpc_init();
  int failures = 0;
  const char *list = o->modes ? o->modes : FLEET_PEERS_DEFAULT_MODES;
  for (const char *p = list; *p && *n_rows < max_rows;) {
    size_t len = strcspn(p, ",");
    static peers_fleet pf;
    memset(&pf, 0, sizeof(pf));
    pf.o = o;
    pf.n = n;
    pf.c = c;
    pf.a = a;
    snprintf(pf.mode, sizeof(pf.mode), "%.*s", (int)(len < 31 ? len : 31), p);
    p += len + (p[len] == ',');
    if (ap_mode_parse(pf.mode, &pf.model, NULL) != AP_OK || pf.model == AP_MODE_RANDOM) {
      fprintf(stderr, "fleet: peers: mode '%s' is not a coordinate mode (continuous, discrete, "
                      "vdc, smooth, mesh)\n", pf.mode);
      failures++;
      continue;
    }
    fleet_peers_row *row = &rows[(*n_rows)++];
    fprintf(stderr, "fleet: peers / %s ...\n", pf.mode);
    run_mode(&pf, row);
    if (!row->complete) {
      fprintf(stderr, "fleet: peers / %s failed: %s\n", pf.mode, row->error);
      failures++;
    }
  }
  grpc_shutdown();
  return failures ? -1 : 0;
}

static void change_json(FILE *out, const char *name, const fleet_peers_change *c) {
  fprintf(out,
          "\"%s\":{\"measured\":%s,\"settled\":%s,\"sessions_before\":%ld,\"changed\":%ld,"
          "\"predicted\":%ld,\"optimum\":%ld,\"predicted_optimum\":%ld,\"agree_ms\":%.1f}",
          name, c->measured ? "true" : "false", c->settled ? "true" : "false",
          c->sessions_before, c->changed, c->predicted, c->optimum, c->predicted_optimum,
          c->agree_ms);
}

void io_fleet_peers_json(FILE *out, const fleet_peers_row *rows, int n) {
  fprintf(out, "{\"peers\":[");
  for (int i = 0; i < n; i++) {
    const fleet_peers_row *r = &rows[i];
    fprintf(out,
            "%s\n{\"mode\":\"%s\",\"servers\":%d,\"clients\":%d,\"min_aperture\":%d,"
            "\"complete\":%s,\"error\":\"%s\",\"ok\":%ld,\"failed\":%ld,",
            i ? "," : "", r->mode, r->servers, r->clients, r->min_aperture,
            r->complete ? "true" : "false", r->error, r->ok, r->failed);
    change_json(out, "join", &r->join);
    fputc(',', out);
    change_json(out, "leave", &r->leave);
    fputc('}', out);
  }
  fprintf(out, "]}\n");
}

void io_fleet_peers_table(FILE *out, const fleet_peers_row *rows, int n) {
  if (n == 0) return;
  fprintf(out, "peers: %d servers, %d clients + 1 joining, then 1 leaving; minAperture %d\n"
               "changed = sessions closed + opened, measured at the servers (predicted by the "
               "core); optimum = the joiner's / leaver's own sessions; agree = until every "
               "client showed the same peer fingerprint\n\n",
          rows[0].servers, rows[0].clients, rows[0].min_aperture);
  fprintf(out, "  mode        | join: changed (pred)  optimum (pred)  agree ms | leave: changed "
               "(pred)  optimum (pred)  agree ms | ok      failed\n");
  for (int i = 0; i < n; i++) {
    const fleet_peers_row *r = &rows[i];
    fprintf(out, "  %-11s | %7ld (%4ld)  %7ld (%4ld)  %8.0f | %7ld (%4ld)  %7ld (%4ld)  %8.0f | "
                 "%-7ld %ld%s%s\n",
            r->mode, r->join.changed, r->join.predicted, r->join.optimum,
            r->join.predicted_optimum, r->join.agree_ms, r->leave.changed, r->leave.predicted,
            r->leave.optimum, r->leave.predicted_optimum, r->leave.agree_ms, r->ok, r->failed,
            r->complete ? "" : "  INCOMPLETE: ", r->complete ? "" : r->error);
  }
}

/* --- the scenario table's row --- */

int io_fleet_peers_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  if (a == NULL || out == NULL) return -1;
  fleet_peers_opts po = {a->server_bin, a->client_bin, a->out_dir, a->modes,
                         (int)a->servers, (int)a->clients, (int)a->min_aperture, a->rate};
  static fleet_peers_row rows[FLEET_PEERS_MAX_MODES];
  int n = 0;
  int rc = io_fleet_peers_run(&po, rows, FLEET_PEERS_MAX_MODES, &n);
  out->rows = rows;
  out->n_rows = n;
  return rc != 0 ? -1 : 0;
}

void io_fleet_peers_write_json(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_peers_json(f, out->rows, out->n_rows);
}

void io_fleet_peers_write_table(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_peers_table(f, out->rows, out->n_rows);
}
