/* affinity: keys through a real fleet, owners per key (see
 * fleet_affinity.h).
 *
 * The owners come from the clients themselves: each client's
 * LoadBalancerStatsService counts its next calls per method and server
 * (rpcs_by_method), and each method carries one key, so per method is per
 * key. The servers never see the key. */
#define _GNU_SOURCE
#include "interop/fleet/fleet_affinity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <grpc/grpc.h>

#include "aperture/v1/status.pb-c.h"
#include "grpc/testing/messages.pb-c.h"
#include "interop/common/json_read.h"
#include "interop/common/json_write.h"
#include "interop/common/proc.h"
#include "interop/common/unary_call.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_server.h"

#define MAX_N FLEET_AFFINITY_MAX_SERVERS
#define MAX_C FLEET_AFFINITY_MAX_CLIENTS
#define WINDOWS 3          /* windows of each client's next calls */
#define WINDOW_CALLS 60    /* calls per window: 30 per key */
#define WINDOW_GAP_MS 300  /* between windows: the keys are looked up again later */
#define SETTLE_TIMEOUT_MS 20000
#define POLL_MS 100

typedef struct affinity_fleet {
  const fleet_affinity_opts *o;
  int n_servers, n_clients, min_aperture;
  char dir[4200];
  fleet_server servers[MAX_N];
} affinity_fleet;

typedef struct clients {
  int n;
  proc *p[MAX_C];
  grpc_channel *stats[MAX_C], *status[MAX_C];
  char summary[MAX_C][4400];
} clients;

static int parse_kinds(const char *list, char out[][16], int max, char *err, size_t err_len) {
  int n = 0;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    int known = (len == 6 && strncmp(p, "sticky", 6) == 0) || (len == 4 && strncmp(p, "hash", 4) == 0);
    if (!known) {
      snprintf(err, err_len, "'%.*s' is not an affinity kind (sticky, hash)", (int)len, p);
      return -1;
    }
    if (n == max) {
      snprintf(err, err_len, "at most %d kinds", max);
      return -1;
    }
    snprintf(out[n++], 16, "%.*s", (int)len, p);
    p += len + (p[len] == ',');
  }
  if (n == 0) snprintf(err, err_len, "no kind given");
  return n > 0 ? n : -1;
}

int io_fleet_affinity_check_kinds(const char *kinds, char *err, size_t err_len) {
  char k[FLEET_AFFINITY_MAX_KINDS][16], local[200];
  if (err == NULL || err_len == 0) {
    err = local;
    err_len = sizeof(local);
  }
  if (kinds == NULL) {
    snprintf(err, err_len, "missing");
    return -1;
  }
  return parse_kinds(kinds, k, FLEET_AFFINITY_MAX_KINDS, err, err_len) < 0 ? -1 : 0;
}

/* --- servers and clients --- */

static int start_servers(affinity_fleet *af, char *err, size_t err_len) {
  snprintf(af->dir, sizeof(af->dir), "%s/affinity", af->o->out_dir);
  mkdir(af->dir, 0755);
  for (int i = 0; i < af->n_servers; i++) {
    char name[16];
    snprintf(name, sizeof(name), "s%d", i);
    io_fleet_net_server_host(i, 0, af->servers[i].host, sizeof(af->servers[i].host));
    if (io_fleet_server_start(af->o->server_bin, af->dir, name, 0, "", NULL, &af->servers[i]) != 0) {
      snprintf(err, err_len, "server %s did not start (see %.100s)", name, af->dir);
      return -1;
    }
  }
  return 0;
}

static void stop_servers(affinity_fleet *af) {
  for (int i = 0; i < af->n_servers; i++) {
    if (af->servers[i].p) io_proc_stop(af->servers[i].p, 10000);
    af->servers[i].p = NULL;
  }
}

static int server_of_address(const affinity_fleet *af, const char *address) {
  const char *colon = strrchr(address, ':');
  int port = colon ? atoi(colon + 1) : -1;
  for (int i = 0; i < af->n_servers; i++) {
    if (af->servers[i].port == port) return i;
  }
  return -1;
}

static int start_clients(affinity_fleet *af, const char *kind, clients *cl, char *err,
                         size_t err_len) {
  char target[MAX_N * 24 + 8] = "ipv4:";
  for (int i = 0; i < af->n_servers; i++) {
    char a[40];
    snprintf(a, sizeof(a), "%s%s:%d", i ? "," : "", af->servers[i].host, af->servers[i].port);
    strcat(target, a);
  }
  char config[400], rate[32], cnt[16];
  snprintf(config, sizeof(config),
           "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"continuous\",\"minAperture\":%d,"
           "\"eagerConnect\":true,\"affinity\":\"%s\",\"affinityHeader\":\"" FLEET_AFFINITY_HEADER
           "\"}}]}",
           af->min_aperture, kind);
  snprintf(rate, sizeof(rate), "%g", af->o->rate > 0 ? af->o->rate : 200.0);
  snprintf(cnt, sizeof(cnt), "%d", af->n_clients);
  for (int c = 0; c < af->n_clients; c++) {
    char idx[16], log[4400], unary_md[64], empty_md[64];
    snprintf(idx, sizeof(idx), "%d", c);
    snprintf(unary_md, sizeof(unary_md), "UnaryCall:" FLEET_AFFINITY_HEADER ":k%d", c);
    snprintf(empty_md, sizeof(empty_md), "EmptyCall:" FLEET_AFFINITY_HEADER ":k%d",
             (c + 1) % af->n_clients);
    const char *extra[] = {"--rpc", "UnaryCall,EmptyCall", "--metadata", unary_md, "--metadata",
                           empty_md, "--stats-port", "0", NULL};
    snprintf(cl->summary[c], sizeof(cl->summary[c]), "%s/%s-client%d.json", af->dir, kind, c);
    snprintf(log, sizeof(log), "%s/%s-client%d.log", af->dir, kind, c);
    fleet_client_opts co =
        io_fleet_client_until_stopped(af->o->client_bin, target, config, rate, cl->summary[c]);
    co.peer_index = idx;
    co.peer_count = cnt;
    co.status_server = 1;
    co.extra = extra;
    cl->p[c] = io_fleet_client_start(&co, log);
    if (cl->p[c] == NULL) {
      snprintf(err, err_len, "client %d did not start", c);
      return -1;
    }
    cl->n = c + 1;
  }
  for (int c = 0; c < cl->n; c++) {
    char line[128];
    const char *why = "";
    /* the client prints its stats address before its status address */
    if (io_proc_wait_line(cl->p[c], "stats listening ", 20000, line, sizeof(line)) != 0) {
      snprintf(err, err_len, "client %d printed no stats address (see %.100s)", c, af->dir);
      return -1;
    }
    cl->stats[c] = io_fleet_client_channel_to(cl->p[c], line);
    cl->status[c] = io_fleet_client_status_channel(cl->p[c], &why);
    if (cl->stats[c] == NULL || cl->status[c] == NULL) {
      snprintf(err, err_len, "client %d %s (see %.100s)", c,
               cl->status[c] ? "no channel to its stats server" : why, af->dir);
      return -1;
    }
  }
  return 0;
}

/* Stops the clients and adds their calls to the row. */
static void stop_clients(clients *cl, fleet_affinity_row *row) {
  for (int c = 0; c < cl->n; c++) {
    if (cl->stats[c]) grpc_channel_destroy(cl->stats[c]);
    if (cl->status[c]) grpc_channel_destroy(cl->status[c]);
    cl->stats[c] = cl->status[c] = NULL;
  }
  for (int c = 0; c < cl->n; c++) {
    if (cl->p[c]) io_proc_stop(cl->p[c], 10000);
    cl->p[c] = NULL;
  }
  for (int c = 0; c < cl->n; c++) {
    json_value *v = io_json_parse_file(cl->summary[c], NULL, 0);
    if (v == NULL) {
      if (row->error[0] == '\0') snprintf(row->error, sizeof(row->error), "client %d wrote no summary", c);
      row->complete = 0;
      continue;
    }
    row->ok += (long)io_json_get_number(v, "ok", 0);
    row->failed += (long)io_json_get_number(v, "failed", 0);
    io_json_free(v);
  }
}

/* --- apertures and owners --- */

/* Reads client c's aperture into member[]; 1 when its ring has every
 * server and every member is READY. */
static int read_aperture(const affinity_fleet *af, grpc_channel *ch, uint8_t *member) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  unary_result r;
  memset(member, 0, MAX_N);
  if (io_unary_call(ch, "/aperture.v1.ApertureStatus/GetRingState", &req.base,
                    &aperture__v1__get_ring_state_response__descriptor, NULL, NULL, 3000,
                    &r) != 0) {
    return 0;
  }
  const Aperture__V1__GetRingStateResponse *resp =
      r.code == GRPC_STATUS_OK ? (const Aperture__V1__GetRingStateResponse *)r.response : NULL;
  int ok = resp != NULL && resp->n_rings == 1;
  const Aperture__V1__RingState *ring = ok ? resp->rings[0] : NULL;
  ok = ok && !ring->truncated && ring->n_endpoints == (size_t)af->n_servers && ring->widened == 0;
  int members = 0;
  for (size_t e = 0; ok && e < ring->n_endpoints; e++) {
    const Aperture__V1__EndpointState *ep = ring->endpoints[e];
    int i = server_of_address(af, ep->address);
    if (i < 0) {
      ok = 0;
    } else if (ep->in_aperture) {
      if (ep->connectivity != APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_READY) ok = 0;
      member[i] = 1;
      members++;
    }
  }
  io_unary_result_free(&r);
  return ok && members > 0;
}

typedef struct settle_check {
  const affinity_fleet *af;
  const clients *cl;
  fleet_affinity_row *row;
} settle_check;

/* 1 when every client's aperture is READY and the same as at the last
 * poll; keeps the latest in row->aperture. */
static int aperture_steady(void *ctx) {
  const settle_check *sc = ctx;
  int ok = 1;
  for (int c = 0; c < sc->cl->n; c++) {
    uint8_t member[MAX_N];
    ok = read_aperture(sc->af, sc->cl->status[c], member) && ok;
    if (memcmp(member, sc->row->aperture[c], MAX_N) != 0) ok = 0;
    memcpy(sc->row->aperture[c], member, MAX_N);
  }
  return ok;
}

/* Waits until every client's aperture is READY and unchanged over two
 * polls; fills row->aperture. 1 when settled. */
static int settle(const affinity_fleet *af, const clients *cl, fleet_affinity_row *row) {
  settle_check sc = {af, cl, row};
  return io_fleet_wait_steady(aperture_steady, &sc, 2, SETTLE_TIMEOUT_MS, POLL_MS) == 1;
}

/* Server index of a peer hostname "s<i>"; -1 when not one of ours. */
static int server_of_hostname(const affinity_fleet *af, const char *name) {
  if (name == NULL || name[0] != 's' || name[1] < '0' || name[1] > '9') return -1;
  char *end = NULL;
  long i = strtol(name + 1, &end, 10);
  return (*end == '\0' && i < af->n_servers) ? (int)i : -1;
}

/* Adds client c's next WINDOW_CALLS calls, per method and server, to its
 * two keys. Returns 0, or -1 when the stats call failed. */
static int take_window(const affinity_fleet *af, const clients *cl, int c,
                       fleet_affinity_row *row) {
  Grpc__Testing__LoadBalancerStatsRequest req = GRPC__TESTING__LOAD_BALANCER_STATS_REQUEST__INIT;
  req.num_rpcs = WINDOW_CALLS;
  req.timeout_sec = 20;
  unary_result r;
  if (io_unary_call(cl->stats[c], "/grpc.testing.LoadBalancerStatsService/GetClientStats",
                    &req.base, &grpc__testing__load_balancer_stats_response__descriptor, NULL,
                    NULL, 30000, &r) != 0) {
    return -1;
  }
  const Grpc__Testing__LoadBalancerStatsResponse *resp =
      r.code == GRPC_STATUS_OK ? (const Grpc__Testing__LoadBalancerStatsResponse *)r.response : NULL;
  int rc = resp != NULL ? 0 : -1;
  for (size_t m = 0; resp != NULL && m < resp->n_rpcs_by_method; m++) {
    const char *method = resp->rpcs_by_method[m]->key;
    const Grpc__Testing__LoadBalancerStatsResponse__RpcsByPeer *by_peer =
        resp->rpcs_by_method[m]->value;
    fleet_affinity_key *k = NULL;
    for (int j = 2 * c; j < 2 * c + 2; j++) {
      if (strcmp(row->keys[j].method, method) == 0) k = &row->keys[j];
    }
    for (size_t p = 0; k != NULL && by_peer != NULL && p < by_peer->n_rpcs_by_peer; p++) {
      int i = server_of_hostname(af, by_peer->rpcs_by_peer[p]->key);
      if (i >= 0) k->calls[i] += by_peer->rpcs_by_peer[p]->value;
    }
  }
  io_unary_result_free(&r);
  return rc;
}

/* Owners, aperture check and agreement from the windows' counts. */
static void judge(const affinity_fleet *af, fleet_affinity_row *row) {
  for (int j = 0; j < row->n_keys; j++) {
    fleet_affinity_key *k = &row->keys[j];
    k->owners = 0;
    k->owner = -1;
    k->in_aperture = 1;
    for (int i = 0; i < af->n_servers; i++) {
      if (k->calls[i] == 0) continue;
      k->owners++;
      if (k->owner < 0 || k->calls[i] > k->calls[k->owner]) k->owner = i;
      if (!row->aperture[k->client][i]) k->in_aperture = 0;
    }
    if (k->owners == 0) k->in_aperture = 0;
    row->keys_one_owner += k->owners == 1;
    row->keys_in_aperture += k->in_aperture;
  }
  /* key k<j>: client j's UnaryCall (entry 2j) and client j-1's EmptyCall */
  for (int j = 0; j < af->n_clients; j++) {
    const fleet_affinity_key *a = &row->keys[2 * j];
    const fleet_affinity_key *b = &row->keys[2 * ((j + af->n_clients - 1) % af->n_clients) + 1];
    row->keys_agree += a->owners == 1 && b->owners == 1 && a->owner == b->owner;
  }
}

static void run_kind(affinity_fleet *af, const char *kind, fleet_affinity_row *row) {
  memset(row, 0, sizeof(*row));
  snprintf(row->kind, sizeof(row->kind), "%s", kind);
  row->servers = af->n_servers;
  row->clients = af->n_clients;
  row->min_aperture = af->min_aperture;
  row->windows = WINDOWS;
  row->n_keys = 2 * af->n_clients;
  for (int c = 0; c < af->n_clients; c++) {
    fleet_affinity_key *u = &row->keys[2 * c], *e = &row->keys[2 * c + 1];
    snprintf(u->key, sizeof(u->key), "k%d", c);
    snprintf(e->key, sizeof(e->key), "k%d", (c + 1) % af->n_clients);
    u->client = e->client = c;
    u->method = "UNARY_CALL";
    e->method = "EMPTY_CALL";
    u->owner = e->owner = -1;
  }
  row->complete = 1;
  clients cl;
  memset(&cl, 0, sizeof(cl));
  if (start_clients(af, kind, &cl, row->error, sizeof(row->error)) != 0) {
    row->complete = 0;
    stop_clients(&cl, row);
    return;
  }
  if (!settle(af, &cl, row)) {
    snprintf(row->error, sizeof(row->error), "the clients' apertures did not settle (see %.100s)",
             af->dir);
    row->complete = 0;
    stop_clients(&cl, row);
    return;
  }
  for (int w = 0; w < WINDOWS && row->complete; w++) {
    if (w > 0) io_fleet_sleep_ms(WINDOW_GAP_MS);
    for (int c = 0; c < cl.n; c++) {
      if (take_window(af, &cl, c, row) != 0) {
        snprintf(row->error, sizeof(row->error), "client %d's stats server did not answer", c);
        row->complete = 0;
        break;
      }
    }
  }
  /* the apertures must not have moved while the windows were taken */
  for (int c = 0; c < cl.n && row->complete; c++) {
    uint8_t member[MAX_N];
    if (!read_aperture(af, cl.status[c], member) || memcmp(member, row->aperture[c], MAX_N) != 0) {
      snprintf(row->error, sizeof(row->error), "client %d's aperture changed during the windows", c);
      row->complete = 0;
    }
  }
  stop_clients(&cl, row);
  judge(af, row);
}

int io_fleet_affinity_run(const fleet_affinity_opts *o, fleet_affinity_row *rows, int max_rows,
                          int *n_rows) {
  if (o == NULL || o->server_bin == NULL || o->client_bin == NULL || o->out_dir == NULL ||
      rows == NULL || n_rows == NULL) {
    fprintf(stderr, "fleet: affinity: missing options\n");
    return -1;
  }
  static affinity_fleet af;
  memset(&af, 0, sizeof(af));
  af.o = o;
  af.n_servers = o->servers > 0 ? o->servers : 8;
  af.n_clients = o->clients > 0 ? o->clients : 4;
  af.min_aperture = o->min_aperture > 0 ? o->min_aperture : 3;
  if (af.n_servers < 2 || af.n_servers > MAX_N || af.n_clients < 2 || af.n_clients > MAX_C) {
    fprintf(stderr, "fleet: affinity: --servers in [2, %d] and --clients in [2, %d]\n", MAX_N, MAX_C);
    return -1;
  }
  char kinds[FLEET_AFFINITY_MAX_KINDS][16], err[200] = "";
  int n_kinds = parse_kinds(o->kinds ? o->kinds : FLEET_AFFINITY_DEFAULT_KINDS, kinds,
                            FLEET_AFFINITY_MAX_KINDS, err, sizeof(err));
  if (n_kinds < 0) {
    fprintf(stderr, "fleet: affinity: %s\n", err);
    return -1;
  }
  grpc_init();
  int started = start_servers(&af, err, sizeof(err)) == 0;
  int failures = 0;
  for (int k = 0; k < n_kinds && *n_rows < max_rows; k++) {
    fleet_affinity_row *row = &rows[(*n_rows)++];
    fprintf(stderr, "fleet: affinity / %s ...\n", kinds[k]);
    if (started) {
      run_kind(&af, kinds[k], row);
    } else {
      memset(row, 0, sizeof(*row));
      snprintf(row->kind, sizeof(row->kind), "%s", kinds[k]);
      snprintf(row->error, sizeof(row->error), "%.159s", err);
    }
    if (!row->complete) {
      fprintf(stderr, "fleet: affinity / %s failed: %s\n", kinds[k], row->error);
      failures++;
    }
  }
  stop_servers(&af);
  grpc_shutdown();
  return failures ? -1 : 0;
}

/* --- report --- */

static void aperture_names(const fleet_affinity_row *r, int c, char *out, size_t len) {
  out[0] = '\0';
  for (int i = 0; i < r->servers && i < MAX_N; i++) {
    if (!r->aperture[c][i]) continue;
    size_t used = strlen(out);
    snprintf(out + used, len - used, "%ss%d", used ? " " : "", i);
  }
}

void io_fleet_affinity_table(FILE *f, const fleet_affinity_row *rows, int n) {
  if (f == NULL || rows == NULL || n <= 0) return;
  for (int x = 0; x < n; x++) {
    const fleet_affinity_row *r = &rows[x];
    fprintf(f,
            "\nscenario affinity / %s: %d servers, %d clients (continuous, minAperture %d), key in "
            "%s;\nclient c sends k<c> on UnaryCall and k<c+1> on EmptyCall; %d windows of %d calls "
            "per client\n",
            r->kind, r->servers, r->clients, r->min_aperture, FLEET_AFFINITY_HEADER, r->windows,
            WINDOW_CALLS);
    if (!r->complete && r->n_keys == 0) {
      fprintf(f, "run failed: %s\n", r->error);
      continue;
    }
    fprintf(f, "%-4s %-7s %-11s %-24s %s\n", "key", "client", "method", "client's aperture",
            "served by (calls)");
    for (int j = 0; j < r->n_keys; j++) {
      const fleet_affinity_key *k = &r->keys[j];
      char ap[160], by[200] = "";
      aperture_names(r, k->client, ap, sizeof(ap));
      for (int i = 0; i < r->servers; i++) {
        if (k->calls[i] == 0) continue;
        size_t used = strlen(by);
        snprintf(by + used, sizeof(by) - used, "%ss%d (%ld)", used ? ", " : "", i, k->calls[i]);
      }
      fprintf(f, "%-4s c%-6d %-11s %-24s %s%s\n", k->key, k->client, k->method, ap,
              by[0] ? by : "-", k->owners == 1 && k->in_aperture ? "" : "  <-- not one owner inside");
    }
    fprintf(f,
            "keys (per client) with one owner: %d/%d, served inside the aperture: %d/%d; keys "
            "whose two clients chose the same owner: %d/%d; calls ok %ld, failed %ld\n",
            r->keys_one_owner, r->n_keys, r->keys_in_aperture, r->n_keys, r->keys_agree,
            r->clients, r->ok, r->failed);
    if (!r->complete) fprintf(f, "run failed: %s\n", r->error);
  }
}

void io_fleet_affinity_json(FILE *f, const fleet_affinity_row *rows, int n) {
  if (f == NULL || (rows == NULL && n > 0)) return;
  fprintf(f, "{\"affinity\":{\"header\":\"%s\",\"rows\":[", FLEET_AFFINITY_HEADER);
  for (int x = 0; x < n; x++) {
    const fleet_affinity_row *r = &rows[x];
    fprintf(f, "%s\n{\"kind\":", x ? "," : "");
    ap_json_write_string(f, r->kind);
    fprintf(f, ",\"servers\":%d,\"clients\":%d,\"min_aperture\":%d,\"windows\":%d,\"complete\":%s,\"error\":",
            r->servers, r->clients, r->min_aperture, r->windows, r->complete ? "true" : "false");
    ap_json_write_string(f, r->error);
    fprintf(f, ",\"ok\":%ld,\"failed\":%ld,\"keys_one_owner\":%d,\"keys_in_aperture\":%d,\"keys_agree\":%d",
            r->ok, r->failed, r->keys_one_owner, r->keys_in_aperture, r->keys_agree);
    fprintf(f, ",\"apertures\":[");
    for (int c = 0; c < r->clients && c < MAX_C; c++) {
      fprintf(f, "%s[", c ? "," : "");
      int first = 1;
      for (int i = 0; i < r->servers && i < MAX_N; i++) {
        if (!r->aperture[c][i]) continue;
        fprintf(f, "%s\"s%d\"", first ? "" : ",", i);
        first = 0;
      }
      fprintf(f, "]");
    }
    fprintf(f, "],\"keys\":[");
    for (int j = 0; j < r->n_keys; j++) {
      const fleet_affinity_key *k = &r->keys[j];
      fprintf(f, "%s\n{\"key\":\"%s\",\"client\":%d,\"method\":\"%s\",\"owners\":%d,\"owner\":",
              j ? "," : "", k->key, k->client, k->method, k->owners);
      if (k->owner >= 0) fprintf(f, "\"s%d\"", k->owner);
      else fprintf(f, "null");
      fprintf(f, ",\"in_aperture\":%s,\"calls\":{", k->in_aperture ? "true" : "false");
      int first = 1;
      for (int i = 0; i < r->servers && i < MAX_N; i++) {
        if (k->calls[i] == 0) continue;
        fprintf(f, "%s\"s%d\":%ld", first ? "" : ",", i, k->calls[i]);
        first = 0;
      }
      fprintf(f, "}}");
    }
    fprintf(f, "]}");
  }
  fprintf(f, "\n]}}\n");
}

/* --- the scenario table's row --- */

int io_fleet_affinity_check(const fleet_args *a, char *err, size_t err_len) {
  if (a == NULL || err == NULL) return -1;
  if (a->clients == 1 || a->clients > FLEET_AFFINITY_MAX_CLIENTS || a->servers == 1 ||
      a->servers > FLEET_AFFINITY_MAX_SERVERS) {
    snprintf(err, err_len, "fleet: affinity: --servers in [2, %d] and --clients in [2, %d]",
             FLEET_AFFINITY_MAX_SERVERS, FLEET_AFFINITY_MAX_CLIENTS);
    return -1;
  }
  return 0;
}

int io_fleet_affinity_scenario(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  if (a == NULL || out == NULL) return -1;
  fleet_affinity_opts ao = {a->server_bin, a->client_bin, a->out_dir, a->affinity,
                            (int)a->servers, (int)a->clients, (int)a->min_aperture, a->rate};
  static fleet_affinity_row rows[FLEET_AFFINITY_MAX_KINDS];
  int n = 0;
  int rc = io_fleet_affinity_run(&ao, rows, FLEET_AFFINITY_MAX_KINDS, &n);
  out->rows = rows;
  out->n_rows = n;
  return rc != 0 ? -1 : 0;
}

void io_fleet_affinity_write_json(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_affinity_json(f, out->rows, out->n_rows);
}

void io_fleet_affinity_write_table(FILE *f, const fleet_output *out) {
  if (f != NULL && out != NULL) io_fleet_affinity_table(f, out->rows, out->n_rows);
}
