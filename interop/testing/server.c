/* Interop server: grpc.testing.TestService (UnaryCall, EmptyCall) and
 * grpc.health.v1.Health (Check) on the public gRPC C-core API.
 *
 *   server [--port P] [--host 127.0.0.1] [--server-id ID] [--hostname NAME]
 *          [--extra-latency-ms N] [--threads T] [--stats-file PATH]
 *          [--stats-interval-ms N] [--capacity F] [--work-us W] [--cpu-quota Q]
 *          [--orca | --no-orca] [--capacity-qps Q]
 *          [--slow-latency-ms N] [--tail-share F --tail-ms N [--tail-seed S]]
 *
 * Prints `listening HOST:PORT` on stdout once serving (port 0 = ephemeral).
 * Every answer carries a `hostname` initial metadata entry. The
 * `rpc-behavior` request header (sleep-N, error-code-N; see rpc_behavior.h)
 * delays or fails a call. Delays are timers on the worker's own completion
 * queue loop, so a sleeping call never blocks others.
 *
 * Figures (calls per method, failures, connections from channelz) go as one
 * JSON object to --stats-file: rewritten atomically every
 * --stats-interval-ms while running and once more at exit.
 *
 * Load (server_load.h): with --capacity F or --work-us W every TestService
 * call does W/F microseconds of real CPU work (a calibrated hash loop; W
 * is 1000 when only --capacity is given, F is 1 when only --work-us is),
 * on the worker thread, or, with --cpu-quota Q, on a virtual CPU of Q
 * cores shared by the workers. Without either flag there is no work. The
 * trailer `endpoint-load-metrics-bin` (ORCA, on every TestService answer;
 * --orca/--no-orca; default on when there is work) carries
 * cpu_utilization: the work CPU time of the last second over (one second x
 * the threads, or Q), clamped to [0, 1]. --capacity-qps Q makes the
 * report rate-based, as servers that count calls send it: cpu_utilization
 * and application_utilization = the answered calls of the last second
 * over Q calls/s, rps_fractional = those calls/s (the trailer on by
 * default; the CPU work, if any, still runs). SIGTERM/SIGINT
 * shut the server down gracefully (GOAWAY; calls in flight get
 * --shutdown-grace-ms to finish) and it exits with status 0.
 * --slow-latency-ms N: SIGUSR1 adds N ms to every call, SIGUSR2 takes it
 * off (slow_toggle.h). --tail-share F --tail-ms N: a seeded share F of the
 * TestService calls waits N ms more (latency_tail.h; --tail-seed S, default
 * 1); the stats count them as "tail_calls".
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

#include "grpc/health/v1/health.pb-c.h"
#include "grpc/testing/empty.pb-c.h"
#include "grpc/testing/messages.pb-c.h"
#include "interop/testing/channelz_tracker.h"
#include "interop/testing/latency_tail.h"
#include "interop/common/delay_queue.h"
#include "interop/common/flags.h"
#include "interop/common/json_write.h"
#include "interop/common/pb_buf.h"
#include "interop/testing/rpc_behavior.h"
#include "interop/testing/server_load.h"
#include "interop/testing/slow_toggle.h"

#define MAX_THREADS 16
#define MAX_DELAYED_PER_WORKER 65536
#define MAX_RESPONSE_SIZE (1 << 20)

typedef enum method_kind { M_UNARY, M_EMPTY, M_HEALTH, M_COUNT } method_kind;

static const char *const kMethodPaths[M_COUNT] = {
    "/grpc.testing.TestService/UnaryCall",
    "/grpc.testing.TestService/EmptyCall",
    "/grpc.health.v1.Health/Check",
};
static const char *const kMethodNames[M_COUNT] = {"unary_call", "empty_call", "health_check"};

typedef struct options {
  const char *host;
  long port;
  const char *server_id;
  const char *hostname;
  long extra_latency_ms;
  long threads;
  const char *stats_file;
  long stats_interval_ms;
  long shutdown_grace_ms;
  long max_connection_age_ms; /* 0: connections live forever */
  double capacity;  /* 0: not given (1) */
  double work_us;   /* -1: not given (1000 with --capacity, else 0) */
  double cpu_quota; /* cores; 0: none */
  int orca, no_orca;
  double capacity_qps;        /* --capacity-qps: rate-based report; 0: none */
  long slow_latency_ms;       /* --slow-latency-ms (slow_toggle.h); 0: off */
  double tail_share;          /* --tail-share (latency_tail.h); 0: no tail */
  long tail_ms;               /* --tail-ms */
  long tail_seed;             /* --tail-seed */
} options;

typedef struct server_state {
  options opt;
  char hostname[256];
  char server_id[256];
  int bound_port;
  grpc_server *server;
  void *methods[M_COUNT];
  atomic_bool shutting_down; /* no new delays; health says NOT_SERVING */
  atomic_bool flush_delayed; /* grace period over: answer delayed calls now */
  atomic_long delayed_held;  /* calls in the workers' delay queues: the cqs
                                shut down only once the flush emptied them */
  atomic_long calls[M_COUNT];
  atomic_long calls_by_code[17]; /* answers by status code */
  atomic_long delayed_rejected;
  channelz_tracker *conns;
  /* load (server_load.h) */
  double capacity, work_us;  /* as in effect */
  uint64_t work_iterations;  /* per call; 0: no work */
  int64_t work_cost_ns;      /* the work's expected CPU time */
  int orca;                  /* 1: send the ORCA trailer */
  server_load load;
  latency_tail *tail;        /* --tail-share, --tail-ms */
} server_state;

typedef struct worker {
  server_state *st;
  grpc_completion_queue *cq;
  delay_queue *delayed;
  pthread_t thread;
} worker;

/* One requested and then answered call. Owned by its worker; freed when the
 * answer batch completes or the request fails at shutdown. */
typedef enum slot_state { SLOT_REQUESTED, SLOT_ANSWERING } slot_state;

typedef struct call_slot {
  slot_state state;
  method_kind method;
  worker *w;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array request_md;
  grpc_byte_buffer *request;
  /* answer */
  grpc_byte_buffer *response;
  grpc_status_code code;
  grpc_slice details;
  grpc_metadata initial_md[1];
  grpc_metadata trailing_md[1];
  int has_trailer;
  int work_pending;    /* 1: queued for the virtual CPU; its work is still to run */
  int64_t answer_due;  /* when work_pending: when the answer may leave */
  int cancelled;
} call_slot;

static void request_call(worker *w, method_kind m) {
  server_state *st = w->st;
  if (atomic_load(&st->shutting_down)) return;
  call_slot *s = calloc(1, sizeof(*s));
  if (s == NULL) return;
  s->state = SLOT_REQUESTED;
  s->method = m;
  s->w = w;
  grpc_metadata_array_init(&s->request_md);
  grpc_call_error e = grpc_server_request_registered_call(
      st->server, st->methods[m], &s->call, &s->deadline, &s->request_md, &s->request, w->cq,
      w->cq, s);
  if (e != GRPC_CALL_OK) {
    fprintf(stderr, "server: request_registered_call failed: %d\n", e);
    grpc_metadata_array_destroy(&s->request_md);
    free(s);
  }
}

static void free_slot(call_slot *s) {
  if (s->call) grpc_call_unref(s->call);
  grpc_metadata_array_destroy(&s->request_md);
  if (s->request) grpc_byte_buffer_destroy(s->request);
  if (s->response) grpc_byte_buffer_destroy(s->response);
  grpc_slice_unref(s->details);
  if (s->has_trailer) grpc_slice_unref(s->trailing_md[0].value);
  free(s);
}

static int slice_eq(grpc_slice sl, const char *s) {
  size_t n = strlen(s);
  return GRPC_SLICE_LENGTH(sl) == n && memcmp(GRPC_SLICE_START_PTR(sl), s, n) == 0;
}

/* Fills the answer of a TestService/Health call into the slot. */
static void build_answer(call_slot *s, const rpc_behavior *b) {
  server_state *st = s->w->st;
  s->code = GRPC_STATUS_OK;
  s->details = grpc_empty_slice();
  switch (s->method) {
    case M_UNARY: {
      Grpc__Testing__SimpleRequest *req = (Grpc__Testing__SimpleRequest *)io_pb_buf_unpack(
          s->request, &grpc__testing__simple_request__descriptor);
      if (req == NULL) {
        s->code = GRPC_STATUS_INVALID_ARGUMENT;
        s->details = grpc_slice_from_static_string("cannot parse SimpleRequest");
        return;
      }
      if (req->response_size < 0 || req->response_size > MAX_RESPONSE_SIZE) {
        s->code = GRPC_STATUS_INVALID_ARGUMENT;
        s->details = grpc_slice_from_static_string("response_size out of range");
        protobuf_c_message_free_unpacked(&req->base, NULL);
        return;
      }
      if (req->response_status != NULL && req->response_status->code != 0) {
        s->code = (grpc_status_code)req->response_status->code;
        s->details = grpc_slice_from_copied_string(
            req->response_status->message ? req->response_status->message : "");
        protobuf_c_message_free_unpacked(&req->base, NULL);
        return;
      }
      Grpc__Testing__SimpleResponse resp = GRPC__TESTING__SIMPLE_RESPONSE__INIT;
      Grpc__Testing__Payload payload = GRPC__TESTING__PAYLOAD__INIT;
      uint8_t *body = NULL;
      if (req->response_size > 0) {
        body = calloc((size_t)req->response_size, 1);
        payload.body.data = body;
        payload.body.len = body ? (size_t)req->response_size : 0;
        resp.payload = &payload;
      }
      resp.hostname = st->hostname;
      resp.server_id = st->server_id;
      s->response = io_pb_buf_pack(&resp.base);
      free(body);
      protobuf_c_message_free_unpacked(&req->base, NULL);
      break;
    }
    case M_EMPTY: {
      Grpc__Testing__Empty resp = GRPC__TESTING__EMPTY__INIT;
      s->response = io_pb_buf_pack(&resp.base);
      break;
    }
    case M_HEALTH: {
      Grpc__Health__V1__HealthCheckRequest *req = (Grpc__Health__V1__HealthCheckRequest *)
          io_pb_buf_unpack(s->request, &grpc__health__v1__health_check_request__descriptor);
      if (req == NULL) {
        s->code = GRPC_STATUS_INVALID_ARGUMENT;
        s->details = grpc_slice_from_static_string("cannot parse HealthCheckRequest");
        return;
      }
      int known = req->service == NULL || req->service[0] == '\0' ||
                  strcmp(req->service, "grpc.testing.TestService") == 0;
      protobuf_c_message_free_unpacked(&req->base, NULL);
      if (!known) {
        s->code = GRPC_STATUS_NOT_FOUND;
        s->details = grpc_slice_from_static_string("unknown service");
        return;
      }
      Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
      resp.status = atomic_load(&st->shutting_down)
                        ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING
                        : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
      s->response = io_pb_buf_pack(&resp.base);
      break;
    }
    default:
      break;
  }
  if (b->error_code > 0) {
    /* rpc-behavior error-code-N replaces the answer (0 keeps it). */
    if (s->response) grpc_byte_buffer_destroy(s->response);
    s->response = NULL;
    grpc_slice_unref(s->details);
    s->code = (grpc_status_code)b->error_code;
    s->details = grpc_slice_from_static_string("rpc-behavior error-code");
  }
}

/* Starts the single answer batch of a slot. */
static void send_answer(call_slot *s) {
  server_state *st = s->w->st;
  grpc_op ops[4];
  memset(ops, 0, sizeof(ops));
  size_t n = 0;
  s->initial_md[0].key = grpc_slice_from_static_string("hostname");
  s->initial_md[0].value = grpc_slice_from_static_string(st->hostname);
  ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[n].data.send_initial_metadata.count = 1;
  ops[n].data.send_initial_metadata.metadata = s->initial_md;
  n++;
  if (s->code == GRPC_STATUS_OK && s->response != NULL) {
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n].data.send_message.send_message = s->response;
    n++;
  }
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = s->code;
  ops[n].data.send_status_from_server.status_details = &s->details;
  ops[n].data.send_status_from_server.trailing_metadata_count = 0;
  if (s->method != M_HEALTH) io_server_load_count_call(&st->load, io_delay_queue_now_ns());
  if (st->orca && s->method != M_HEALTH) {
    uint8_t report[ORCA_RATE_REPORT_LEN];
    size_t len;
    if (st->opt.capacity_qps > 0) {
      double rate = io_server_load_rate(&st->load, io_delay_queue_now_ns());
      len = io_orca_rate_report(rate / st->opt.capacity_qps, rate, report);
    } else {
      len = io_orca_cpu_report(
          io_server_load_utilization(&st->load, io_delay_queue_now_ns()), report);
    }
    s->trailing_md[0].key = grpc_slice_from_static_string(ORCA_TRAILER_KEY);
    s->trailing_md[0].value = grpc_slice_from_copied_buffer((const char *)report, len);
    s->has_trailer = 1;
    ops[n].data.send_status_from_server.trailing_metadata_count = 1;
    ops[n].data.send_status_from_server.trailing_metadata = s->trailing_md;
  }
  n++;
  ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[n].data.recv_close_on_server.cancelled = &s->cancelled;
  n++;
  s->state = SLOT_ANSWERING;
  if ((unsigned)s->code <= 16) atomic_fetch_add(&st->calls_by_code[s->code], 1);
  grpc_call_error e = grpc_call_start_batch(s->call, ops, n, s, NULL);
  if (e != GRPC_CALL_OK) {
    fprintf(stderr, "server: start_batch failed: %d\n", e);
    free_slot(s);
  }
}

/* Runs a call's CPU work now and counts it in the load window. */
static void do_work(call_slot *s) {
  server_state *st = s->w->st;
  int64_t cpu = io_server_work_run(st->work_iterations);
  io_server_load_add(&st->load, io_delay_queue_now_ns(), cpu);
}

/* Answers s RESOURCE_EXHAUSTED: its worker's delay queue is full, or the
 * virtual CPU is more than a minute behind. */
static void answer_full(call_slot *s) {
  server_state *st = s->w->st;
  atomic_fetch_add(&st->delayed_rejected, 1);
  if (s->response) grpc_byte_buffer_destroy(s->response);
  s->response = NULL;
  grpc_slice_unref(s->details);
  s->code = GRPC_STATUS_RESOURCE_EXHAUSTED;
  s->details = grpc_slice_from_static_string("too many delayed calls");
  send_answer(s);
}

/* Holds s until due_ns, or answers it now when that time has passed (or
 * RESOURCE_EXHAUSTED when the queue is full). */
static void answer_at(call_slot *s, int64_t due_ns) {
  server_state *st = s->w->st;
  if (due_ns > io_delay_queue_now_ns() && !atomic_load(&st->flush_delayed)) {
    if (io_delay_queue_push(s->w->delayed, due_ns, s) != 0) answer_full(s);
    else atomic_fetch_add(&st->delayed_held, 1);
    return;
  }
  send_answer(s);
}

/* A held call's time came: run its queued work, or answer it. */
static void on_due(call_slot *s) {
  if (!s->work_pending) {
    send_answer(s);
    return;
  }
  s->work_pending = 0;
  do_work(s);
  answer_at(s, s->answer_due);
}

static void handle_new_call(call_slot *s) {
  worker *w = s->w;
  server_state *st = w->st;
  atomic_fetch_add(&st->calls[s->method], 1);
  rpc_behavior b;
  io_rpc_behavior_init(&b);
  for (size_t i = 0; i < s->request_md.count; i++) {
    grpc_metadata *md = &s->request_md.metadata[i];
    if (slice_eq(md->key, "rpc-behavior")) {
      /* a malformed header keeps what parsed; the call still succeeds */
      (void)io_rpc_behavior_parse(&b, (const char *)GRPC_SLICE_START_PTR(md->value),
                               GRPC_SLICE_LENGTH(md->value), st->hostname);
    }
  }
  build_answer(s, &b);
  long delay_ms = b.sleep_ms + (s->method == M_HEALTH
                                    ? 0
                                    : st->opt.extra_latency_ms + io_slow_toggle_extra_ms() +
                                          io_latency_tail_next_ms(st->tail));
  int64_t delay_ns = (int64_t)delay_ms * 1000000LL;
  int64_t now = io_delay_queue_now_ns();
  int64_t ready = now;
  if (st->work_iterations > 0 && s->method != M_HEALTH && !atomic_load(&st->flush_delayed)) {
    int64_t start;
    ready = io_server_load_reserve(&st->load, now, st->work_cost_ns,
                                   RPC_BEHAVIOR_MAX_SLEEP_MS * 1000000LL, &start);
    if (ready < 0) { /* a minute behind: refuse rather than queue without end */
      answer_full(s);
      return;
    }
    if (start > now) { /* the virtual CPU is busy: the work waits its turn */
      s->work_pending = 1;
      s->answer_due = ready + delay_ns;
      if (io_delay_queue_push(w->delayed, start, s) == 0) {
        atomic_fetch_add(&st->delayed_held, 1);
        return;
      }
      s->work_pending = 0;
      answer_full(s);
      return;
    }
    do_work(s);
    if (st->load.quota <= 0) ready = io_delay_queue_now_ns();
  }
  if (delay_ms > 0 || ready > now) {
    answer_at(s, ready + delay_ns);
    return;
  }
  send_answer(s);
}

static void *worker_main(void *arg) {
  worker *w = arg;
  server_state *st = w->st;
  for (int m = 0; m < M_COUNT; m++) request_call(w, (method_kind)m);
  for (;;) {
    int64_t now = io_delay_queue_now_ns();
    call_slot *due;
    while ((due = io_delay_queue_pop_due(w->delayed, now)) != NULL) {
      atomic_fetch_sub(&st->delayed_held, 1);
      on_due(due);
    }
    if (atomic_load(&st->flush_delayed)) {
      while ((due = io_delay_queue_pop_any(w->delayed)) != NULL) {
        atomic_fetch_sub(&st->delayed_held, 1);
        send_answer(due);
      }
    }
    /* Wake for the next timer, and at least every 100 ms to see shutdown. */
    int64_t wait_ns = 100000000LL;
    int64_t next = io_delay_queue_next_due(w->delayed);
    if (next != INT64_MAX && next - now < wait_ns) wait_ns = next - now > 0 ? next - now : 0;
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                         gpr_time_from_nanos(wait_ns, GPR_TIMESPAN));
    grpc_event ev = grpc_completion_queue_next(w->cq, deadline, NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type != GRPC_OP_COMPLETE) continue;
    call_slot *s = ev.tag;
    if (s->state == SLOT_REQUESTED) {
      if (!ev.success) { /* server shutting down */
        free_slot(s);
        continue;
      }
      request_call(w, s->method); /* keep one request outstanding per method */
      handle_new_call(s);
    } else {
      free_slot(s);
    }
  }
  return NULL;
}

static void write_stats(FILE *f, void *arg) {
  server_state *st = arg;
  fprintf(f, "{\"server_id\":");
  ap_json_write_string(f, st->server_id);
  fprintf(f, ",\"hostname\":");
  ap_json_write_string(f, st->hostname);
  fprintf(f, ",\"port\":%d,\"pid\":%ld", st->bound_port, (long)getpid());
  long total = 0;
  for (int m = 0; m < M_COUNT; m++) {
    long c = atomic_load(&st->calls[m]);
    fprintf(f, ",\"%s\":%ld", kMethodNames[m], c);
    if (m != M_HEALTH) total += c;
  }
  fprintf(f, ",\"calls\":%ld,\"calls_by_code\":{", total);
  int first = 1;
  for (int c = 0; c <= 16; c++) {
    long v = atomic_load(&st->calls_by_code[c]);
    if (v == 0) continue;
    fprintf(f, "%s\"%d\":%ld", first ? "" : ",", c, v);
    first = 0;
  }
  fprintf(f, "},\"delayed_rejected\":%ld", atomic_load(&st->delayed_rejected));
  fprintf(f, ",\"tail_calls\":%llu", (unsigned long long)io_latency_tail_count(st->tail));
  long work_calls = 0;
  int64_t work_ns = io_server_load_total_ns(&st->load, &work_calls);
  fprintf(f, ",\"capacity\":%g,\"work_us\":%g,\"cpu_quota\":%g,\"orca\":%d", st->capacity,
          st->work_us, st->opt.cpu_quota, st->orca);
  fprintf(f, ",\"work_calls\":%ld,\"work_cpu_ns\":%lld,\"cpu_utilization\":%.4f", work_calls,
          (long long)work_ns, io_server_load_utilization(&st->load, io_delay_queue_now_ns()));
  double rate = io_server_load_rate(&st->load, io_delay_queue_now_ns());
  fprintf(f, ",\"capacity_qps\":%g,\"rate_qps\":%.2f", st->opt.capacity_qps, rate);
  if (st->opt.capacity_qps > 0) fprintf(f, ",\"rate_utilization\":%.4f", rate / st->opt.capacity_qps);
  fprintf(f, ",\"connections_current\":%ld,\"connections_peak\":%ld,\"connections_opened\":%ld}\n",
          io_channelz_tracker_current(st->conns), io_channelz_tracker_peak(st->conns),
          io_channelz_tracker_opened(st->conns));
}

static void save_stats(server_state *st) {
  if (st->opt.stats_file == NULL) return;
  if (io_json_write_file_atomic(st->opt.stats_file, write_stats, st) != 0) {
    fprintf(stderr, "server: cannot write --stats-file %s\n", st->opt.stats_file);
  }
}

static void usage(void) {
  fprintf(stderr,
          "usage: server [--port P] [--host ADDR] [--server-id ID] [--hostname NAME]\n"
          "              [--extra-latency-ms N] [--threads T] [--stats-file PATH]\n"
          "              [--stats-interval-ms N] [--shutdown-grace-ms N]\n"
          "              [--max-connection-age-ms N] [--capacity F] [--work-us W]\n"
          "              [--cpu-quota Q] [--orca | --no-orca] [--capacity-qps Q]\n"
          "              [--slow-latency-ms N]\n"
          "              [--tail-share F --tail-ms N [--tail-seed S]]\n"
          "--tail-share F (0..1) with --tail-ms N (0..60000): a share F of the TestService\n"
          "               calls, drawn from --tail-seed S (default 1), answers N ms later\n"
          "--capacity F   (0.01..100, default 1) each TestService call does W/F us of CPU work\n"
          "--work-us W    (0..100000) the work at capacity 1; default 1000 with --capacity,\n"
          "               else 0 (no work). The work is a hash loop calibrated at start-up\n"
          "               against the thread CPU clock; one call's work is at most 1 s.\n"
          "--cpu-quota Q  (cores, 0.001..64; default none) the work runs on a virtual CPU of\n"
          "               Q cores shared by the workers, like a container CPU limit: calls\n"
          "               wait their turn, so the server saturates at Q*F*1e6/W calls/s\n"
          "--orca         send trailer endpoint-load-metrics-bin (xds.data.orca.v3.\n"
          "               OrcaLoadReport, field 1 cpu_utilization) on every TestService\n"
          "               answer; default on when there is work; --no-orca: never.\n"
          "               cpu_utilization = work CPU time (thread CPU clock) of the last\n"
          "               1 s / (1 s x Q, or x --threads without a quota), clamped to [0,1]\n"
          "--capacity-qps Q  (0.001..1e7) a rate-based report instead: cpu_utilization and\n"
          "               application_utilization = answered calls/s of the last 1 s / Q,\n"
          "               rps_fractional = those calls/s; turns --orca on\n");
}

static int parse_options(int argc, char **argv, options *o) {
  o->host = "127.0.0.1";
  o->port = 0;
  o->server_id = NULL;
  o->hostname = NULL;
  o->extra_latency_ms = 0;
  o->threads = 2;
  o->stats_file = NULL;
  o->stats_interval_ms = 200;
  o->shutdown_grace_ms = 2000;
  o->capacity = 0;
  o->work_us = -1;
  o->cpu_quota = 0;
  o->orca = 0;
  o->no_orca = 0;
  o->tail_share = 0;
  o->tail_ms = 0;
  o->tail_seed = 1;
  const flag_spec specs[] = {
      {"port", FLAG_LONG, &o->port, 0, 65535},
      {"extra-latency-ms", FLAG_LONG, &o->extra_latency_ms, 0, RPC_BEHAVIOR_MAX_SLEEP_MS},
      {"threads", FLAG_LONG, &o->threads, 1, MAX_THREADS},
      {"stats-interval-ms", FLAG_LONG, &o->stats_interval_ms, 10, 60000},
      {"shutdown-grace-ms", FLAG_LONG, &o->shutdown_grace_ms, 0, 60000},
      {"max-connection-age-ms", FLAG_LONG, &o->max_connection_age_ms, 100, 86400000},
      {"capacity", FLAG_DOUBLE, &o->capacity, 0.01, 100},
      {"work-us", FLAG_DOUBLE, &o->work_us, 0, 100000},
      {"cpu-quota", FLAG_DOUBLE, &o->cpu_quota, 0.001, 64},
      {"capacity-qps", FLAG_DOUBLE, &o->capacity_qps, 0.001, 1e7},
      {"slow-latency-ms", FLAG_LONG, &o->slow_latency_ms, 0, 60000},
      {"tail-share", FLAG_DOUBLE, &o->tail_share, 0, 1},
      {"tail-ms", FLAG_LONG, &o->tail_ms, 0, LATENCY_TAIL_MAX_MS},
      {"tail-seed", FLAG_LONG, &o->tail_seed, 0, 2147483647},
      {"host", FLAG_STRING, &o->host, 0, 0},
      {"server-id", FLAG_STRING, &o->server_id, 0, 0},
      {"hostname", FLAG_STRING, &o->hostname, 0, 0},
      {"stats-file", FLAG_STRING, &o->stats_file, 0, 0},
  };
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = io_flag_parse_one(argc, argv, &i, specs, sizeof specs / sizeof specs[0])) != 0) {
      if (r < 0) return -1;
      continue;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage();
      exit(0);
    }
    if (strcmp(argv[i], "--orca") == 0) {
      o->orca = 1;
      continue;
    }
    if (strcmp(argv[i], "--no-orca") == 0) {
      o->no_orca = 1;
      continue;
    }
    fprintf(stderr, "server: unknown argument '%s'\n", argv[i]);
    usage();
    return -1;
  }
  if (o->orca && o->no_orca) {
    fprintf(stderr, "flag --orca: cannot be given with --no-orca\n");
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  static server_state st;
  if (parse_options(argc, argv, &st.opt) != 0) return 2;

  /* Signals are taken synchronously by the main thread (sigtimedwait); every
   * thread started below inherits the blocked mask. */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  if (io_slow_toggle_configure(st.opt.slow_latency_ms) != 0) return 2;
  st.tail = io_latency_tail_create(st.opt.tail_share, st.opt.tail_ms, (uint64_t)st.opt.tail_seed);
  if (st.tail == NULL) return 2;
  io_slow_toggle_add_signals(&sigs);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);

  grpc_init();
  st.conns = io_channelz_tracker_create();
  /* The work per call: calibrated before anything is served. */
  st.capacity = st.opt.capacity > 0 ? st.opt.capacity : 1;
  st.work_us = st.opt.work_us >= 0 ? st.opt.work_us : (st.opt.capacity > 0 ? 1000 : 0);
  if (st.work_us > 0) {
    double per_us = io_server_work_calibrate();
    st.work_iterations = io_server_work_iterations(st.work_us, st.capacity, per_us);
    st.work_cost_ns = (int64_t)((double)st.work_iterations / per_us * 1000.0);
    fprintf(stderr, "server: work %.0f us at capacity %g: %llu iterations (%.1f per us)\n",
            st.work_us, st.capacity, (unsigned long long)st.work_iterations, per_us);
  }
  st.orca = st.opt.no_orca ? 0
                           : (st.opt.orca || st.work_iterations > 0 || st.opt.capacity_qps > 0);
  io_server_load_init(&st.load, (int)st.opt.threads, st.opt.cpu_quota, io_delay_queue_now_ns());
  /* --max-connection-age-ms: the server closes each connection gracefully
   * (GOAWAY, calls in flight finish) after that age, so clients reconnect
   * and re-resolve periodically; fleets use it to drain a server that was
   * removed from DNS before stopping it. */
  grpc_arg age_args[2] = {
      {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_CONNECTION_AGE_MS,
       .value.integer = (int)st.opt.max_connection_age_ms},
      {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
       .value.integer = 10000},
  };
  grpc_channel_args server_args = {2, age_args};
  st.server = grpc_server_create(st.opt.max_connection_age_ms > 0 ? &server_args : NULL, NULL);
  for (int m = 0; m < M_COUNT; m++) {
    st.methods[m] = grpc_server_register_method(st.server, kMethodPaths[m], NULL,
                                                GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
  }
  worker workers[MAX_THREADS];
  memset(workers, 0, sizeof(workers));
  for (long t = 0; t < st.opt.threads; t++) {
    workers[t].st = &st;
    workers[t].cq = grpc_completion_queue_create_for_next(NULL);
    workers[t].delayed = io_delay_queue_create(MAX_DELAYED_PER_WORKER);
    grpc_server_register_completion_queue(st.server, workers[t].cq, NULL);
  }
  grpc_completion_queue *shutdown_cq = grpc_completion_queue_create_for_pluck(NULL);

  char addr[300];
  int v6 = strchr(st.opt.host, ':') != NULL;
  snprintf(addr, sizeof(addr), v6 ? "[%s]:%ld" : "%s:%ld", st.opt.host, st.opt.port);
  grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
  st.bound_port = grpc_server_add_http2_port(st.server, addr, creds);
  grpc_server_credentials_release(creds);
  if (st.bound_port <= 0) {
    fprintf(stderr, "server: cannot bind %s\n", addr);
    return 1;
  }
  char host[200] = "localhost";
  gethostname(host, sizeof(host) - 1);
  if (st.opt.hostname) snprintf(st.hostname, sizeof(st.hostname), "%s", st.opt.hostname);
  else snprintf(st.hostname, sizeof(st.hostname), "%s:%d", host, st.bound_port);
  if (st.opt.server_id) snprintf(st.server_id, sizeof(st.server_id), "%s", st.opt.server_id);
  else snprintf(st.server_id, sizeof(st.server_id), "server-%d", st.bound_port);

  grpc_server_start(st.server);
  for (long t = 0; t < st.opt.threads; t++) {
    pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]);
  }
  printf(v6 ? "listening [%s]:%d\n" : "listening %s:%d\n", st.opt.host, st.bound_port);
  fflush(stdout);

  /* Main loop: sample connections every 50 ms, save stats each interval,
   * until a signal arrives. */
  int64_t next_save = 0;
  for (;;) {
    struct timespec wait = {0, 50 * 1000000L};
    int sig = sigtimedwait(&sigs, NULL, &wait);
    if (sig == SIGTERM || sig == SIGINT) break;
    (void)io_slow_toggle_signal(sig);
    io_channelz_tracker_sample(st.conns);
    int64_t now = io_delay_queue_now_ns();
    if (now >= next_save) {
      save_stats(&st);
      next_save = now + st.opt.stats_interval_ms * 1000000LL;
    }
  }

  /* Final sample while clients may still be connected, then a graceful
   * shutdown: GOAWAY, no new calls, calls in flight (also delayed ones) get
   * --shutdown-grace-ms to finish; after that they are answered at once
   * and whatever is left is cancelled. */
  io_channelz_tracker_sample(st.conns);
  atomic_store(&st.shutting_down, true);
  grpc_server_shutdown_and_notify(st.server, shutdown_cq, NULL);
  grpc_event ev = grpc_completion_queue_pluck(
      shutdown_cq, NULL,
      gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                   gpr_time_from_millis(st.opt.shutdown_grace_ms, GPR_TIMESPAN)),
      NULL);
  if (ev.type != GRPC_OP_COMPLETE) {
    atomic_store(&st.flush_delayed, true);
    grpc_server_cancel_all_calls(st.server);
    ev = grpc_completion_queue_pluck(
        shutdown_cq, NULL,
        gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_seconds(10, GPR_TIMESPAN)),
        NULL);
    if (ev.type != GRPC_OP_COMPLETE) fprintf(stderr, "server: shutdown timed out\n");
  }
  atomic_store(&st.flush_delayed, true);
  /* A worker answers its delayed calls when it next wakes (within 100 ms);
   * a batch started after its cq shut down would abort the process, so the
   * cqs shut down once every delayed call left (bounded: 2 s). */
  for (int waited = 0; atomic_load(&st.delayed_held) > 0 && waited < 200; waited++) {
    struct timespec tick = {0, 10 * 1000000L};
    nanosleep(&tick, NULL);
  }
  grpc_server_destroy(st.server);
  for (long t = 0; t < st.opt.threads; t++) grpc_completion_queue_shutdown(workers[t].cq);
  for (long t = 0; t < st.opt.threads; t++) {
    pthread_join(workers[t].thread, NULL);
    grpc_completion_queue_destroy(workers[t].cq);
    io_delay_queue_destroy(workers[t].delayed);
  }
  grpc_completion_queue_shutdown(shutdown_cq);
  grpc_completion_queue_destroy(shutdown_cq);
  save_stats(&st);
  io_channelz_tracker_destroy(st.conns);
  io_server_load_destroy(&st.load);
  io_latency_tail_destroy(st.tail);
  grpc_shutdown();
  return 0;
}
