/* The ADS server: one thread drains a "next" completion queue; every tag
 * is an xtag whose handler runs under the server's mutex. Setters from
 * other threads take the same mutex and start sends directly (C-core
 * allows batches from any thread; completions always go to the queue).
 *
 * Per stream: one receive is always posted; at most one response is in
 * flight, the types still to send wait in `pending`. A stream is freed
 * when its last batch has completed (the close batch completes when the
 * call ends, so that is after the call is over). */
#define _GNU_SOURCE
#include "interop/xds/xds_server.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "interop/xds/xds_json_struct.h"
#include "interop/xds/xds_resources.h"
#include "src/proto/grpc/testing/xds/v3/discovery.pb-c.h"

#define ADS_METHOD "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
#define MAX_NAMES 8
#define NAME_LEN 128

static const char *const kTypeUrls[XDS_TYPE_COUNT] = {XDS_TYPE_LISTENER, XDS_TYPE_ROUTE,
                                                      XDS_TYPE_CLUSTER, XDS_TYPE_ENDPOINTS};

typedef struct xtag {
  void (*run)(struct xtag *tag, int ok);
} xtag;

typedef struct stream {
  xds_server *s;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array request_md;
  xtag new_tag, recv_tag, send_tag, close_tag, status_tag;
  grpc_byte_buffer *recv_buf;
  grpc_byte_buffer *send_buf;
  grpc_slice status_details;
  int cancelled;
  int refs;        /* batches in flight */
  int active;      /* in the server's list */
  int sending;
  int recv_done;   /* half-closed or failed: no more requests */
  int status_sent;
  unsigned pending; /* bit per type: a response to send */
  int subscribed[XDS_TYPE_COUNT];
  char names[XDS_TYPE_COUNT][MAX_NAMES][NAME_LEN];
  size_t n_names[XDS_TYPE_COUNT];
  uint64_t sent_version[XDS_TYPE_COUNT];
  char nonce[XDS_TYPE_COUNT][24];
  struct stream *next;
} stream;

struct xds_server {
  grpc_server *server;
  grpc_completion_queue *cq;
  void *method;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int port;
  int shutting_down;
  int request_posted; /* a request for the next call is outstanding */
  int shutdown_done;
  xtag shutdown_tag;
  stream *streams;
  uint64_t nonce_counter;
  /* the served state */
  char listener[NAME_LEN], route[NAME_LEN + 8], cluster[NAME_LEN], policy[NAME_LEN];
  char *policy_json;
  char **endpoints;
  uint32_t *weights; /* n_endpoints EDS weights (0: unset), or NULL */
  size_t n_endpoints;
  xds_server_counts counts;
  uint64_t nacked[XDS_TYPE_COUNT];
};


static void free_endpoints(char **e, size_t n) {
  if (e == NULL) return;
  for (size_t i = 0; i < n; i++) free(e[i]);
  free(e);
}

/* A copy of n weights; NULL for none (and on failure, *failed set). */
static uint32_t *copy_weights(const uint32_t *w, size_t n, int *failed) {
  *failed = 0;
  if (w == NULL || n == 0) return NULL;
  uint32_t *out = malloc(n * sizeof *out);
  if (out == NULL) {
    *failed = 1;
    return NULL;
  }
  memcpy(out, w, n * sizeof *out);
  return out;
}

static char **copy_endpoints(const char *const *e, size_t n) {
  char **out = calloc(n > 0 ? n : 1, sizeof *out);
  if (out == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    out[i] = strdup(e[i]);
    if (out[i] == NULL) {
      free_endpoints(out, i);
      return NULL;
    }
  }
  return out;
}

/* ---- resources ---- */

static int has_name(const stream *st, xds_type t, const char *name) {
  for (size_t i = 0; i < st->n_names[t]; i++)
    if (strcmp(st->names[t][i], name) == 0) return 1;
  return 0;
}

/* The serialized resource of type t that this stream asked for, if any:
 * returns 1 with bytes, 0 when it asked for none of ours, -1 on error. */
static int build_resource(xds_server *s, const stream *st, xds_type t, xds_bytes *out) {
  char err[256];
  int rc = 0;
  switch (t) {
    case XDS_LDS:
      if (!has_name(st, t, s->listener)) return 0;
      rc = xds_listener_bytes(s->listener, s->route, out, err, sizeof err);
      break;
    case XDS_RDS:
      if (!has_name(st, t, s->route)) return 0;
      rc = xds_route_bytes(s->route, s->cluster, out, err, sizeof err);
      break;
    case XDS_CDS:
      if (!has_name(st, t, s->cluster)) return 0;
      rc = xds_cluster_bytes(s->cluster, s->policy, s->policy_json, out, err, sizeof err);
      break;
    case XDS_EDS:
      if (!has_name(st, t, s->cluster)) return 0;
      rc = xds_endpoints_bytes(s->cluster, (const char *const *)s->endpoints, s->weights,
                               s->n_endpoints, out, err, sizeof err);
      break;
    default:
      return -1;
  }
  if (rc != 0) {
    fprintf(stderr, "xds_server: cannot build %s: %s\n", kTypeUrls[t], err);
    return -1;
  }
  return 1;
}

/* ---- streams (all under s->mu) ---- */

static void stream_unref(stream *st);

static void stream_free(stream *st) {
  if (st->call != NULL) grpc_call_unref(st->call);
  grpc_metadata_array_destroy(&st->request_md);
  if (st->recv_buf != NULL) grpc_byte_buffer_destroy(st->recv_buf);
  if (st->send_buf != NULL) grpc_byte_buffer_destroy(st->send_buf);
  grpc_slice_unref(st->status_details);
  free(st);
}

static void stream_unref(stream *st) {
  if (--st->refs > 0) return;
  xds_server *s = st->s;
  if (st->active) {
    for (stream **p = &s->streams; *p != NULL; p = &(*p)->next) {
      if (*p == st) {
        *p = st->next;
        break;
      }
    }
  }
  stream_free(st);
  pthread_cond_broadcast(&s->cv);
}

static int start_batch(stream *st, grpc_op *ops, size_t n, xtag *tag) {
  st->refs++;
  if (grpc_call_start_batch(st->call, ops, n, tag, NULL) != GRPC_CALL_OK) {
    st->refs--;
    return -1;
  }
  return 0;
}

static void maybe_send_status(stream *st) {
  if (!st->recv_done || st->sending || st->status_sent) return;
  st->status_sent = 1;
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  op.data.send_status_from_server.status = GRPC_STATUS_OK;
  op.data.send_status_from_server.status_details = &st->status_details;
  start_batch(st, &op, 1, &st->status_tag);
}

/* Starts the next pending response, if no response is in flight. */
static void maybe_send(stream *st) {
  xds_server *s = st->s;
  while (!st->sending && !st->recv_done && st->pending != 0) {
    xds_type t = XDS_LDS;
    while (!(st->pending & (1u << t))) t++;
    st->pending &= ~(1u << t);
    xds_bytes resource = {0};
    int have = build_resource(s, st, t, &resource);
    if (have < 0) continue;
    char version[24];
    snprintf(version, sizeof version, "%llu", (unsigned long long)s->counts.version[t]);
    snprintf(st->nonce[t], sizeof st->nonce[t], "%llu", (unsigned long long)++s->nonce_counter);
    xds_bytes body = {0};
    char err[256];
    int rc = xds_response_bytes(kTypeUrls[t], version, st->nonce[t], &resource, have ? 1 : 0, &body,
                                err, sizeof err);
    xds_bytes_clear(&resource);
    if (rc != 0) {
      fprintf(stderr, "xds_server: cannot build a response: %s\n", err);
      continue;
    }
    grpc_slice slice = grpc_slice_from_copied_buffer((const char *)body.data, body.len);
    xds_bytes_clear(&body);
    st->send_buf = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    st->sent_version[t] = s->counts.version[t];
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = st->send_buf;
    st->sending = 1;
    if (start_batch(st, &op, 1, &st->send_tag) != 0) {
      st->sending = 0;
      grpc_byte_buffer_destroy(st->send_buf);
      st->send_buf = NULL;
      st->recv_done = 1;
    }
  }
  maybe_send_status(st);
}

static int post_recv(stream *st) {
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_MESSAGE;
  op.data.recv_message.recv_message = &st->recv_buf;
  return start_batch(st, &op, 1, &st->recv_tag);
}

static int type_of(const char *url) {
  for (int t = 0; t < XDS_TYPE_COUNT; t++)
    if (strcmp(url, kTypeUrls[t]) == 0) return t;
  return -1;
}

static void on_request(stream *st, const Envoy__Service__Discovery__V3__DiscoveryRequest *r) {
  xds_server *s = st->s;
  int t = type_of(r->type_url != NULL ? r->type_url : "");
  if (t < 0) return; /* a type this server does not serve */
  const char *nonce = r->response_nonce != NULL ? r->response_nonce : "";
  if (nonce[0] != '\0' && strcmp(nonce, st->nonce[t]) != 0) return; /* stale */
  int changed = !st->subscribed[t] || st->n_names[t] != r->n_resource_names;
  for (size_t i = 0; !changed && i < r->n_resource_names; i++)
    changed = !has_name(st, t, r->resource_names[i]);
  st->subscribed[t] = 1;
  st->n_names[t] = 0;
  for (size_t i = 0; i < r->n_resource_names && i < MAX_NAMES; i++) {
    snprintf(st->names[t][i], NAME_LEN, "%s", r->resource_names[i]);
    st->n_names[t]++;
  }
  if (nonce[0] != '\0') {
    if (r->error_detail != NULL) {
      s->counts.nacks[t]++;
      s->nacked[t] = st->sent_version[t];
      snprintf(s->counts.last_nack, sizeof s->counts.last_nack, "%s",
               r->error_detail->message != NULL ? r->error_detail->message : "");
      fprintf(stderr, "xds_server: NACK of %s version %llu: %s\n", kTypeUrls[t],
              (unsigned long long)st->sent_version[t], s->counts.last_nack);
    } else if (st->sent_version[t] > s->counts.acked[t]) {
      s->counts.acked[t] = st->sent_version[t];
    }
    pthread_cond_broadcast(&s->cv);
  }
  if (changed || nonce[0] == '\0' || st->sent_version[t] != s->counts.version[t])
    st->pending |= 1u << t;
}

static void on_recv(xtag *tag, int ok) {
  stream *st = (stream *)((char *)tag - offsetof(stream, recv_tag));
  xds_server *s = st->s;
  pthread_mutex_lock(&s->mu);
  if (ok && st->recv_buf != NULL) {
    grpc_byte_buffer_reader reader;
    if (grpc_byte_buffer_reader_init(&reader, st->recv_buf)) {
      grpc_slice bytes = grpc_byte_buffer_reader_readall(&reader);
      grpc_byte_buffer_reader_destroy(&reader);
      Envoy__Service__Discovery__V3__DiscoveryRequest *r =
          envoy__service__discovery__v3__discovery_request__unpack(
              NULL, GRPC_SLICE_LENGTH(bytes), GRPC_SLICE_START_PTR(bytes));
      grpc_slice_unref(bytes);
      if (r != NULL) {
        on_request(st, r);
        envoy__service__discovery__v3__discovery_request__free_unpacked(r, NULL);
      }
    }
    grpc_byte_buffer_destroy(st->recv_buf);
    st->recv_buf = NULL;
    if (s->shutting_down || post_recv(st) != 0) st->recv_done = 1;
  } else {
    st->recv_done = 1;
  }
  maybe_send(st);
  stream_unref(st);
  pthread_mutex_unlock(&s->mu);
}

static void on_send(xtag *tag, int ok) {
  stream *st = (stream *)((char *)tag - offsetof(stream, send_tag));
  xds_server *s = st->s;
  pthread_mutex_lock(&s->mu);
  st->sending = 0;
  grpc_byte_buffer_destroy(st->send_buf);
  st->send_buf = NULL;
  if (!ok) st->recv_done = 1;
  maybe_send(st);
  stream_unref(st);
  pthread_mutex_unlock(&s->mu);
}

static void on_done(xtag *tag, int ok) { /* close and status batches */
  (void)ok;
  stream *st = (stream *)((char *)tag - offsetof(stream, close_tag));
  pthread_mutex_lock(&st->s->mu);
  xds_server *s = st->s;
  stream_unref(st);
  pthread_mutex_unlock(&s->mu);
}

static void on_status(xtag *tag, int ok) {
  (void)ok;
  stream *st = (stream *)((char *)tag - offsetof(stream, status_tag));
  xds_server *s = st->s;
  pthread_mutex_lock(&s->mu);
  stream_unref(st);
  pthread_mutex_unlock(&s->mu);
}

static void on_new_call(xtag *tag, int ok);

/* Posts a request for the next ADS call (under s->mu). */
static void request_next(xds_server *s) {
  if (s->shutting_down) return;
  stream *st = calloc(1, sizeof *st);
  if (st == NULL) return;
  st->s = s;
  st->new_tag.run = on_new_call;
  st->recv_tag.run = on_recv;
  st->send_tag.run = on_send;
  st->close_tag.run = on_done;
  st->status_tag.run = on_status;
  st->status_details = grpc_empty_slice();
  grpc_metadata_array_init(&st->request_md);
  if (grpc_server_request_registered_call(s->server, s->method, &st->call, &st->deadline,
                                          &st->request_md, NULL, s->cq, s->cq,
                                          &st->new_tag) != GRPC_CALL_OK) {
    stream_free(st);
    return;
  }
  s->request_posted = 1;
}

static void on_new_call(xtag *tag, int ok) {
  stream *st = (stream *)((char *)tag - offsetof(stream, new_tag));
  xds_server *s = st->s;
  pthread_mutex_lock(&s->mu);
  s->request_posted = 0;
  if (!ok || s->shutting_down) {
    stream_free(st);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return;
  }
  request_next(s);
  s->counts.streams++;
  st->active = 1;
  st->next = s->streams;
  s->streams = st;
  st->refs = 1; /* held until the batches below are started */
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[1].data.recv_close_on_server.cancelled = &st->cancelled;
  if (start_batch(st, ops, 2, &st->close_tag) != 0 || post_recv(st) != 0) st->recv_done = 1;
  stream_unref(st);
  pthread_mutex_unlock(&s->mu);
}

static void on_shutdown(xtag *tag, int ok) {
  (void)ok;
  xds_server *s = (xds_server *)((char *)tag - offsetof(xds_server, shutdown_tag));
  pthread_mutex_lock(&s->mu);
  s->shutdown_done = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void *serve_loop(void *arg) {
  xds_server *s = arg;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type != GRPC_OP_COMPLETE) continue;
    xtag *tag = ev.tag;
    tag->run(tag, ev.success);
  }
  return NULL;
}

/* Marks type t changed and queues it on every stream that subscribed. */
static void push(xds_server *s, xds_type t) {
  s->counts.version[t]++;
  for (stream *st = s->streams; st != NULL; st = st->next) {
    if (!st->subscribed[t]) continue;
    st->pending |= 1u << t;
    maybe_send(st);
  }
}

/* ---- public API ---- */

static int check_endpoints(const char *const *e, size_t n, char *err, size_t err_len) {
  if (n > 0 && e == NULL) return xds_fail(err, err_len, "endpoints: NULL with n=%zu", n);
  xds_bytes b = {0};
  int rc = xds_endpoints_bytes("check", e, NULL, n, &b, err, err_len);
  xds_bytes_clear(&b);
  return rc;
}

static int check_policy(const char *policy_json, char *err, size_t err_len) {
  Google__Protobuf__Struct *st = xds_json_to_struct(policy_json, err, err_len);
  if (st == NULL) return -1;
  protobuf_c_message_free_unpacked(&st->base, NULL);
  return 0;
}

static int copy_name(char *dst, const char *what, const char *src, char *err, size_t err_len) {
  if (src == NULL || src[0] == '\0') return xds_fail(err, err_len, "%s must not be empty", what);
  if (strlen(src) >= NAME_LEN - 8) return xds_fail(err, err_len, "%s is too long", what);
  strcpy(dst, src);
  return 0;
}

/* The last step of every stop path, once the server is destroyed and its
 * queue drained: frees the queue, the state, the server itself, and drops
 * the gRPC reference xds_server_start took. */
static void release(xds_server *s) {
  grpc_completion_queue_destroy(s->cq);
  free(s->policy_json);
  free_endpoints(s->endpoints, s->n_endpoints);
  free(s->weights);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
  grpc_shutdown();
}

int xds_server_start(const xds_server_options *o, xds_server **out, char *err, size_t err_len) {
  if (out == NULL) return xds_fail(err, err_len, "xds_server_start: out is NULL");
  *out = NULL;
  if (o == NULL) return xds_fail(err, err_len, "xds_server_start: options is NULL");
  xds_server *s = calloc(1, sizeof *s);
  if (s == NULL) return xds_fail(err, err_len, "xds_server_start: out of memory");
  if (copy_name(s->listener, "listener_name", o->listener_name, err, err_len) != 0 ||
      copy_name(s->cluster, "cluster_name", o->cluster_name, err, err_len) != 0 ||
      copy_name(s->policy, "policy_name", o->policy_name, err, err_len) != 0 ||
      check_policy(o->policy_json, err, err_len) != 0 ||
      check_endpoints(o->endpoints, o->n_endpoints, err, err_len) != 0) {
    free(s);
    return -1;
  }
  snprintf(s->route, sizeof s->route, "%s-route", s->cluster);
  s->policy_json = strdup(o->policy_json);
  s->endpoints = copy_endpoints(o->endpoints, o->n_endpoints);
  s->n_endpoints = o->n_endpoints;
  int weights_failed = 0;
  s->weights = copy_weights(o->endpoint_weights, o->n_endpoints, &weights_failed);
  if (s->policy_json == NULL || s->endpoints == NULL || weights_failed) {
    free(s->policy_json);
    free_endpoints(s->endpoints, s->n_endpoints);
    free(s->weights);
    free(s);
    return xds_fail(err, err_len, "xds_server_start: out of memory");
  }
  for (int t = 0; t < XDS_TYPE_COUNT; t++) s->counts.version[t] = 1;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->shutdown_tag.run = on_shutdown;
  grpc_init();
  s->server = grpc_server_create(NULL, NULL);
  s->cq = grpc_completion_queue_create_for_next(NULL);
  grpc_server_register_completion_queue(s->server, s->cq, NULL);
  s->method = grpc_server_register_method(s->server, ADS_METHOD, NULL, GRPC_SRM_PAYLOAD_NONE, 0);
  grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
  const char *address = o->address != NULL ? o->address : "127.0.0.1:0";
  s->port = grpc_server_add_http2_port(s->server, address, creds);
  grpc_server_credentials_release(creds);
  if (s->port <= 0 || s->method == NULL) {
    xds_fail(err, err_len, "xds_server_start: cannot listen on \"%.200s\"", address);
    s->shutting_down = 1;
    grpc_server_destroy(s->server);
    grpc_completion_queue_shutdown(s->cq);
    while (grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    release(s);
    return -1;
  }
  grpc_server_start(s->server);
  pthread_mutex_lock(&s->mu);
  request_next(s);
  pthread_mutex_unlock(&s->mu);
  if (pthread_create(&s->thread, NULL, serve_loop, s) != 0) {
    /* the stop path needs the thread: drain on this one instead */
    xds_fail(err, err_len, "xds_server_start: cannot create its thread");
    s->shutting_down = 1;
    grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
    grpc_server_cancel_all_calls(s->server);
    grpc_completion_queue_shutdown(s->cq);
    serve_loop(s);
    grpc_server_destroy(s->server);
    release(s);
    return -1;
  }
  *out = s;
  return 0;
}

int xds_server_port(const xds_server *s) { return s != NULL ? s->port : -1; }

int xds_server_set_endpoints(xds_server *s, const char *const *endpoints, size_t n, char *err,
                             size_t err_len) {
  return xds_server_set_weighted_endpoints(s, endpoints, NULL, n, err, err_len);
}

int xds_server_set_weighted_endpoints(xds_server *s, const char *const *endpoints,
                                      const uint32_t *weights, size_t n, char *err,
                                      size_t err_len) {
  if (s == NULL) return xds_fail(err, err_len, "xds_server_set_endpoints: server is NULL");
  if (check_endpoints(endpoints, n, err, err_len) != 0) return -1;
  char **copy = copy_endpoints(endpoints, n);
  int weights_failed = 0;
  uint32_t *weights_copy = copy_weights(weights, n, &weights_failed);
  if (copy == NULL || weights_failed) {
    free_endpoints(copy, n);
    return xds_fail(err, err_len, "xds_server_set_endpoints: out of memory");
  }
  pthread_mutex_lock(&s->mu);
  free_endpoints(s->endpoints, s->n_endpoints);
  free(s->weights);
  s->endpoints = copy;
  s->weights = weights_copy;
  s->n_endpoints = n;
  push(s, XDS_EDS);
  pthread_mutex_unlock(&s->mu);
  return 0;
}

int xds_server_set_policy_json(xds_server *s, const char *policy_json, char *err,
                               size_t err_len) {
  if (s == NULL) return xds_fail(err, err_len, "xds_server_set_policy_json: server is NULL");
  if (check_policy(policy_json, err, err_len) != 0) return -1;
  char *copy = strdup(policy_json);
  if (copy == NULL) return xds_fail(err, err_len, "xds_server_set_policy_json: out of memory");
  pthread_mutex_lock(&s->mu);
  free(s->policy_json);
  s->policy_json = copy;
  push(s, XDS_CDS);
  pthread_mutex_unlock(&s->mu);
  return 0;
}

void xds_server_get_counts(xds_server *s, xds_server_counts *out) {
  if (s == NULL || out == NULL) return;
  pthread_mutex_lock(&s->mu);
  *out = s->counts;
  pthread_mutex_unlock(&s->mu);
}

int xds_server_wait_acked(xds_server *s, xds_type type, int timeout_ms) {
  if (s == NULL || (int)type < 0 || type >= XDS_TYPE_COUNT || timeout_ms < 0) return -1;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  int rc = 0;
  pthread_mutex_lock(&s->mu);
  while (s->counts.acked[type] < s->counts.version[type]) {
    if (s->nacked[type] == s->counts.version[type] ||
        pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT) {
      rc = s->counts.acked[type] >= s->counts.version[type] ? 0 : -1;
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

void xds_server_stop(xds_server *s) {
  if (s == NULL) return;
  pthread_mutex_lock(&s->mu);
  s->shutting_down = 1;
  grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
  grpc_server_cancel_all_calls(s->server);
  while (!s->shutdown_done || s->streams != NULL || s->request_posted)
    pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  grpc_server_destroy(s->server);
  grpc_completion_queue_shutdown(s->cq);
  pthread_join(s->thread, NULL);
  release(s);
}
