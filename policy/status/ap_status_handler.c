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
#include "policy/registry/ap_registry.h"

static void reply_set(ap_status_reply *reply, int code, const char *fmt, ...) {
  va_list ap;
  reply->code = code;
  va_start(ap, fmt);
  vsnprintf(reply->message, sizeof reply->message, fmt, ap);
  va_end(ap);
}

void ap_status_reply_clear(ap_status_reply *reply) {
  if (reply == NULL) return;
  free(reply->body);
  memset(reply, 0, sizeof *reply);
}

/* Packs `msg` into reply->body, or sets INTERNAL/RESOURCE_EXHAUSTED. */
static void reply_pack(ap_status_reply *reply, const ProtobufCMessage *msg) {
  size_t size = protobuf_c_message_get_packed_size(msg);
  reply->body = malloc(size > 0 ? size : 1);
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
  r->max_ejection_percent = s->max_ejection_percent;
  r->members_out = s->members_out;
  r->max_members_out = s->max_members_out;
  r->peer_failure_share = s->peer_failure_share;
  r->last_status = str_or_empty(s->last_status);
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
    rs->endpoint_ptrs[i] = m;
  }
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

void ap_status_handle_get_ring_state(const uint8_t *req, size_t len,
                                     ap_status_reply *reply) {
  if (!start_reply(req, len, reply)) return;
  Aperture__V1__GetRingStateRequest *request =
      aperture__v1__get_ring_state_request__unpack(NULL, len, req);
  if (request == NULL) {
    reply_set(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed GetRingStateRequest (%zu bytes)", len);
    return;
  }
  ap_snapshot_query query;
  query.target_filter = request->target_filter;
  query.start_index = request->start_index;
  query.max_endpoints = request->max_endpoints == 0 ? AP_STATUS_DEFAULT_MAX_ENDPOINTS : request->max_endpoints;
  if (query.max_endpoints > AP_STATUS_HARD_MAX_ENDPOINTS) query.max_endpoints = AP_STATUS_HARD_MAX_ENDPOINTS;
  if (request->omit_endpoints) query.max_endpoints = 0;

  /* Each instance filters and copies only its page (see ap_registry.h). */
  ap_ring_state *states = NULL;
  size_t count = 0;
  ap_error err;
  int rc = ap_registry_snapshot(&query, AP_STATUS_RESPONSE_ENDPOINT_BUDGET, &states, &count, &err);
  aperture__v1__get_ring_state_request__free_unpacked(request, NULL);
  if (rc != AP_OK) {
    reply_set(reply, rc == AP_ENOMEM ? GRPC_STATUS_RESOURCE_EXHAUSTED : GRPC_STATUS_INTERNAL,
              "registry snapshot failed: %s", err.message);
    return;
  }

  ring_storage *rings = count > 0 ? calloc(count, sizeof *rings) : NULL;
  Aperture__V1__RingState **ring_ptrs = count > 0 ? calloc(count, sizeof *ring_ptrs) : NULL;
  int ok = count == 0 || (rings != NULL && ring_ptrs != NULL);
  for (size_t i = 0; ok && i < count; i++) {
    size_t n = states[i].copied_endpoints;
    if (n > 0) {
      rings[i].endpoints = calloc(n, sizeof *rings[i].endpoints);
      rings[i].endpoint_ptrs = calloc(n, sizeof *rings[i].endpoint_ptrs);
      if (rings[i].endpoints == NULL || rings[i].endpoint_ptrs == NULL) { ok = 0; break; }
    }
    fill_ring(&states[i], &rings[i]);
    ring_ptrs[i] = &rings[i].ring;
  }
  if (ok) {
    Aperture__V1__GetRingStateResponse response = APERTURE__V1__GET_RING_STATE_RESPONSE__INIT;
    response.n_rings = count;
    response.rings = ring_ptrs;
    reply_pack(reply, &response.base);
  } else {
    reply_set(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory building the response");
  }
  for (size_t i = 0; rings != NULL && i < count; i++) {
    free(rings[i].endpoints);
    free(rings[i].endpoint_ptrs);
  }
  free(rings);
  free(ring_ptrs);
  ap_ring_states_free(states, count);
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
