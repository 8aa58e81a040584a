/*
 * ap_status_server: serves the status and health methods on a grpc_server
 * with the public C-core API. Every completion-queue tag is a
 * grpc_completion_queue_functor, so the same handlers run either from the
 * admin server's own thread (a "next" queue it drains) or from gRPC's
 * callback threads (a callback queue on an application-owned server).
 *
 * Each served method keeps exactly one outstanding request; when a call
 * arrives the next request is posted first, then the call is answered with
 * one batch (initial metadata, message, status, close). `outstanding`
 * counts posted tags so shutdown can wait for all of them.
 *
 * GetRingState calls are computed on a thread of their own, at most
 * `max_calls` at once (ap_status_limits.h); a call past the bound is
 * answered RESOURCE_EXHAUSTED by the thread that received it. So the admin
 * thread and gRPC's callback threads only accept, reject and complete
 * calls, and never wait for a snapshot. A call's thread copies the page
 * from the registry (the only shared state an answer reads, under the
 * registry's and the channels' locks) and allocates what the answer
 * needs; threads at the idle scheduling class fill, measure and pack it,
 * allocating nothing and holding no lock (not even the allocator's); the
 * call's thread frees the copy and sends the answer. So the idle class
 * never holds what another thread may wait for.
 *
 * Memory: every call reserves, before it copies, the most its answer can
 * take from the service's budget (ap_status_budget.h), trues it up once
 * the answer's size is known, and keeps the answer's bytes reserved until
 * the client has them, so that clients that do not read cannot pile up
 * answers. The admin server also caps its connections
 * (ap_status_listener.h) and gives them an idle time and a maximum age.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "policy/core/ap_error.h"
#include "policy/include/aperture.h"
#include "policy/status/ap_status_budget.h"
#include "policy/status/ap_status_handler.h"
#include "policy/status/ap_status_limits.h"
#include "policy/status/ap_status_listener.h"
#include "policy/status/ap_status_server_testing.h"

enum call_kind { KIND_RING_STATE = 0, KIND_HEALTH = 1, KIND_UNKNOWN = 2, KIND_COUNT = 3 };

struct aperture_status_service {
  grpc_server *server;
  grpc_completion_queue *cq;
  void *methods[2];      /* registered method handles by kind */
  int serve_unknown;     /* answer unregistered methods with UNIMPLEMENTED */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t outstanding;    /* posted tags not yet completed */
  int shutting_down;     /* no new requests are posted */
  unsigned max_calls;    /* GetRingState calls computed at once, at most */
  unsigned active_calls; /* GetRingState calls being computed now */
  ap_status_budget budget; /* bytes of answers built or being built */
  int cq_shutdown_done;  /* callback queue's shutdown functor ran */
  grpc_completion_queue_functor cq_shutdown;
};

struct aperture_status_server {
  struct aperture_status_service svc;
  ap_status_listener *listener;
  pthread_t thread;
  int port;
  int server_shutdown_done;
  grpc_completion_queue_functor server_shutdown;
};

typedef struct status_call {
  grpc_completion_queue_functor functor; /* first: the tag */
  struct aperture_status_service *svc;
  int kind;
  int replying;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array request_md;
  grpc_call_details details; /* KIND_UNKNOWN only */
  grpc_byte_buffer *payload;
  grpc_byte_buffer *response;
  grpc_slice status_details;
  int cancelled;
  size_t reserved; /* of svc->budget, until the answer is sent */
} status_call;

/* Tests may shrink the limits of services started afterwards
 * (ap_status_server_testing.h); 0 keeps the default. */
static size_t g_test_budget_bytes;
static unsigned g_test_max_connections;
static int g_test_idle_ms, g_test_age_ms, g_test_grace_ms;

void ap_status_set_limits_for_testing(const ap_status_test_limits *limits) {
  g_test_budget_bytes = limits != NULL ? limits->budget_bytes : 0;
  g_test_max_connections = limits != NULL ? limits->max_connections : 0;
  g_test_idle_ms = limits != NULL ? limits->idle_ms : 0;
  g_test_age_ms = limits != NULL ? limits->age_ms : 0;
  g_test_grace_ms = limits != NULL ? limits->grace_ms : 0;
}

/* The public functions report through aperture_error; inside, the core's
 * ap_error_set formats every message, and export_error copies it out (the
 * codes are the same values, policy/include/aperture.h). */
static int export_error(int rc, const ap_error *from, aperture_error *to) {
  if (to != NULL) {
    to->code = rc;
    snprintf(to->message, sizeof to->message, "%s", rc == AP_OK ? "" : from->message);
  }
  return rc;
}

static void call_free(status_call *c) {
  if (c->call != NULL) grpc_call_unref(c->call);
  grpc_metadata_array_destroy(&c->request_md);
  if (c->kind == KIND_UNKNOWN) grpc_call_details_destroy(&c->details);
  if (c->payload != NULL) grpc_byte_buffer_destroy(c->payload);
  if (c->response != NULL) grpc_byte_buffer_destroy(c->response);
  grpc_slice_unref(c->status_details);
  free(c);
}

/* Marks one posted tag as finished. Must be the last touch of `svc`. */
static void tag_done(struct aperture_status_service *svc) {
  pthread_mutex_lock(&svc->mu);
  svc->outstanding--;
  pthread_cond_broadcast(&svc->cv);
  pthread_mutex_unlock(&svc->mu);
}

static void on_call_event(grpc_completion_queue_functor *functor, int ok);

/* Posts a request for the next call of `kind`. No-op while shutting down. */
static int request_next(struct aperture_status_service *svc, int kind) {
  status_call *c = calloc(1, sizeof *c);
  if (c == NULL) return APERTURE_ENOMEM;
  c->functor.functor_run = on_call_event;
  c->functor.inlineable = 0;
  c->svc = svc;
  c->kind = kind;
  c->status_details = grpc_empty_slice();
  grpc_metadata_array_init(&c->request_md);
  if (kind == KIND_UNKNOWN) grpc_call_details_init(&c->details);
  pthread_mutex_lock(&svc->mu);
  if (svc->shutting_down) {
    pthread_mutex_unlock(&svc->mu);
    call_free(c);
    return APERTURE_ESTATE;
  }
  svc->outstanding++;
  pthread_mutex_unlock(&svc->mu);
  grpc_call_error e;
  if (kind == KIND_UNKNOWN) {
    e = grpc_server_request_call(svc->server, &c->call, &c->details, &c->request_md, svc->cq,
                                 svc->cq, &c->functor);
  } else {
    e = grpc_server_request_registered_call(svc->server, svc->methods[kind], &c->call,
                                            &c->deadline, &c->request_md, &c->payload, svc->cq,
                                            svc->cq, &c->functor);
  }
  if (e != GRPC_CALL_OK) {
    call_free(c);
    tag_done(svc);
    return APERTURE_EINTERNAL;
  }
  return APERTURE_OK;
}

/* The request's bytes (an empty slice when there are none). */
static grpc_slice request_bytes(status_call *c) {
  grpc_byte_buffer_reader reader;
  if (c->payload == NULL || !grpc_byte_buffer_reader_init(&reader, c->payload))
    return grpc_empty_slice();
  grpc_slice bytes = grpc_byte_buffer_reader_readall(&reader);
  grpc_byte_buffer_reader_destroy(&reader);
  return bytes;
}

/* Runs the handler for a health or unknown method's call. */
static void handle(status_call *c, ap_status_reply *reply) {
  memset(reply, 0, sizeof *reply);
  if (c->kind == KIND_UNKNOWN) {
    char *method = grpc_slice_to_c_string(c->details.method);
    reply->code = GRPC_STATUS_UNIMPLEMENTED;
    snprintf(reply->message, sizeof reply->message, "unknown method %.200s", method);
    gpr_free(method);
    return;
  }
  if (c->payload == NULL) {
    reply->code = GRPC_STATUS_INVALID_ARGUMENT;
    snprintf(reply->message, sizeof reply->message, "request message missing");
    return;
  }
  grpc_slice bytes = request_bytes(c);
  ap_status_handle_health_check(GRPC_SLICE_START_PTR(bytes), GRPC_SLICE_LENGTH(bytes), reply);
  grpc_slice_unref(bytes);
}

/* Answers the call with `reply` (consumed) in one batch. Returns 0 when the
 * batch was started: from then on its completion owns `c`. */
static int send_reply(status_call *c, ap_status_reply *replyp) {
  ap_status_reply reply = *replyp;
  memset(replyp, 0, sizeof *replyp);
  grpc_op ops[4];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[n].data.send_initial_metadata.count = 0;
  n++;
  if (reply.code == GRPC_STATUS_OK) {
    /* gRPC takes the body as it is (no copy into its own allocation) and
     * frees it when sent: its pages go back to the system then. */
    grpc_slice body = grpc_empty_slice();
    if (reply.body_len > 0) {
      body = grpc_slice_new(reply.body, reply.body_len, ap_status_body_free);
      reply.body = NULL;
    }
    c->response = grpc_raw_byte_buffer_create(&body, 1);
    grpc_slice_unref(body);
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n].data.send_message.send_message = c->response;
    n++;
  }
  c->status_details = grpc_slice_from_copied_string(reply.message);
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.trailing_metadata_count = 0;
  ops[n].data.send_status_from_server.status = (grpc_status_code)reply.code;
  ops[n].data.send_status_from_server.status_details = &c->status_details;
  n++;
  ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[n].data.recv_close_on_server.cancelled = &c->cancelled;
  n++;
  ap_status_reply_clear(&reply);
  c->replying = 1; /* before the batch: its completion may run at once */
  grpc_call_error e = grpc_call_start_batch(c->call, ops, n, &c->functor, NULL);
  if (e != GRPC_CALL_OK) {
    c->replying = 0;
    return -1;
  }
  return 0;
}

/* Takes one of the service's call slots; 0 when all are in use. */
static int admit(struct aperture_status_service *svc) {
  pthread_mutex_lock(&svc->mu);
  int ok = svc->active_calls < svc->max_calls;
  if (ok) svc->active_calls++;
  pthread_mutex_unlock(&svc->mu);
  return ok;
}

static void release_slot(struct aperture_status_service *svc) {
  pthread_mutex_lock(&svc->mu);
  svc->active_calls--;
  pthread_mutex_unlock(&svc->mu);
}

static void reply_busy(ap_status_reply *reply, const char *why, unsigned max_calls) {
  memset(reply, 0, sizeof *reply);
  reply->code = GRPC_STATUS_RESOURCE_EXHAUSTED;
  snprintf(reply->message, sizeof reply->message,
           "status service busy: %s (at most %u GetRingState calls at once, %s); retry later", why,
           max_calls, AP_STATUS_MAX_CALLS_ENV);
}

/* Status answers are for operators, calls are the service: the threads
 * that build an answer run at the idle scheduling class (Linux; elsewhere,
 * or if refused, at the normal one), so a flood of queries takes CPU time
 * that the channels leave unused rather than time they need. Such a
 * thread may wait long for the CPU, so it must hold nothing another
 * thread could wait for: no lock, and no allocation (malloc's arenas have
 * locks, shared between threads once there are more threads than arenas).
 * The budget it checks is a lock-free counter. */
static void yield_cpu_to_calls(void) {
#ifdef SCHED_IDLE
  struct sched_param param;
  memset(&param, 0, sizeof param);
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
#endif
}

static size_t budget_limit(const struct aperture_status_service *svc) { return svc->budget.limit; }

/* The step before packing (ap_status_fits_fn): the answer's whole size,
 * and the call's own memory in gRPC, must fit what the call reserved or
 * what is left of the budget; an answer larger than the budget never
 * does. */
static int fits_budget(void *ctx, size_t need, ap_status_reply *reply) {
  status_call *c = ctx;
  struct aperture_status_service *svc = c->svc;
  const size_t total = need + AP_STATUS_HELD_CALL_BYTES;
  if (total > budget_limit(svc)) {
    reply->code = GRPC_STATUS_RESOURCE_EXHAUSTED;
    snprintf(reply->message, sizeof reply->message,
             "answer of %zu bytes is larger than the %zu bytes the status service gives one "
             "answer; ask for fewer endpoints (max_endpoints, start_index)",
             total, budget_limit(svc));
    return 0;
  }
  if (total > c->reserved) {
    if (!ap_status_budget_reserve(&svc->budget, total - c->reserved)) {
      reply->code = GRPC_STATUS_RESOURCE_EXHAUSTED;
      snprintf(reply->message, sizeof reply->message,
               "status service busy: answers being built or not yet read by their clients hold "
               "%zu of %zu bytes; retry later",
               ap_status_budget_held(&svc->budget), budget_limit(svc));
      return 0;
    }
    c->reserved = total;
  }
  return 1;
}

typedef struct idle_job {
  void (*fn)(void *arg);
  void *arg;
} idle_job;

static void *run_idle_job(void *arg) {
  idle_job *job = arg;
  yield_cpu_to_calls();
  job->fn(job->arg);
  return NULL;
}

/* The build's CPU work (ap_status_run_fn): on a thread at the idle class,
 * waited for here; on this thread when no thread can start. The work
 * allocates nothing and takes no lock (ap_status_handler.h). */
static void run_at_idle_class(void *ctx, void (*fn)(void *arg), void *arg) {
  (void)ctx;
  idle_job job = {fn, arg};
  pthread_t thread;
  if (pthread_create(&thread, NULL, run_idle_job, &job) == 0) {
    pthread_join(thread, NULL);
  } else {
    fn(arg);
  }
}

/* Computes one admitted GetRingState answer and sends it, on the call's
 * own thread: decode, reserve the estimate, copy, build at the idle class,
 * keep only the answer's bytes reserved, give the slot back, send. The
 * call's posted tag keeps `svc` alive until tag_done. */
static void *serve_ring_state(void *arg) {
  status_call *c = arg;
  struct aperture_status_service *svc = c->svc;
  ap_status_reply reply;
  grpc_slice bytes = request_bytes(c);
  ap_status_work *work = c->payload == NULL
                             ? NULL
                             : ap_status_work_start(GRPC_SLICE_START_PTR(bytes),
                                                    GRPC_SLICE_LENGTH(bytes), &reply);
  grpc_slice_unref(bytes);
  if (c->payload == NULL) {
    memset(&reply, 0, sizeof reply);
    reply.code = GRPC_STATUS_INVALID_ARGUMENT;
    snprintf(reply.message, sizeof reply.message, "request message missing");
  }
  if (work != NULL) {
    /* No answer may need more than the whole budget (fits_budget refuses
     * it), so no call reserves more. */
    size_t estimate = ap_status_work_estimate(work) + AP_STATUS_HELD_CALL_BYTES;
    if (estimate > budget_limit(svc)) estimate = budget_limit(svc);
    if (!ap_status_budget_reserve(&svc->budget, estimate)) {
      ap_status_work_free(work);
      reply.code = GRPC_STATUS_RESOURCE_EXHAUSTED;
      snprintf(reply.message, sizeof reply.message,
               "status service busy: answers being built or not yet read by their clients hold "
               "%zu of %zu bytes; retry later",
               ap_status_budget_held(&svc->budget), budget_limit(svc));
    } else {
      c->reserved = estimate;
      if (ap_status_work_copy(work, &reply)) {
        const ap_status_answer_hooks hooks = {run_at_idle_class, fits_budget, c};
        ap_status_work_answer(work, &hooks, &reply, NULL);
      } else {
        ap_status_work_free(work);
      }
    }
  }
  /* From here until it is sent the call holds its answer and itself. */
  const size_t keep =
      c->reserved == 0 ? 0 : (reply.code == GRPC_STATUS_OK ? reply.body_len : 0) + AP_STATUS_HELD_CALL_BYTES;
  if (c->reserved > keep) {
    ap_status_budget_release(&svc->budget, c->reserved - keep);
    c->reserved = keep;
  }
  release_slot(svc);
  if (send_reply(c, &reply) != 0) {
    ap_status_budget_release(&svc->budget, c->reserved);
    call_free(c);
    tag_done(svc);
  }
  return NULL;
}

/* Hands an arrived GetRingState call to a thread of its own, or fills
 * *reply with RESOURCE_EXHAUSTED. Returns 1 when a thread took the call. */
static int dispatch_ring_state(status_call *c, ap_status_reply *reply) {
  struct aperture_status_service *svc = c->svc;
  if (!admit(svc)) {
    reply_busy(reply, "too many concurrent calls", svc->max_calls);
    return 0;
  }
  pthread_attr_t attr;
  pthread_t thread;
  int started = pthread_attr_init(&attr) == 0;
  if (started) {
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&thread, &attr, serve_ring_state, c) == 0;
    pthread_attr_destroy(&attr);
  }
  if (started) return 1;
  release_slot(svc);
  reply_busy(reply, "cannot start a thread", svc->max_calls);
  return 0;
}

static void on_call_event(grpc_completion_queue_functor *functor, int ok) {
  status_call *c = (status_call *)functor;
  struct aperture_status_service *svc = c->svc;
  /* The answer reached the client (or the call ended): its bytes are free. */
  if (c->replying) ap_status_budget_release(&svc->budget, c->reserved);
  if (!c->replying && ok) {
    request_next(svc, c->kind); /* keep one request posted per method */
    ap_status_reply reply;
    if (c->kind == KIND_RING_STATE) {
      if (dispatch_ring_state(c, &reply)) return;
    } else {
      handle(c, &reply); /* health and unknown methods: cheap, answered here */
    }
    if (send_reply(c, &reply) == 0) return;
  }
  call_free(c);
  tag_done(svc);
}

/* Registers GetRingState, and Health/Check when `with_health`: the health
 * answer is always SERVING, which is true of an admin server but would
 * hide the state of an application's own service. */
static int service_init(struct aperture_status_service *svc, grpc_server *server,
                        grpc_completion_queue *cq, int serve_unknown, int with_health,
                        ap_error *err) {
  svc->server = server;
  svc->cq = cq;
  svc->serve_unknown = serve_unknown;
  char why[160];
  if (ap_status_parse_max_calls(getenv(AP_STATUS_MAX_CALLS_ENV), &svc->max_calls, why, sizeof why) != 0)
    return ap_error_set(err, AP_EINVAL, "%s", why);
  ap_status_budget_init(&svc->budget,
                        g_test_budget_bytes != 0 ? g_test_budget_bytes : AP_STATUS_ANSWER_BUDGET_BYTES);
  svc->methods[KIND_RING_STATE] = grpc_server_register_method(
      server, AP_STATUS_METHOD_GET_RING_STATE, NULL, GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
  if (svc->methods[KIND_RING_STATE] == NULL)
    return ap_error_set(err, AP_ESTATE, "cannot register %s (already registered on this server?)",
                     AP_STATUS_METHOD_GET_RING_STATE);
  if (!with_health) return APERTURE_OK;
  svc->methods[KIND_HEALTH] = grpc_server_register_method(
      server, AP_STATUS_METHOD_HEALTH_CHECK, NULL, GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
  if (svc->methods[KIND_HEALTH] == NULL)
    return ap_error_set(err, AP_ESTATE, "cannot register %s (already registered on this server?)",
                     AP_STATUS_METHOD_HEALTH_CHECK);
  return APERTURE_OK;
}

static int service_start(struct aperture_status_service *svc, ap_error *err) {
  for (int kind = 0; kind < KIND_COUNT; kind++) {
    if (kind == KIND_UNKNOWN && !svc->serve_unknown) continue;
    if (kind == KIND_HEALTH && svc->methods[kind] == NULL) continue; /* not asked for */
    int rc = request_next(svc, kind);
    if (rc != APERTURE_OK)
      return ap_error_set(err, rc, "cannot request calls on the server (%s)",
                       rc == APERTURE_ESTATE ? "shutting down" : "not started?");
  }
  ap_error_clear(err);
  return APERTURE_OK;
}

static void wait_outstanding(struct aperture_status_service *svc) {
  pthread_mutex_lock(&svc->mu);
  svc->shutting_down = 1;
  while (svc->outstanding > 0) pthread_cond_wait(&svc->cv, &svc->mu);
  pthread_mutex_unlock(&svc->mu);
}

/* ---- admin server: own server, "next" queue and thread ---- */

static void *admin_loop(void *arg) {
  struct aperture_status_server *s = arg;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(s->svc.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type != GRPC_OP_COMPLETE) continue;
    grpc_completion_queue_functor *f = ev.tag;
    f->functor_run(f, ev.success);
  }
  return NULL;
}

static void on_server_shutdown(grpc_completion_queue_functor *functor, int ok) {
  (void)ok;
  struct aperture_status_server *s =
      (struct aperture_status_server *)((char *)functor -
                                        offsetof(struct aperture_status_server, server_shutdown));
  pthread_mutex_lock(&s->svc.mu);
  s->server_shutdown_done = 1;
  pthread_cond_broadcast(&s->svc.cv);
  pthread_mutex_unlock(&s->svc.mu);
}

/* Frees a server that never started its thread. */
static void admin_abort(struct aperture_status_server *s) {
  if (s->svc.server != NULL) grpc_server_destroy(s->svc.server);
  if (s->svc.cq != NULL) {
    grpc_completion_queue_shutdown(s->svc.cq);
    while (grpc_completion_queue_next(s->svc.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(s->svc.cq);
  }
  pthread_cond_destroy(&s->svc.cv);
  pthread_mutex_destroy(&s->svc.mu);
  free(s);
  grpc_shutdown();
}

static int server_start(const char *address, aperture_status_server **out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "aperture_status_server_start: out is NULL");
  *out = NULL;
  if (address == NULL) address = "127.0.0.1:0";
  if (address[0] == '\0')
    return ap_error_set(err, AP_EINVAL, "aperture_status_server_start: address is empty");
  struct aperture_status_server *s = calloc(1, sizeof *s);
  if (s == NULL) return ap_error_set(err, AP_ENOMEM, "aperture_status_server_start: out of memory");
  pthread_mutex_init(&s->svc.mu, NULL);
  pthread_cond_init(&s->svc.cv, NULL);
  s->server_shutdown.functor_run = on_server_shutdown;
  grpc_init();

  /* Each connection: a 64 KiB request at most, a bounded number of
   * streams (further ones wait in the client, not here), closed after
   * being idle for a while, and after its maximum age plus a grace even
   * when its client never reads (which keeps its calls open). */
  const int idle_ms = g_test_idle_ms != 0 ? g_test_idle_ms : AP_STATUS_CONNECTION_IDLE_MS;
  const int age_ms = g_test_age_ms != 0 ? g_test_age_ms : AP_STATUS_CONNECTION_AGE_MS;
  const int grace_ms = g_test_grace_ms != 0 ? g_test_grace_ms : AP_STATUS_CONNECTION_GRACE_MS;
  grpc_arg arg[5];
  arg[0].type = GRPC_ARG_INTEGER;
  arg[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  arg[0].value.integer = AP_STATUS_MAX_REQUEST_BYTES;
  arg[1].type = GRPC_ARG_INTEGER;
  arg[1].key = (char *)GRPC_ARG_MAX_CONCURRENT_STREAMS;
  arg[1].value.integer = AP_STATUS_MAX_STREAMS_PER_CONNECTION;
  arg[2].type = GRPC_ARG_INTEGER;
  arg[2].key = (char *)GRPC_ARG_MAX_CONNECTION_IDLE_MS;
  arg[2].value.integer = idle_ms;
  arg[3].type = GRPC_ARG_INTEGER;
  arg[3].key = (char *)GRPC_ARG_MAX_CONNECTION_AGE_MS;
  arg[3].value.integer = age_ms;
  arg[4].type = GRPC_ARG_INTEGER;
  arg[4].key = (char *)GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS;
  arg[4].value.integer = grace_ms;
  grpc_channel_args args = {5, arg};
  grpc_server *server = grpc_server_create(&args, NULL);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
  s->svc.server = server;
  s->svc.cq = cq;
  if (server == NULL || cq == NULL) {
    admin_abort(s);
    return ap_error_set(err, AP_EINTERNAL, "aperture_status_server_start: gRPC refused to create a server");
  }
  grpc_server_register_completion_queue(server, cq, NULL);
  int rc = service_init(&s->svc, server, cq, 1, 1, err);
  if (rc != APERTURE_OK) {
    admin_abort(s);
    return rc;
  }
  /* Its own listening socket (ap_status_listener.h): gRPC 1.51 cannot cap
   * a server's connections. */
  ap_error listen_err;
  rc = ap_status_listener_open(address, &s->listener, &s->port, &listen_err);
  if (rc != AP_OK) {
    admin_abort(s);
    return ap_error_set(err, rc, "aperture_status_server_start: %s", listen_err.message);
  }
  grpc_server_start(server);
  rc = service_start(&s->svc, err);
  const unsigned max_connections =
      g_test_max_connections != 0 ? g_test_max_connections : AP_STATUS_MAX_CONNECTIONS;
  if (rc == APERTURE_OK) rc = ap_status_listener_start(s->listener, server, max_connections, err);
  if (rc == APERTURE_OK && pthread_create(&s->thread, NULL, admin_loop, s) != 0)
    rc = ap_error_set(err, AP_EINTERNAL, "aperture_status_server_start: cannot create its thread");
  if (rc != APERTURE_OK) {
    ap_status_listener_close(s->listener);
    s->listener = NULL;
    /* Requests may be posted: drain them on this thread, then free. */
    pthread_mutex_lock(&s->svc.mu);
    s->svc.shutting_down = 1;
    pthread_mutex_unlock(&s->svc.mu);
    grpc_server_shutdown_and_notify(server, cq, &s->server_shutdown);
    grpc_server_cancel_all_calls(server);
    grpc_completion_queue_shutdown(cq);
    admin_loop(s);
    grpc_server_destroy(server);
    grpc_completion_queue_destroy(cq);
    s->svc.server = NULL;
    s->svc.cq = NULL;
    admin_abort(s);
    return rc;
  }
  *out = s;
  ap_error_clear(err);
  return APERTURE_OK;
}

int aperture_status_server_port(const aperture_status_server *server) {
  return server != NULL ? server->port : -1;
}

size_t ap_status_server_connections(aperture_status_server *server) {
  return server != NULL ? ap_status_listener_open_connections(server->listener) : 0;
}

size_t ap_status_server_refused_connections(aperture_status_server *server) {
  return server != NULL ? ap_status_listener_refused(server->listener) : 0;
}

size_t ap_status_service_held_bytes(const aperture_status_service *service) {
  return service != NULL ? ap_status_budget_held((ap_status_budget *)&service->budget) : 0;
}

size_t ap_status_server_held_bytes(const aperture_status_server *server) {
  return server != NULL ? ap_status_service_held_bytes(&server->svc) : 0;
}

void aperture_status_server_stop(aperture_status_server *s) {
  if (s == NULL) return;
  ap_status_listener_close(s->listener); /* no new connections */
  pthread_mutex_lock(&s->svc.mu);
  s->svc.shutting_down = 1;
  pthread_mutex_unlock(&s->svc.mu);
  grpc_server_shutdown_and_notify(s->svc.server, s->svc.cq, &s->server_shutdown);
  grpc_server_cancel_all_calls(s->svc.server);
  pthread_mutex_lock(&s->svc.mu);
  while (!s->server_shutdown_done || s->svc.outstanding > 0)
    pthread_cond_wait(&s->svc.cv, &s->svc.mu);
  pthread_mutex_unlock(&s->svc.mu);
  grpc_server_destroy(s->svc.server);
  grpc_completion_queue_shutdown(s->svc.cq);
  pthread_join(s->thread, NULL);
  grpc_completion_queue_destroy(s->svc.cq);
  pthread_cond_destroy(&s->svc.cv);
  pthread_mutex_destroy(&s->svc.mu);
  free(s);
  grpc_shutdown();
}

/* ---- the service on an application-owned server: callback queue ---- */

static void on_cq_shutdown(grpc_completion_queue_functor *functor, int ok) {
  (void)ok;
  struct aperture_status_service *svc =
      (struct aperture_status_service *)((char *)functor -
                                         offsetof(struct aperture_status_service, cq_shutdown));
  pthread_mutex_lock(&svc->mu);
  svc->cq_shutdown_done = 1;
  pthread_cond_broadcast(&svc->cv);
  pthread_mutex_unlock(&svc->mu);
}

int aperture_status_register(struct grpc_server *server, aperture_status_service **out,
                             aperture_error *err) {
  return aperture_status_register_with(server, 0, out, err);
}

static int register_with(struct grpc_server *server, unsigned flags,
                         aperture_status_service **out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "aperture_status_register: out is NULL");
  *out = NULL;
  if (server == NULL) return ap_error_set(err, AP_EINVAL, "aperture_status_register: server is NULL");
  if ((flags & ~(unsigned)APERTURE_STATUS_WITH_HEALTH) != 0)
    return ap_error_set(err, AP_EINVAL, "aperture_status_register: unknown flags 0x%x", flags);
  struct aperture_status_service *svc = calloc(1, sizeof *svc);
  if (svc == NULL) return ap_error_set(err, AP_ENOMEM, "aperture_status_register: out of memory");
  pthread_mutex_init(&svc->mu, NULL);
  pthread_cond_init(&svc->cv, NULL);
  svc->cq_shutdown.functor_run = on_cq_shutdown;
  grpc_init();
  grpc_completion_queue *cq = grpc_completion_queue_create_for_callback(&svc->cq_shutdown, NULL);
  if (cq == NULL) {
    pthread_cond_destroy(&svc->cv);
    pthread_mutex_destroy(&svc->mu);
    free(svc);
    grpc_shutdown();
    return ap_error_set(err, AP_EINTERNAL, "aperture_status_register: cannot create a completion queue");
  }
  /* Registering the queue is harmless if method registration fails below:
   * destroy() still shuts it down. */
  grpc_server_register_completion_queue(server, cq, NULL);
  int rc = service_init(svc, server, cq, 0, (flags & APERTURE_STATUS_WITH_HEALTH) != 0, err);
  *out = svc; /* even on failure the caller frees it with destroy() */
  if (rc != APERTURE_OK) {
    svc->shutting_down = 1;
    return rc;
  }
  ap_error_clear(err);
  return APERTURE_OK;
}

int aperture_status_server_start(const char *address, aperture_status_server **out,
                                 aperture_error *err) {
  ap_error e;
  ap_error_clear(&e);
  return export_error(server_start(address, out, &e), &e, err);
}

int aperture_status_register_with(struct grpc_server *server, unsigned flags,
                                  aperture_status_service **out, aperture_error *err) {
  ap_error e;
  ap_error_clear(&e);
  return export_error(register_with(server, flags, out, &e), &e, err);
}

int aperture_status_service_start(aperture_status_service *service, aperture_error *err) {
  ap_error e;
  ap_error_clear(&e);
  const int rc = service == NULL ? ap_error_set(&e, AP_EINVAL, "aperture_status_service_start: service is NULL")
                                 : service_start(service, &e);
  return export_error(rc, &e, err);
}

void aperture_status_service_destroy(aperture_status_service *svc) {
  if (svc == NULL) return;
  wait_outstanding(svc);
  grpc_completion_queue_shutdown(svc->cq);
  pthread_mutex_lock(&svc->mu);
  while (!svc->cq_shutdown_done) pthread_cond_wait(&svc->cv, &svc->mu);
  pthread_mutex_unlock(&svc->mu);
  grpc_completion_queue_destroy(svc->cq);
  pthread_cond_destroy(&svc->cv);
  pthread_mutex_destroy(&svc->mu);
  free(svc);
  grpc_shutdown();
}
