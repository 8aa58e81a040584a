#define _GNU_SOURCE
#include "interop/testing/lb_stats_service.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "interop/common/delay_queue.h"
#include "interop/common/pb_buf.h"

#define MAX_WAIT_SEC 60

typedef enum svc_method { SVC_STATS, SVC_ACCUMULATED, SVC_METHODS } svc_method;

static const char *const kPaths[SVC_METHODS] = {
    "/grpc.testing.LoadBalancerStatsService/GetClientStats",
    "/grpc.testing.LoadBalancerStatsService/GetClientAccumulatedStats",
};

typedef enum slot_state { REQUESTED, WAITING, ANSWERING } slot_state;

typedef struct slot {
  slot_state state;
  svc_method method;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array md;
  grpc_byte_buffer *request;
  grpc_byte_buffer *response;
  grpc_status_code code;
  grpc_slice details;
  int cancelled;
  stats_watcher *watcher;
  int64_t give_up_ns;
  struct slot *next_waiting;
} slot;

struct lb_stats_service {
  client_stats *stats;
  grpc_server *server;
  grpc_completion_queue *cq;
  void *methods[SVC_METHODS];
  pthread_t thread;
  atomic_bool stopping;
  slot *waiting; /* GetClientStats calls collecting their calls (thread-only) */
};

static void request(lb_stats_service *svc, svc_method m) {
  if (atomic_load(&svc->stopping)) return;
  slot *s = calloc(1, sizeof(*s));
  if (s == NULL) return;
  s->method = m;
  grpc_metadata_array_init(&s->md);
  if (grpc_server_request_registered_call(svc->server, svc->methods[m], &s->call, &s->deadline,
                                          &s->md, &s->request, svc->cq, svc->cq,
                                          s) != GRPC_CALL_OK) {
    grpc_metadata_array_destroy(&s->md);
    free(s);
  }
}

static void free_slot(slot *s) {
  if (s->call) grpc_call_unref(s->call);
  grpc_metadata_array_destroy(&s->md);
  if (s->request) grpc_byte_buffer_destroy(s->request);
  if (s->response) grpc_byte_buffer_destroy(s->response);
  grpc_slice_unref(s->details);
  free(s);
}

static void answer(slot *s) {
  grpc_op ops[4];
  memset(ops, 0, sizeof(ops));
  size_t n = 0;
  ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
  if (s->code == GRPC_STATUS_OK && s->response) {
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = s->response;
  }
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = s->code;
  ops[n++].data.send_status_from_server.status_details = &s->details;
  ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[n++].data.recv_close_on_server.cancelled = &s->cancelled;
  s->state = ANSWERING;
  if (grpc_call_start_batch(s->call, ops, n, s, NULL) != GRPC_CALL_OK) free_slot(s);
}

static void finish_watch(lb_stats_service *svc, slot *s) {
  Grpc__Testing__LoadBalancerStatsResponse resp;
  io_client_stats_unwatch(svc->stats, s->watcher, &resp);
  s->watcher = NULL;
  s->response = io_pb_buf_pack(&resp.base);
  io_client_stats_free_response(&resp);
  s->code = GRPC_STATUS_OK;
  answer(s);
}

static void handle(lb_stats_service *svc, slot *s) {
  s->details = grpc_empty_slice();
  if (s->method == SVC_ACCUMULATED) {
    Grpc__Testing__LoadBalancerAccumulatedStatsResponse resp;
    io_client_stats_accumulated(svc->stats, &resp);
    s->response = io_pb_buf_pack(&resp.base);
    io_client_stats_free_accumulated(&resp);
    s->code = GRPC_STATUS_OK;
    answer(s);
    return;
  }
  Grpc__Testing__LoadBalancerStatsRequest *req = (Grpc__Testing__LoadBalancerStatsRequest *)
      io_pb_buf_unpack(s->request, &grpc__testing__load_balancer_stats_request__descriptor);
  if (req == NULL || req->num_rpcs <= 0 || req->timeout_sec < 0) {
    s->code = GRPC_STATUS_INVALID_ARGUMENT;
    s->details = grpc_slice_from_static_string("num_rpcs must be > 0 and timeout_sec >= 0");
    if (req) protobuf_c_message_free_unpacked(&req->base, NULL);
    answer(s);
    return;
  }
  int wait_sec = req->timeout_sec > MAX_WAIT_SEC ? MAX_WAIT_SEC : req->timeout_sec;
  s->watcher = io_client_stats_watch(svc->stats, req->num_rpcs);
  protobuf_c_message_free_unpacked(&req->base, NULL);
  if (s->watcher == NULL) {
    s->code = GRPC_STATUS_RESOURCE_EXHAUSTED;
    answer(s);
    return;
  }
  s->state = WAITING;
  s->give_up_ns = io_delay_queue_now_ns() + (int64_t)wait_sec * 1000000000LL;
  s->next_waiting = svc->waiting;
  svc->waiting = s;
}

/* Answers the waiting GetClientStats calls that are complete or timed out
 * (all of them when `all`). */
static void check_waiting(lb_stats_service *svc, int all) {
  int64_t now = io_delay_queue_now_ns();
  slot **p = &svc->waiting;
  while (*p) {
    slot *s = *p;
    if (all || now >= s->give_up_ns || io_client_stats_watch_done(svc->stats, s->watcher)) {
      *p = s->next_waiting;
      finish_watch(svc, s);
    } else {
      p = &s->next_waiting;
    }
  }
}

static void *serve(void *arg) {
  lb_stats_service *svc = arg;
  for (int m = 0; m < SVC_METHODS; m++) request(svc, (svc_method)m);
  for (;;) {
    check_waiting(svc, atomic_load(&svc->stopping));
    grpc_event ev = grpc_completion_queue_next(
        svc->cq, gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(20, GPR_TIMESPAN)),
        NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type != GRPC_OP_COMPLETE) continue;
    slot *s = ev.tag;
    if (s->state == REQUESTED) {
      if (!ev.success) {
        free_slot(s);
        continue;
      }
      request(svc, s->method);
      handle(svc, s);
    } else {
      free_slot(s);
    }
  }
  return NULL;
}

lb_stats_service *io_lb_stats_service_start(const char *host, int port, client_stats *stats,
                                         int *bound_port) {
  if (host == NULL || stats == NULL || port < 0 || port > 65535) return NULL;
  lb_stats_service *svc = calloc(1, sizeof(*svc));
  if (svc == NULL) return NULL;
  svc->stats = stats;
  svc->server = grpc_server_create(NULL, NULL);
  for (int m = 0; m < SVC_METHODS; m++) {
    svc->methods[m] = grpc_server_register_method(svc->server, kPaths[m], NULL,
                                                  GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
  }
  svc->cq = grpc_completion_queue_create_for_next(NULL);
  grpc_server_register_completion_queue(svc->server, svc->cq, NULL);
  char addr[300];
  snprintf(addr, sizeof(addr), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
  grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
  int bound = grpc_server_add_http2_port(svc->server, addr, creds);
  grpc_server_credentials_release(creds);
  if (bound <= 0) {
    fprintf(stderr, "stats service: cannot bind %s\n", addr);
    grpc_server_destroy(svc->server);
    grpc_completion_queue_shutdown(svc->cq);
    while (grpc_completion_queue_next(svc->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(svc->cq);
    free(svc);
    return NULL;
  }
  grpc_server_start(svc->server);
  if (pthread_create(&svc->thread, NULL, serve, svc) != 0) {
    fprintf(stderr, "stats service: cannot start its thread\n");
    grpc_completion_queue *done = grpc_completion_queue_create_for_pluck(NULL);
    grpc_server_shutdown_and_notify(svc->server, done, NULL);
    grpc_server_cancel_all_calls(svc->server);
    grpc_completion_queue_pluck(done, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_server_destroy(svc->server);
    grpc_completion_queue_shutdown(svc->cq);
    while (grpc_completion_queue_next(svc->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(svc->cq);
    grpc_completion_queue_shutdown(done);
    grpc_completion_queue_destroy(done);
    free(svc);
    return NULL;
  }
  if (bound_port) *bound_port = bound;
  return svc;
}

void io_lb_stats_service_stop(lb_stats_service *svc) {
  if (svc == NULL) return;
  atomic_store(&svc->stopping, true);
  /* Shutdown completes once pending calls are answered; the serving thread
   * answers waiting GetClientStats at once when stopping. The shutdown tag
   * goes to a separate queue so the serving loop only sees call tags. */
  grpc_completion_queue *done = grpc_completion_queue_create_for_pluck(NULL);
  grpc_server_shutdown_and_notify(svc->server, done, NULL);
  grpc_completion_queue_pluck(done, NULL,
                              gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                           gpr_time_from_seconds(5, GPR_TIMESPAN)),
                              NULL);
  grpc_server_cancel_all_calls(svc->server);
  grpc_server_destroy(svc->server);
  grpc_completion_queue_shutdown(svc->cq);
  pthread_join(svc->thread, NULL);
  grpc_completion_queue_destroy(svc->cq);
  grpc_completion_queue_shutdown(done);
  grpc_completion_queue_destroy(done);
  free(svc);
}
