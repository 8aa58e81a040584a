/*
 * ap_registry: a mutex-protected doubly linked list of live policy
 * instances. Snapshots call every callback under the lock (the header's
 * contract: no callback after remove returns), so callbacks must not call
 * back into the registry.
 */
#define _POSIX_C_SOURCE 200809L

#include "policy/registry/ap_registry.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ap_registry_entry {
  ap_snapshot_fn fn;
  void *ctx;
  struct ap_registry_entry *prev;
  struct ap_registry_entry *next;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static ap_registry_entry *g_head; /* oldest first: stable output order */
static ap_registry_entry *g_tail;
static size_t g_count;

/* Local setter so the registry does not depend on the core's ap_error.c. */
static int set_error(ap_error *err, int code, const char *fmt, ...) {
  if (err != NULL) {
    va_list ap;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

const char *ap_coordinate_source_name(int source) {
  switch (source) {
    case AP_COORDINATE_NONE: return "none";
    case AP_COORDINATE_CONFIG: return "config";
    case AP_COORDINATE_API: return "api";
    case AP_COORDINATE_ENVIRONMENT: return "environment";
    case AP_COORDINATE_HOSTNAME: return "hostname";
    case AP_COORDINATE_CHANNEL_ARG: return "channel_arg";
    default: return "unspecified";
  }
}

const char *ap_connectivity_name(int state) {
  switch (state) {
    case AP_CONN_IDLE: return "idle";
    case AP_CONN_CONNECTING: return "connecting";
    case AP_CONN_READY: return "ready";
    case AP_CONN_TRANSIENT_FAILURE: return "transient_failure";
    case AP_CONN_SHUTDOWN: return "shutdown";
    default: return "unknown";
  }
}

int ap_registry_add(ap_snapshot_fn fn, void *ctx, ap_registry_entry **out,
                    ap_error *err) {
  if (out == NULL) return set_error(err, AP_EINVAL, "ap_registry_add: out is NULL");
  *out = NULL;
  if (fn == NULL) return set_error(err, AP_EINVAL, "ap_registry_add: fn is NULL");
  ap_registry_entry *e = calloc(1, sizeof *e);
  if (e == NULL) return set_error(err, AP_ENOMEM, "ap_registry_add: out of memory");
  e->fn = fn;
  e->ctx = ctx;
  pthread_mutex_lock(&g_mu);
  e->prev = g_tail;
  if (g_tail != NULL) g_tail->next = e; else g_head = e;
  g_tail = e;
  g_count++;
  pthread_mutex_unlock(&g_mu);
  *out = e;
  if (err != NULL) { err->code = AP_OK; err->message[0] = '\0'; }
  return AP_OK;
}

void ap_registry_remove(ap_registry_entry *entry) {
  if (entry == NULL) return;
  pthread_mutex_lock(&g_mu);
  if (entry->prev != NULL) entry->prev->next = entry->next; else g_head = entry->next;
  if (entry->next != NULL) entry->next->prev = entry->prev; else g_tail = entry->prev;
  g_count--;
  pthread_mutex_unlock(&g_mu);
  free(entry);
}

void ap_ring_state_clear(ap_ring_state *state) {
  if (state == NULL) return;
  free(state->target);
  free(state->mode);
  free(state->last_status);
  if (state->endpoints != NULL) {
    for (size_t i = 0; i < state->endpoint_count; i++) free(state->endpoints[i].address);
    free(state->endpoints);
  }
  memset(state, 0, sizeof *state);
}

void ap_ring_states_free(ap_ring_state *states, size_t count) {
  if (states == NULL) return;
  for (size_t i = 0; i < count; i++) ap_ring_state_clear(&states[i]);
  free(states);
}

static int matches(const ap_ring_state *s, const char *filter) {
  if (filter == NULL || filter[0] == '\0') return 1;
  return s->target != NULL && strstr(s->target, filter) != NULL;
}

/* An instance whose callback fails (other than out of memory) is left out
 * rather than failing the whole snapshot: one broken instance must not hide
 * the others from operators. */
int ap_registry_snapshot(const char *target_filter, ap_ring_state **states,
                         size_t *count, ap_error *err) {
  if (states == NULL || count == NULL)
    return set_error(err, AP_EINVAL, "ap_registry_snapshot: %s is NULL",
                     states == NULL ? "states" : "count");
  *states = NULL;
  *count = 0;
  int rc = AP_OK;
  pthread_mutex_lock(&g_mu);
  ap_ring_state *out = NULL;
  size_t n = 0;
  if (g_count > 0) {
    out = calloc(g_count, sizeof *out);
    if (out == NULL) {
      rc = set_error(err, AP_ENOMEM, "ap_registry_snapshot: out of memory for %zu states", g_count);
    }
  }
  for (ap_registry_entry *e = g_head; rc == AP_OK && e != NULL; e = e->next) {
    ap_ring_state *s = &out[n];
    memset(s, 0, sizeof *s);
    int cb = e->fn(e->ctx, s);
    if (cb == AP_OK && matches(s, target_filter)) {
      if (s->endpoints == NULL) s->endpoint_count = 0;
      s->fingerprint[sizeof s->fingerprint - 1] = '\0';
      n++;
      continue;
    }
    ap_ring_state_clear(s);
    if (cb == AP_ENOMEM)
      rc = set_error(err, AP_ENOMEM, "ap_registry_snapshot: an instance ran out of memory");
  }
  pthread_mutex_unlock(&g_mu);
  if (rc != AP_OK) {
    ap_ring_states_free(out, n);
    return rc;
  }
  if (n == 0) {
    free(out);
    out = NULL;
  }
  *states = out;
  *count = n;
  if (err != NULL) { err->code = AP_OK; err->message[0] = '\0'; }
  return AP_OK;
}
