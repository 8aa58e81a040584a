/* Interop client: drives a bounded number of grpc.testing.TestService calls
 * through one or more channels with a given service config, serves
 * grpc.testing.LoadBalancerStatsService, and prints a JSON summary.
 *
 *   client --target T [--channels C] [--service-config JSON | --lb POLICY]
 *          [--calls N] [--rate QPS] [--concurrency K] [--duration-s S]
 *          [--timeout-ms MS] [--method unary|empty] [--rpc-behavior V]
 *          [--rpc UnaryCall,EmptyCall] [--metadata [RPC:]KEY:VALUE]...
 *          [--unique-metadata KEY:PREFIX] [--wait-for-ready] [--peer-index I --peer-count N]
 *          [--stats-port P] [--summary-file PATH] [--linger-s S] [--call-log PATH]
 *
 * --calls 0 means "until --duration-s". --rate 0 means "as fast as the
 * concurrency allows". Each channel uses its own subchannel pool, so C
 * channels are C independent clients of the backends (own connections).
 * With --stats-port (0 = ephemeral) it prints `stats listening HOST:PORT`.
 * The summary is one JSON object on stdout (and in --summary-file).
 * --call-log writes one line per finished call (call_log.h).
 * SIGTERM/SIGINT stop sending; calls in flight finish (bounded by their
 * deadline) and the summary is still written.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "grpc/testing/empty.pb-c.h"
#include "grpc/testing/messages.pb-c.h"
#include "interop/testing/call_log.h"
#include "interop/testing/call_options.h"
#include "interop/testing/client_policy.h"
#include "interop/testing/client_stats.h"
#include "interop/common/delay_queue.h"
#include "interop/common/flags.h"
#include "interop/common/json_write.h"
#include "interop/testing/lb_stats_service.h"
#include "interop/common/pb_buf.h"

#define MAX_CHANNELS 256
#define MAX_CONCURRENCY 10000

typedef struct options {
  const char *target;
  long channels;
  const char *service_config;
  long calls;
  double rate;
  long concurrency;
  double duration_s;
  long timeout_ms;
  client_method method;
  const char *rpc_behavior;
  bool wait_for_ready;
  long peer_index, peer_count;
  long stats_port; /* -1: no stats service */
  const char *summary_file;
  double linger_s;
  long status_port; /* -1: no aperture status server */
  long max_backoff_ms; /* 0: gRPC's default reconnect backoff */
  long dns_min_interval_ms; /* 0: gRPC's default (30 s between re-resolutions) */
  call_options call_opts; /* --rpc and --metadata */
  const char *call_log;   /* --call-log PATH, or NULL */
} options;

/* One call in flight. */
typedef struct call_ctx {
  grpc_call *call;
  int64_t start_ns;
  client_method method;
  grpc_metadata send_md[2 + CALL_OPTIONS_MAX_METADATA];
  grpc_slice unique_value; /* --unique-metadata's value (owned), or empty */
  grpc_metadata_array initial_md;
  grpc_metadata_array trailing_md;
  grpc_byte_buffer *request;
  grpc_byte_buffer *response;
  grpc_status_code status;
  grpc_slice details;
  long live_at;       /* its index in g_live while in flight */
  char seen_peer[64]; /* --call-log: the connection it was seen on (peek_peers) */
} call_ctx;

/* The calls in flight, for peek_peers (the driver thread only). */
static call_ctx *g_live[MAX_CONCURRENCY];
static long g_n_live;

static void live_add(call_ctx *c) {
  c->live_at = g_n_live;
  g_live[g_n_live++] = c;
}

static void live_remove(call_ctx *c) {
  call_ctx *last = g_live[--g_n_live];
  g_live[c->live_at] = last;
  last->live_at = c->live_at;
}

/* With --call-log: notes the connection of every call in flight for at
 * least 10 ms that has none noted yet. gRPC 1.51 forgets a call's peer
 * when the call is cancelled (its deadline too) and then reports the
 * channel's target, so a call that timed out on a connection is named by
 * what was seen here while it was in flight. */
static void peek_peers(int64_t now) {
  for (long i = 0; i < g_n_live; i++) {
    call_ctx *c = g_live[i];
    if (c->seen_peer[0] != '\0' || now - c->start_ns < 10000000LL) continue;
    char *p = grpc_call_get_peer(c->call);
    if (p != NULL && strchr(p, ',') == NULL && strlen(p) < sizeof(c->seen_peer)) {
      snprintf(c->seen_peer, sizeof(c->seen_peer), "%s", p);
    }
    gpr_free(p);
  }
}

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static int64_t now_ns(void) { return io_delay_queue_now_ns(); }

/* Server hostname of a finished call: the response's hostname field, else
 * the `hostname` initial metadata entry. Writes "" when neither is there. */
static void call_peer(call_ctx *c, client_method m, char *out, size_t len) {
  out[0] = '\0';
  if (m == CLIENT_UNARY && c->response) {
    Grpc__Testing__SimpleResponse *r = (Grpc__Testing__SimpleResponse *)io_pb_buf_unpack(
        c->response, &grpc__testing__simple_response__descriptor);
    if (r) {
      if (r->hostname && r->hostname[0]) snprintf(out, len, "%s", r->hostname);
      protobuf_c_message_free_unpacked(&r->base, NULL);
      if (out[0]) return;
    }
  }
  for (size_t i = 0; i < c->initial_md.count; i++) {
    grpc_metadata *md = &c->initial_md.metadata[i];
    if (GRPC_SLICE_LENGTH(md->key) == 8 && memcmp(GRPC_SLICE_START_PTR(md->key), "hostname", 8) == 0) {
      size_t n = GRPC_SLICE_LENGTH(md->value);
      if (n >= len) n = len - 1;
      memcpy(out, GRPC_SLICE_START_PTR(md->value), n);
      out[n] = '\0';
      return;
    }
  }
}

static grpc_byte_buffer *make_request(client_method m) {
  if (m == CLIENT_EMPTY) {
    Grpc__Testing__Empty e = GRPC__TESTING__EMPTY__INIT;
    return io_pb_buf_pack(&e.base);
  }
  Grpc__Testing__SimpleRequest r = GRPC__TESTING__SIMPLE_REQUEST__INIT;
  r.fill_server_id = 1;
  return io_pb_buf_pack(&r.base);
}

static void call_ctx_free(call_ctx *c) {
  grpc_byte_buffer_destroy(c->request);
  if (c->response) grpc_byte_buffer_destroy(c->response);
  grpc_metadata_array_destroy(&c->initial_md);
  grpc_metadata_array_destroy(&c->trailing_md);
  grpc_slice_unref(c->unique_value);
  free(c);
}

static int start_call(const options *o, grpc_channel *ch, grpc_completion_queue *cq,
                      client_method m, grpc_slice method_path, long seq) {
  call_ctx *c = calloc(1, sizeof(*c));
  if (c == NULL) return -1;
  c->start_ns = now_ns();
  c->method = m;
  gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                       gpr_time_from_millis(o->timeout_ms, GPR_TIMESPAN));
  c->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method_path, NULL,
                                     deadline, NULL);
  grpc_metadata_array_init(&c->initial_md);
  grpc_metadata_array_init(&c->trailing_md);
  c->request = make_request(m);
  grpc_op ops[6];
  memset(ops, 0, sizeof(ops));
  size_t n = 0;
  ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
  size_t md = 0;
  if (o->rpc_behavior) {
    c->send_md[0].key = grpc_slice_from_static_string("rpc-behavior");
    c->send_md[0].value = grpc_slice_from_static_string(o->rpc_behavior);
    md = 1;
  }
  md += io_call_options_metadata(&o->call_opts, m, c->send_md + md, CALL_OPTIONS_MAX_METADATA);
  char unique[CALL_OPTIONS_UNIQUE_VALUE_MAX + 1];
  if (io_call_options_unique_value(&o->call_opts, seq, unique, sizeof unique)) {
    c->unique_value = grpc_slice_from_copied_string(unique);
    c->send_md[md].key = grpc_slice_from_static_string(o->call_opts.unique_key);
    c->send_md[md].value = c->unique_value;
    md++;
  }
  ops[n].data.send_initial_metadata.count = md;
  ops[n].data.send_initial_metadata.metadata = md > 0 ? c->send_md : NULL;
  if (o->wait_for_ready) ops[n].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
  n++;
  ops[n].op = GRPC_OP_SEND_MESSAGE;
  ops[n++].data.send_message.send_message = c->request;
  ops[n++].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[n++].data.recv_initial_metadata.recv_initial_metadata = &c->initial_md;
  ops[n].op = GRPC_OP_RECV_MESSAGE;
  ops[n++].data.recv_message.recv_message = &c->response;
  ops[n].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[n].data.recv_status_on_client.trailing_metadata = &c->trailing_md;
  ops[n].data.recv_status_on_client.status = &c->status;
  ops[n++].data.recv_status_on_client.status_details = &c->details;
  if (grpc_call_start_batch(c->call, ops, n, c, NULL) != GRPC_CALL_OK) {
    grpc_call_unref(c->call);
    call_ctx_free(c);
    return -1;
  }
  live_add(c);
  return 0;
}

static void finish_call(const options *o, client_stats *stats, call_log *log, call_ctx *c) {
  live_remove(c);
  char peer[128];
  call_peer(c, c->method, peer, sizeof(peer));
  int64_t elapsed_ns = now_ns() - c->start_ns;
  uint64_t us = (uint64_t)(elapsed_ns / 1000);
  int code = (int)c->status;
  if (code < 0 || code > 16) code = GRPC_STATUS_UNKNOWN;
  io_client_stats_finished(stats, c->method, code, peer, us);
  if (code != GRPC_STATUS_OK) {
    char *address = grpc_call_get_peer(c->call);
    io_client_stats_failed_address(stats, address);
    /* who answered; else the call's connection: gRPC's peer when it names
     * one address, else the one peek_peers saw */
    const char *server = peer[0] ? peer
                         : (address != NULL && strchr(address, ',') == NULL) || c->seen_peer[0] == '\0'
                             ? address
                             : c->seen_peer;
    io_call_log_record(log, c->start_ns, elapsed_ns, code, server);
    gpr_free(address);
  } else {
    io_call_log_record(log, c->start_ns, elapsed_ns, code, peer);
  }
  grpc_call_unref(c->call);
  grpc_slice_unref(c->details);
  call_ctx_free(c);
}

static void usage(void) {
  fprintf(stderr,
          "usage: client --target T [--channels C] [--service-config JSON | --lb POLICY]\n"
          "              [--calls N] [--rate QPS] [--concurrency K] [--duration-s S]\n"
          "              [--timeout-ms MS] [--method unary|empty] [--rpc-behavior V]\n"
          "              [--rpc UnaryCall,EmptyCall] [--metadata [RPC:]KEY:VALUE]...\n"
          "              [--unique-metadata KEY:PREFIX]\n"
          "              [--wait-for-ready] [--peer-index I --peer-count N]\n"
          "              [--stats-port P] [--status-port P] [--summary-file PATH]\n"
          "              [--linger-s S] [--max-backoff-ms MS] [--dns-min-interval-ms MS]\n"
          "              [--call-log PATH] [--print-policies]\n");
}

static char g_lb_config[512];

static int parse_options(int argc, char **argv, options *o) {
  memset(o, 0, sizeof(*o));
  o->channels = 1;
  o->calls = 1000;
  o->concurrency = 10;
  o->duration_s = 30;
  o->timeout_ms = 5000;
  o->method = CLIENT_UNARY;
  o->peer_index = -1;
  o->peer_count = -1;
  o->stats_port = -1;
  o->status_port = -1;
  io_call_options_init(&o->call_opts);
  const flag_spec specs[] = {
      {"channels", FLAG_LONG, &o->channels, 1, MAX_CHANNELS},
      {"calls", FLAG_LONG, &o->calls, 0, 100000000},
      {"concurrency", FLAG_LONG, &o->concurrency, 1, MAX_CONCURRENCY},
      {"timeout-ms", FLAG_LONG, &o->timeout_ms, 1, 600000},
      {"peer-index", FLAG_LONG, &o->peer_index, 0, 1000000},
      {"peer-count", FLAG_LONG, &o->peer_count, 1, 1000000},
      {"stats-port", FLAG_LONG, &o->stats_port, 0, 65535},
      {"status-port", FLAG_LONG, &o->status_port, 0, 65535},
      {"max-backoff-ms", FLAG_LONG, &o->max_backoff_ms, 100, 600000},
      {"dns-min-interval-ms", FLAG_LONG, &o->dns_min_interval_ms, 1, 600000},
      {"rate", FLAG_DOUBLE, &o->rate, 0, 1e7},
      {"duration-s", FLAG_DOUBLE, &o->duration_s, 0.001, 86400},
      {"linger-s", FLAG_DOUBLE, &o->linger_s, 0, 3600},
      {"target", FLAG_STRING, &o->target, 0, 0},
      {"service-config", FLAG_STRING, &o->service_config, 0, 0},
      {"rpc-behavior", FLAG_STRING, &o->rpc_behavior, 0, 0},
      {"summary-file", FLAG_STRING, &o->summary_file, 0, 0},
      {"call-log", FLAG_STRING, &o->call_log, 0, 0},
  };
  for (int i = 1; i < argc; i++) {
    const char *v;
    int r;
    long lv;
    if ((r = io_flag_parse_one(argc, argv, &i, specs, sizeof specs / sizeof specs[0])) != 0) {
      if (r < 0) return -1;
      continue;
    }
    if ((r = io_flag_match(argc, argv, &i, "lb", &v)) != 0) {
      if (r < 0) return -1;
      /* shorthand: --lb round_robin == {"loadBalancingConfig":[{"round_robin":{}}]} */
      for (const char *p = v; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || *p == '_')) {
          fprintf(stderr, "flag --lb: '%s' is not a policy name\n", v);
          return -1;
        }
      }
      snprintf(g_lb_config, sizeof(g_lb_config), "{\"loadBalancingConfig\":[{\"%s\":{}}]}", v);
      o->service_config = g_lb_config;
      continue;
    }
    if ((r = io_flag_match(argc, argv, &i, "method", &v)) != 0) {
      if (r < 0) return -1;
      if (strcmp(v, "unary") == 0) o->method = CLIENT_UNARY;
      else if (strcmp(v, "empty") == 0) o->method = CLIENT_EMPTY;
      else {
        fprintf(stderr, "flag --method: '%s' is not unary or empty\n", v);
        return -1;
      }
      o->call_opts.rpcs[0] = o->method;
      o->call_opts.n_rpcs = 1;
      continue;
    }
    if ((r = io_flag_match(argc, argv, &i, "rpc", &v)) != 0) {
      if (r < 0 || io_call_options_set_rpcs(&o->call_opts, v) != 0) return -1;
      o->method = o->call_opts.rpcs[0];
      continue;
    }
    if ((r = io_flag_match(argc, argv, &i, "metadata", &v)) != 0) {
      if (r < 0 || io_call_options_add_metadata(&o->call_opts, v) != 0) return -1;
      continue;
    }
    if ((r = io_flag_match(argc, argv, &i, "unique-metadata", &v)) != 0) {
      if (r < 0 || io_call_options_set_unique_metadata(&o->call_opts, v) != 0) return -1;
      continue;
    }
    if (strcmp(argv[i], "--print-policies") == 0) {
      printf("policies: %s\n", io_client_policy_names());
      exit(0);
    }
    if (strcmp(argv[i], "--wait-for-ready") == 0) {
      o->wait_for_ready = true;
      continue;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage();
      exit(0);
    }
    (void)lv;
    fprintf(stderr, "client: unknown argument '%s'\n", argv[i]);
    usage();
    return -1;
  }
  if (o->target == NULL) {
    fprintf(stderr, "flag --target: required\n");
    return -1;
  }
  if ((o->peer_index >= 0) != (o->peer_count >= 0)) {
    fprintf(stderr, "flags --peer-index and --peer-count go together\n");
    return -1;
  }
  if (o->peer_index >= 0 && o->peer_index >= o->peer_count) {
    fprintf(stderr, "flag --peer-index: %ld is not below --peer-count %ld\n", o->peer_index,
            o->peer_count);
    return -1;
  }
  return 0;
}

typedef struct summary_ctx {
  const options *o;
  client_stats *stats;
  double elapsed_s;
} summary_ctx;

static void write_summary(FILE *f, void *arg) {
  summary_ctx *s = arg;
  client_totals t;
  io_client_stats_totals(s->stats, &t);
  fprintf(f, "{\"target\":");
  ap_json_write_string(f, s->o->target);
  fprintf(f, ",\"service_config\":");
  ap_json_write_string(f, s->o->service_config ? s->o->service_config : "");
  fprintf(f, ",\"channels\":%ld,\"method\":\"%s\",\"rpcs\":[", s->o->channels,
          io_client_method_name(s->o->method));
  for (size_t r = 0; r < s->o->call_opts.n_rpcs; r++)
    fprintf(f, "%s\"%s\"", r ? "," : "", io_call_options_rpc_name(s->o->call_opts.rpcs[r]));
  fprintf(f, "],\"metadata\":{");
  for (size_t k = 0; k < s->o->call_opts.n_md; k++) {
    const call_metadata *md = &s->o->call_opts.md[k];
    char key[96];
    snprintf(key, sizeof key, "%s%s%s", md->rpc >= 0 ? io_call_options_rpc_name((client_method)md->rpc) : "",
             md->rpc >= 0 ? ":" : "", md->key);
    fprintf(f, "%s", k ? "," : "");
    ap_json_write_string(f, key);
    fputc(':', f);
    ap_json_write_string(f, md->value);
  }
  fputc('}', f);
  if (s->o->call_opts.unique_key[0] != '\0') {
    fprintf(f, ",\"unique_metadata\":{");
    ap_json_write_string(f, s->o->call_opts.unique_key);
    fputc(':', f);
    ap_json_write_string(f, s->o->call_opts.unique_prefix);
    fputc('}', f);
  }
  fprintf(f, ",\"peer_index\":%ld,\"peer_count\":%ld", s->o->peer_index, s->o->peer_count);
  fprintf(f, ",\"started\":%ld,\"ok\":%ld,\"failed\":%ld,\"by_code\":{", t.started, t.ok,
          t.failed);
  int first = 1;
  for (int c = 0; c <= 16; c++) {
    if (t.by_code[c] == 0) continue;
    fprintf(f, "%s\"%d\":%ld", first ? "" : ",", c, t.by_code[c]);
    first = 0;
  }
  fprintf(f, "},\"elapsed_s\":%.3f,\"qps\":%.1f", s->elapsed_s,
          s->elapsed_s > 0 ? (double)(t.ok + t.failed) / s->elapsed_s : 0.0);
  fprintf(f,
          ",\"latency_us\":{\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,\"p999\":%llu,\"max\":%llu,"
          "\"mean\":%.1f},",
          (unsigned long long)t.p50_us, (unsigned long long)t.p90_us,
          (unsigned long long)t.p99_us, (unsigned long long)t.p999_us,
          (unsigned long long)t.max_us, t.mean_us);
  io_client_stats_write_peers(s->stats, f);
  fputc(',', f);
  io_client_stats_write_details(s->stats, f);
  fprintf(f, "}\n");
}

int main(int argc, char **argv) {
  options o;
  if (parse_options(argc, argv, &o) != 0) return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  grpc_init();
  char perr[256];
  if (io_client_policy_setup(o.peer_index, o.peer_count, perr, sizeof(perr)) != 0) {
    fprintf(stderr, "client: %s\n", perr);
    return 1;
  }
  client_stats *stats = io_client_stats_create();
  call_log *log = NULL;
  if (o.call_log != NULL && (log = io_call_log_open(o.call_log)) == NULL) return 1;
  lb_stats_service *svc = NULL;
  if (o.stats_port >= 0) {
    int bound = 0;
    svc = io_lb_stats_service_start("127.0.0.1", (int)o.stats_port, stats, &bound);
    if (svc == NULL) return 1;
    printf("stats listening 127.0.0.1:%d\n", bound);
    fflush(stdout);
  }
  if (o.status_port >= 0 && io_client_policy_status_start((int)o.status_port, perr, sizeof(perr)) != 0) {
    fprintf(stderr, "client: %s\n", perr);
    return 1;
  }

  grpc_arg args[6];
  size_t nargs = 0;
  if (o.dns_min_interval_ms > 0) {
    /* lets a dns: target pick up membership changes quickly */
    args[nargs++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                               .key = GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS,
                               .value.integer = (int)o.dns_min_interval_ms};
  }
  if (o.max_backoff_ms > 0) {
    /* Faster reconnection for fleets that kill and restart backends. */
    const char *keys[3] = {GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
                           GRPC_ARG_MIN_RECONNECT_BACKOFF_MS};
    for (int k = 0; k < 3; k++) {
      long v = k == 0 ? o.max_backoff_ms : (o.max_backoff_ms < 1000 ? o.max_backoff_ms : 1000);
      args[nargs++] = (grpc_arg){.type = GRPC_ARG_INTEGER, .key = (char *)keys[k],
                                 .value.integer = (int)v};
    }
  }
  args[nargs++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                             .key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
                             .value.integer = 1};
  if (o.service_config) {
    args[nargs++] = (grpc_arg){.type = GRPC_ARG_STRING,
                               .key = GRPC_ARG_SERVICE_CONFIG,
                               .value.string = (char *)o.service_config};
  }
  grpc_channel_args chargs = {nargs, args};
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_channel **channels = calloc((size_t)o.channels, sizeof(*channels));
  for (long c = 0; c < o.channels; c++) channels[c] = grpc_channel_create(o.target, creds, &chargs);
  grpc_channel_credentials_release(creds);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
  grpc_slice method_paths[CLIENT_METHODS];
  method_paths[CLIENT_UNARY] = grpc_slice_from_static_string("/grpc.testing.TestService/UnaryCall");
  method_paths[CLIENT_EMPTY] = grpc_slice_from_static_string("/grpc.testing.TestService/EmptyCall");

  /* Driver: keep up to `concurrency` calls in flight, pace starts at
   * `rate`, stop at `calls` or `duration_s`, whichever comes first. */
  int64_t t0 = now_ns();
  int64_t end = t0 + (int64_t)(o.duration_s * 1e9);
  int64_t interval = o.rate > 0 ? (int64_t)(1e9 / o.rate) : 0;
  int64_t next_send = t0;
  long sent = 0, inflight = 0, next_channel = 0;
  for (;;) {
    int64_t now = now_ns();
    bool more = !g_stop && now < end && (o.calls == 0 || sent < o.calls);
    if (!more && inflight == 0) break;
    while (more && inflight < o.concurrency && now >= next_send) {
      client_method m = io_call_options_rpc(&o.call_opts, sent);
      io_client_stats_started(stats, m);
      if (start_call(&o, channels[next_channel], cq, m, method_paths[m], sent) == 0) inflight++;
      else io_client_stats_finished(stats, m, GRPC_STATUS_INTERNAL, NULL, 0);
      next_channel = (next_channel + 1) % o.channels;
      sent++;
      if (interval > 0) {
        next_send += interval;
        if (next_send < now - 1000000000LL) next_send = now; /* don't burst after a stall */
      }
      more = o.calls == 0 || sent < o.calls;
    }
    int64_t wait = log != NULL ? 10000000LL : 100000000LL; /* peek_peers every 10 ms */
    if (log != NULL) peek_peers(now);
    if (more && inflight < o.concurrency && next_send - now < wait) wait = next_send - now;
    if (wait < 0) wait = 0;
    grpc_event ev = grpc_completion_queue_next(
        cq, gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_nanos(wait, GPR_TIMESPAN)),
        NULL);
    if (ev.type == GRPC_OP_COMPLETE) {
      finish_call(&o, stats, log, ev.tag);
      inflight--;
    }
  }
  summary_ctx sc = {&o, stats, (double)(now_ns() - t0) / 1e9};
  int log_rc = io_call_log_close(log);

  /* Keep the stats service up a little for late GetClientStats queries. */
  for (int64_t stop_at = now_ns() + (int64_t)(o.linger_s * 1e9); !g_stop && now_ns() < stop_at;) {
    struct timespec ts = {0, 20000000L};
    nanosleep(&ts, NULL);
  }
  write_summary(stdout, &sc);
  fflush(stdout);
  int rc = log_rc == 0 ? 0 : 1;
  if (o.summary_file && io_json_write_file_atomic(o.summary_file, write_summary, &sc) != 0) {
    fprintf(stderr, "client: cannot write --summary-file %s\n", o.summary_file);
    rc = 1;
  }

  io_lb_stats_service_stop(svc);
  io_client_policy_status_stop();
  for (long c = 0; c < o.channels; c++) grpc_channel_destroy(channels[c]);
  free(channels);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  io_client_stats_destroy(stats);
  grpc_shutdown();
  return rc;
}
