/*
 * ap_status_handler: request decoding and response building with
 * protobuf-c. The registry snapshot already holds only the requested
 * channels and pages; the response messages point into its strings (no
 * copies), and it is freed after packing.
 */
#define _POSIX_C_SOURCE 200809L

#include "policy/status/ap_status_handler.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/status.h>

#include "aperture/v1/status.pb-c.h"
#include "grpc/health/v1/health.pb-c.h"
#include "policy/core/pick/ap_health.h"
#include "policy/registry/ap_pages.h"
#include "policy/registry/ap_registry.h"
#include "policy/status/ap_text_escape.h"

static void reply_set(ap_status_reply *reply, int code, const char *fmt, ...) {
  va_list ap;
  reply->code = code;
  va_start(ap, fmt);
  vsnprintf(reply->message, sizeof reply->message, fmt, ap);
  va_end(ap);
}

void ap_status_reply_clear(ap_status_reply *reply) {
  if (reply == NULL) return;
  ap_status_body_free(reply->body);
  memset(reply, 0, sizeof *reply);
}

void ap_status_body_free(void *body) { ap_pages_free(body); }

/* Packs `msg` into reply->body, or sets INTERNAL/RESOURCE_EXHAUSTED. */
static void reply_pack(ap_status_reply *reply, const ProtobufCMessage *msg) {
  size_t size = protobuf_c_message_get_packed_size(msg);
  reply->body = ap_pages_alloc(size > 0 ? size : 1);
  if (reply->body == NULL) {
    reply_set(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for a %zu-byte response", size);
    return;
  }
  reply->body_len = protobuf_c_message_pack(msg, reply->body);
  reply_set(reply, GRPC_STATUS_OK, "");
}

/* protobuf-c treats a NULL string as unset; keep "" explicit. */
static char *str_or_empty(char *s) { return s != NULL ? s : (char *)""; }

/* The registry's enums and the proto's agree value for value. */
#define AP_SAME_SOURCE(NAME)                                                      \
  _Static_assert((int)AP_COORDINATE_##NAME ==                                     \
                     (int)APERTURE__V1__COORDINATE_SOURCE__COORDINATE_SOURCE_##NAME, \
                 "ap_coordinate_source mirrors the proto's CoordinateSource")
AP_SAME_SOURCE(UNSPECIFIED);
AP_SAME_SOURCE(NONE);
AP_SAME_SOURCE(CONFIG);
AP_SAME_SOURCE(API);
AP_SAME_SOURCE(ENVIRONMENT);
AP_SAME_SOURCE(HOSTNAME);
AP_SAME_SOURCE(CHANNEL_ARG);
AP_SAME_SOURCE(PEER_TARGET);
#define AP_SAME_CONN(NAME)                                                         \
  _Static_assert((int)AP_CONN_##NAME + 1 ==                                        \
                     (int)APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_##NAME, \
                 "the proto's ConnectivityState is ap_connectivity + 1")
AP_SAME_CONN(IDLE);
AP_SAME_CONN(CONNECTING);
AP_SAME_CONN(READY);
AP_SAME_CONN(TRANSIENT_FAILURE);
AP_SAME_CONN(SHUTDOWN);
_Static_assert(APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_NO_SUBCHANNEL == 0,
               "no subchannel is the proto's zero");

static Aperture__V1__CoordinateSource coordinate_source(int source) {
  if (source < AP_COORDINATE_UNSPECIFIED || source > AP_COORDINATE_PEER_TARGET)
    return APERTURE__V1__COORDINATE_SOURCE__COORDINATE_SOURCE_UNSPECIFIED;
  return (Aperture__V1__CoordinateSource)source;
}

/* ap_connectivity (-1 = no subchannel) -> proto enum (value + 1). */
static Aperture__V1__ConnectivityState connectivity(int state) {
  if (state < AP_CONN_IDLE || state > AP_CONN_SHUTDOWN)
    return APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_NO_SUBCHANNEL;
  return (Aperture__V1__ConnectivityState)(state + 1);
}

static uint32_t clamp_u32(size_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* Per-response storage: one block per channel for its messages. */
typedef struct ring_storage {
  Aperture__V1__RingState ring;
  Aperture__V1__EndpointState *endpoints;
  Aperture__V1__EndpointState **endpoint_ptrs;
} ring_storage;

/* The ring's message with the page of endpoints the instance copied. */
static void fill_ring(const ap_ring_state *s, ring_storage *rs) {
  size_t first = s->first_endpoint, n = s->copied_endpoints;
  Aperture__V1__RingState *r = &rs->ring;
  aperture__v1__ring_state__init(r);
  r->target = str_or_empty(s->target);
  r->mode = str_or_empty(s->mode);
  r->peer_index = s->peer_index;
  r->peer_count = s->peer_count;
  r->coordinate_source = coordinate_source(s->coordinate_source);
  r->coordinate_source_name = (char *)ap_coordinate_source_name(s->coordinate_source);
  r->peer_target = str_or_empty(s->peer_target);
  r->peer_fingerprint = (char *)s->peer_fingerprint;
  r->coordinate_changes = s->coordinate_changes;
  r->pick_metric = (char *)s->pick_metric;
  r->offset = s->offset;
  r->width = s->width;
  r->min_aperture = s->min_aperture;
  r->logical_aperture = s->logical_aperture;
  r->physical_aperture = s->physical_aperture;
  r->widened = s->widened;
  r->draining = s->draining;
  r->fingerprint = (char *)s->fingerprint;
  /* The proto's fields carry the list's names. */
#define AP_RING_COUNTER(name, kind, metric, help, text) r->name = s->name;
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
  r->peer_keys = (char *)s->peer_keys;
  r->skew_reason = (char *)s->skew_reason;
  r->skew_own_rate = s->skew_own_rate;
  r->skew_others_rate = s->skew_others_rate;
  r->skew_ratio = s->skew_ratio;
  r->skew_multiplier = s->skew_multiplier;
  r->max_ejection_percent = s->max_ejection_percent;
  r->members_out = s->members_out;
  r->max_members_out = s->max_members_out;
  r->peer_failure_share = s->peer_failure_share;
  r->last_status = str_or_empty(s->last_status);
  r->n_config_warnings = s->config_warning_count;
  r->config_warnings = s->config_warnings;
  r->affinity_sessions = s->affinity_sessions;
  r->endpoint_count = clamp_u32(s->endpoint_count);
  r->start_index = clamp_u32(first);
  r->next_start_index = clamp_u32(first + n);
  r->truncated = first + n < s->endpoint_count;
  r->n_endpoints = n;
  r->endpoints = rs->endpoint_ptrs;
  for (size_t i = 0; i < n; i++) {
    const ap_endpoint_state *e = &s->endpoints[i];
    Aperture__V1__EndpointState *m = &rs->endpoints[i];
    aperture__v1__endpoint_state__init(m);
    m->address = str_or_empty(e->address);
    m->ring_index = e->ring_index;
    m->endpoint_weight = e->endpoint_weight;
    m->intersection = e->intersection;
    m->pick_weight = e->pick_weight;
    m->in_aperture = e->in_aperture != 0;
    m->widened = e->widened != 0;
    m->draining = e->draining != 0;
    m->connectivity = connectivity(e->connectivity);
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) m->name = e->name;
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
    m->health = (char *)ap_health_state_name((ap_health_state)e->health);
    m->ejections = e->ejections;
    m->ejection_reason = (char *)(e->ejection_reason != NULL ? e->ejection_reason : "none");
    m->stuck_after_ms = e->stuck_after_ms;
    m->utilization = e->utilization;
    m->latency_ewma_ms = e->latency_ewma_ms;
    m->weight_factor = e->weight_factor;
    m->reported_rps = e->reported_rps;
    m->own_rate = e->own_rate;
    rs->endpoint_ptrs[i] = m;
  }
}

/* proto3 strings must be UTF-8, and a strict client (Python's) refuses the
 * whole response over one bad string; a registry callback copies what a
 * resolver, an application or a peer gave. So every string is repaired
 * before it is sent: an owned one to a copy with each bad byte as U+FFFD,
 * a fixed-size one in place with each bad byte as '?' (its size stays).
 * Returns 0 when memory ran out. */
static int repair_owned(char **s) {
  if (*s == NULL || ap_utf8_valid(*s)) return 1;
  char *repaired = ap_utf8_repaired(*s);
  if (repaired == NULL) return 0;
  free(*s);
  *s = repaired;
  return 1;
}

static void repair_fixed(char *s, size_t cap) {
  s[cap - 1] = '\0';
  size_t left = strlen(s);
  unsigned char *p = (unsigned char *)s;
  while (left > 0) {
    size_t len = ap_utf8_sequence_length(p, left);
    if (len == 0) {
      *p = '?';
      len = 1;
    }
    p += len;
    left -= len;
  }
}

static int repair_strings(ap_ring_state *s) {
  int ok = repair_owned(&s->target) && repair_owned(&s->mode) &&
           repair_owned(&s->last_status) && repair_owned(&s->peer_target);
  repair_fixed(s->fingerprint, sizeof s->fingerprint);
  repair_fixed(s->peer_fingerprint, sizeof s->peer_fingerprint);
  repair_fixed(s->pick_metric, sizeof s->pick_metric);
  repair_fixed(s->peer_keys, sizeof s->peer_keys);
  for (size_t i = 0; ok && i < s->config_warning_count; i++)
    ok = repair_owned(&s->config_warnings[i]);
  for (size_t i = 0; ok && i < s->copied_endpoints; i++) {
    ap_endpoint_state *e = &s->endpoints[i];
    ok = repair_owned(&e->address);
    /* Meant to be a static name; one that is not UTF-8 is not one. */
    if (e->ejection_reason != NULL && !ap_utf8_valid(e->ejection_reason))
      e->ejection_reason = "unknown";
  }
  return ok;
}

/* Clears `reply` and checks the raw request's size and presence; on a bad
 * request fills the error status and returns 0. */
static int start_reply(const uint8_t *req, size_t len, ap_status_reply *reply) {
  if (reply == NULL) return 0;
  memset(reply, 0, sizeof *reply);
  if (len > AP_STATUS_MAX_REQUEST_BYTES) {
    reply_set(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "request of %zu bytes exceeds the %d-byte limit",
              len, AP_STATUS_MAX_REQUEST_BYTES);
    return 0;
  }
  if (req == NULL && len > 0) {
    reply_set(reply, GRPC_STATUS_INVALID_ARGUMENT, "request bytes missing");
    return 0;
  }
  return 1;
}

/* One GetRingState answer in the making (ap_status_handler.h). */
struct ap_status_work {
  ap_snapshot_query query;
  char *target_filter; /* owned: the request is freed once decoded */
  size_t estimate;
  ap_ring_state *states; /* the copy, after ap_status_work_copy() */
  size_t count;
  size_t copy_bytes; /* what the copy allocated */
};

/* What building an answer takes per endpoint at most, for the estimate made
 * before the copy: its copy (the state and its address), its message and
 * its pointer, its packed bytes; an address of up to 48 bytes. */
enum { kEstimatedAddress = 48, kAlloc = 16 };
#define AP_ESTIMATE_PER_ENDPOINT                                                   \
  (sizeof(ap_endpoint_state) + (kEstimatedAddress + kAlloc) +                       \
   sizeof(Aperture__V1__EndpointState) + sizeof(Aperture__V1__EndpointState *) + \
   (24 + kEstimatedAddress))
#define AP_ESTIMATE_PER_RING \
  (sizeof(ap_ring_state) + sizeof(ring_storage) + sizeof(Aperture__V1__RingState *) + 1024)

void ap_status_work_free(ap_status_work *work) {
  if (work == NULL) return;
  ap_ring_states_free(work->states, work->count);
  free(work->target_filter);
  free(work);
}

ap_status_work *ap_status_work_start(const uint8_t *req, size_t len, ap_status_reply *reply) {
  if (!start_reply(req, len, reply)) return NULL;
  Aperture__V1__GetRingStateRequest *request =
      aperture__v1__get_ring_state_request__unpack(NULL, len, req);
  if (request == NULL) {
    reply_set(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed GetRingStateRequest (%zu bytes)", len);
    return NULL;
  }
  ap_status_work *work = calloc(1, sizeof *work);
  char *filter = strdup(request->target_filter != NULL ? request->target_filter : "");
  if (work == NULL || filter == NULL) {
    free(work);
    free(filter);
    aperture__v1__get_ring_state_request__free_unpacked(request, NULL);
    reply_set(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for the request");
    return NULL;
  }
  work->target_filter = filter;
  work->query.target_filter = filter;
  work->query.start_index = request->start_index;
  size_t page = request->max_endpoints == 0 ? AP_STATUS_DEFAULT_MAX_ENDPOINTS : request->max_endpoints;
  if (page > AP_STATUS_HARD_MAX_ENDPOINTS) page = AP_STATUS_HARD_MAX_ENDPOINTS;
  if (request->omit_endpoints) page = 0;
  work->query.max_endpoints = page;
  aperture__v1__get_ring_state_request__free_unpacked(request, NULL);
  /* Every instance may match: a page of each, within the response's cap. */
  const size_t rings = ap_registry_count();
  size_t endpoints = page * rings;
  if (rings > 0 && endpoints / rings != page) endpoints = SIZE_MAX;
  if (endpoints > AP_STATUS_RESPONSE_ENDPOINT_BUDGET) endpoints = AP_STATUS_RESPONSE_ENDPOINT_BUDGET;
  work->estimate = 4096 + rings * AP_ESTIMATE_PER_RING + endpoints * AP_ESTIMATE_PER_ENDPOINT;
  return work;
}

size_t ap_status_work_estimate(const ap_status_work *work) {
  return work != NULL ? work->estimate : 0;
}

/* Bytes a state's copy holds (the allocator's overhead included). */
static size_t copy_bytes(const ap_ring_state *s) {
  size_t n = sizeof *s;
  const char *owned[] = {s->target, s->mode, s->last_status, s->peer_target};
  for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
    if (owned[i] != NULL) n += strlen(owned[i]) + 1 + kAlloc;
  n += s->copied_endpoints * sizeof(ap_endpoint_state) + kAlloc;
  for (size_t i = 0; i < s->copied_endpoints; i++)
    if (s->endpoints[i].address != NULL) n += strlen(s->endpoints[i].address) + 1 + kAlloc;
  return n;
}

int ap_status_work_copy(ap_status_work *work, ap_status_reply *reply) {
  if (work == NULL || reply == NULL) return 0;
  /* Each instance filters and copies only its page (see ap_registry.h). */
  ap_error err;
  int rc = ap_registry_snapshot(&work->query, AP_STATUS_RESPONSE_ENDPOINT_BUDGET, &work->states,
                                &work->count, &err);
  if (rc != AP_OK) {
    reply_set(reply, rc == AP_ENOMEM ? GRPC_STATUS_RESOURCE_EXHAUSTED : GRPC_STATUS_INTERNAL,
              "registry snapshot failed: %s", err.message);
    return 0;
  }
  work->copy_bytes = 0;
  for (size_t i = 0; i < work->count; i++) work->copy_bytes += copy_bytes(&work->states[i]);
  return 1;
}

/* The response's messages over the copy, and what the build needs of
 * them: its two unshared steps run on these. */
typedef struct answer_build {
  ap_status_work *work;
  ring_storage *rings;
  Aperture__V1__RingState **ring_ptrs;
  Aperture__V1__GetRingStateResponse response;
  size_t packed; /* the answer's size, measured */
  uint8_t *body; /* where it is packed */
} answer_build;

/* Unshared step 1: fills the messages from the copy and measures them. */
static void measure_answer(void *arg) {
  answer_build *b = arg;
  for (size_t i = 0; i < b->work->count; i++) {
    fill_ring(&b->work->states[i], &b->rings[i]);
    b->ring_ptrs[i] = &b->rings[i].ring;
  }
  b->response.n_rings = b->work->count;
  b->response.rings = b->ring_ptrs;
  b->packed = protobuf_c_message_get_packed_size(&b->response.base);
}

/* Unshared step 2: packs them into the body. */
static void pack_answer(void *arg) {
  answer_build *b = arg;
  b->packed = protobuf_c_message_pack(&b->response.base, b->body);
}

static void run_here(void *ctx, void (*fn)(void *arg), void *arg) {
  (void)ctx;
  fn(arg);
}

/* Every allocation the build makes, done before its unshared steps: the
 * strings' repairs and the messages' storage. Returns 0 when memory ran
 * out; *bytes gets the storage's size. */
static int allocate_messages(answer_build *b, size_t *bytes) {
  const size_t count = b->work->count;
  *bytes = 0;
  for (size_t i = 0; i < count; i++)
    if (!repair_strings(&b->work->states[i])) return 0;
  if (count == 0) return 1;
  b->rings = ap_pages_alloc(count * sizeof *b->rings);
  b->ring_ptrs = ap_pages_alloc(count * sizeof *b->ring_ptrs);
  if (b->rings == NULL || b->ring_ptrs == NULL) return 0;
  *bytes = count * (sizeof *b->rings + sizeof *b->ring_ptrs) + 2 * kAlloc;
  for (size_t i = 0; i < count; i++) {
    size_t n = b->work->states[i].copied_endpoints;
    if (n == 0) continue;
    b->rings[i].endpoints = ap_pages_alloc(n * sizeof *b->rings[i].endpoints);
    b->rings[i].endpoint_ptrs = ap_pages_alloc(n * sizeof *b->rings[i].endpoint_ptrs);
    if (b->rings[i].endpoints == NULL || b->rings[i].endpoint_ptrs == NULL) return 0;
    *bytes += n * (sizeof *b->rings[i].endpoints + sizeof *b->rings[i].endpoint_ptrs) + 2 * kAlloc;
  }
  return 1;
}

void ap_status_work_answer(ap_status_work *work, const ap_status_answer_hooks *hooks,
                           ap_status_reply *reply, size_t *need) {
  if (need != NULL) *need = 0;
  if (reply == NULL) {
    ap_status_work_free(work);
    return;
  }
  if (work == NULL) {
    reply_set(reply, GRPC_STATUS_INTERNAL, "no work to answer");
    return;
  }
  ap_status_run_fn run = hooks != NULL && hooks->run != NULL ? hooks->run : run_here;
  void *ctx = hooks != NULL ? hooks->ctx : NULL;
  answer_build b;
  memset(&b, 0, sizeof b);
  b.work = work;
  aperture__v1__get_ring_state_response__init(&b.response);
  size_t messages = 0;
  if (!allocate_messages(&b, &messages)) {
    reply_set(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory building the response");
  } else {
    run(ctx, measure_answer, &b);
    /* What the answer takes at its peak: the copy, the messages, the bytes. */
    const size_t total = work->copy_bytes + messages + b.packed + kAlloc;
    if (need != NULL) *need = total;
    if (hooks == NULL || hooks->fits == NULL || hooks->fits(ctx, total, reply)) {
      b.body = ap_pages_alloc(b.packed > 0 ? b.packed : 1);
      if (b.body == NULL) {
        reply_set(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for a %zu-byte response",
                  b.packed);
      } else {
        run(ctx, pack_answer, &b);
        reply->body = b.body;
        reply->body_len = b.packed;
        reply_set(reply, GRPC_STATUS_OK, "");
      }
    }
  }
  for (size_t i = 0; b.rings != NULL && i < work->count; i++) {
    ap_pages_free(b.rings[i].endpoints);
    ap_pages_free(b.rings[i].endpoint_ptrs);
  }
  ap_pages_free(b.rings);
  ap_pages_free(b.ring_ptrs);
  ap_status_work_free(work);
}

void ap_status_handle_get_ring_state(const uint8_t *req, size_t len,
                                     ap_status_reply *reply) {
  ap_status_work *work = ap_status_work_start(req, len, reply);
  if (work == NULL) return;
  if (!ap_status_work_copy(work, reply)) {
    ap_status_work_free(work);
    return;
  }
  ap_status_work_answer(work, NULL, reply, NULL);
}

void ap_status_handle_health_check(const uint8_t *req, size_t len,
                                   ap_status_reply *reply) {
  if (!start_reply(req, len, reply)) return;
  Grpc__Health__V1__HealthCheckRequest *request =
      grpc__health__v1__health_check_request__unpack(NULL, len, req);
  if (request == NULL) {
    reply_set(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed HealthCheckRequest (%zu bytes)", len);
    return;
  }
  const char *service = request->service != NULL ? request->service : "";
  if (service[0] == '\0' || strcmp(service, AP_STATUS_SERVICE_NAME) == 0) {
    Grpc__Health__V1__HealthCheckResponse response = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    response.status = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
    reply_pack(reply, &response.base);
  } else {
    reply_set(reply, GRPC_STATUS_NOT_FOUND, "unknown service \"%.200s\"", service);
  }
  grpc__health__v1__health_check_request__free_unpacked(request, NULL);
}
