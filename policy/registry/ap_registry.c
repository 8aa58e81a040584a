/*
 * ap_registry: a mutex-protected doubly linked list of refcounted entries.
 * The list holds one reference per entry and every snapshot in progress one
 * more, so a removed entry outlives the snapshots that saw it. g_mu guards
 * the list, the counts and the flags; it is never held during a callback.
 * `calling` counts callbacks running on an entry so that remove can wait for
 * them (the header's contract: no callback after remove returns).
 */
#define _POSIX_C_SOURCE 200809L

#include "policy/registry/ap_registry.h"
#include "policy/registry/ap_pages.h"
#include "policy/registry/ap_registry_testing.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ap_registry_entry {
  ap_snapshot_fn fn;
  void *ctx;
  struct ap_registry_entry *prev;
  struct ap_registry_entry *next;
  size_t refs;    /* the list's (until removed) + one per snapshot holding it */
  size_t calling; /* callbacks running now */
  int removed;    /* unlinked: its callback must not be called again */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_callback_done = PTHREAD_COND_INITIALIZER;
static ap_registry_entry *g_head; /* oldest first: stable output order */
static ap_registry_entry *g_tail;
static size_t g_count;

const char *ap_coordinate_source_name(int source) {
  switch (source) {
    case AP_COORDINATE_NONE: return "none";
    case AP_COORDINATE_CONFIG: return "config";
    case AP_COORDINATE_API: return "api";
    case AP_COORDINATE_ENVIRONMENT: return "environment";
    case AP_COORDINATE_HOSTNAME: return "hostname";
    case AP_COORDINATE_CHANNEL_ARG: return "channel_arg";
    case AP_COORDINATE_PEER_TARGET: return "peer_target";
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
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "ap_registry_add: out is NULL");
  *out = NULL;
  if (fn == NULL) return ap_error_set(err, AP_EINVAL, "ap_registry_add: fn is NULL");
  ap_registry_entry *e = calloc(1, sizeof *e);
  if (e == NULL) return ap_error_set(err, AP_ENOMEM, "ap_registry_add: out of memory");
  e->fn = fn;
  e->ctx = ctx;
  e->refs = 1;
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

/* Drops one reference; frees the entry with the last. Caller holds g_mu. */
static void unref_locked(ap_registry_entry *e) {
  if (--e->refs == 0) free(e);
}

void ap_registry_remove(ap_registry_entry *entry) {
  if (entry == NULL) return;
  pthread_mutex_lock(&g_mu);
  if (entry->prev != NULL) entry->prev->next = entry->next; else g_head = entry->next;
  if (entry->next != NULL) entry->next->prev = entry->prev; else g_tail = entry->prev;
  entry->prev = entry->next = NULL;
  entry->removed = 1;
  g_count--;
  while (entry->calling > 0) pthread_cond_wait(&g_callback_done, &g_mu);
  unref_locked(entry);
  pthread_mutex_unlock(&g_mu);
}

size_t ap_registry_count(void) {
  pthread_mutex_lock(&g_mu);
  size_t n = g_count;
  pthread_mutex_unlock(&g_mu);
  return n;
}

int ap_snapshot_query_matches(const ap_snapshot_query *query, const char *target) {
  if (query == NULL || query->target_filter == NULL || query->target_filter[0] == '\0') return 1;
  return target != NULL && strstr(target, query->target_filter) != NULL;
}

void ap_snapshot_query_page(const ap_snapshot_query *query, size_t endpoint_count,
                            size_t *first, size_t *count) {
  if (first == NULL || count == NULL) return;
  size_t start = query != NULL ? query->start_index : 0;
  *first = start < endpoint_count ? start : endpoint_count;
  *count = endpoint_count - *first;
  if (query != NULL && *count > query->max_endpoints) *count = query->max_endpoints;
}

ap_endpoint_state *ap_endpoint_states_alloc(size_t count) {
  if (count == 0 || count > SIZE_MAX / sizeof(ap_endpoint_state)) return NULL;
  return ap_pages_alloc(count * sizeof(ap_endpoint_state));
}

void ap_ring_state_clear(ap_ring_state *state) {
  if (state == NULL) return;
  free(state->target);
  free(state->mode);
  free(state->last_status);
  free(state->peer_target);
  for (size_t i = 0; i < state->config_warning_count; i++) free(state->config_warnings[i]);
  free(state->config_warnings);
  if (state->endpoints != NULL) {
    for (size_t i = 0; i < state->copied_endpoints; i++) free(state->endpoints[i].address);
    ap_pages_free(state->endpoints);
  }
  memset(state, 0, sizeof *state);
}

void ap_ring_states_free(ap_ring_state *states, size_t count) {
  if (states == NULL) return;
  for (size_t i = 0; i < count; i++) ap_ring_state_clear(&states[i]);
  free(states);
}

/* References to every live entry, taken under g_mu (NULL when none). */
static int take_refs(ap_registry_entry ***out, size_t *n, ap_error *err) {
  *out = NULL;
  *n = 0;
  pthread_mutex_lock(&g_mu);
  if (g_count > 0) {
    ap_registry_entry **refs = malloc(g_count * sizeof *refs);
    if (refs == NULL) {
      size_t count = g_count;
      pthread_mutex_unlock(&g_mu);
      return ap_error_set(err, AP_ENOMEM, "ap_registry_snapshot: out of memory for %zu references", count);
    }
    for (ap_registry_entry *e = g_head; e != NULL; e = e->next) {
      e->refs++;
      refs[(*n)++] = e;
    }
    *out = refs;
  }
  pthread_mutex_unlock(&g_mu);
  return AP_OK;
}

static void drop_refs(ap_registry_entry **refs, size_t n) {
  pthread_mutex_lock(&g_mu);
  for (size_t i = 0; i < n; i++) unref_locked(refs[i]);
  pthread_mutex_unlock(&g_mu);
  free(refs);
}

/* Runs the entry's callback unless it was removed since the reference was
 * taken. Returns the callback's result, or AP_SNAPSHOT_SKIP. */
static int call_entry(ap_registry_entry *e, ap_ring_state *s) {
  pthread_mutex_lock(&g_mu);
  int removed = e->removed;
  if (!removed) e->calling++;
  pthread_mutex_unlock(&g_mu);
  if (removed) return AP_SNAPSHOT_SKIP;
  int rc = e->fn(e->ctx, s);
  pthread_mutex_lock(&g_mu);
  e->calling--;
  if (e->removed && e->calling == 0) pthread_cond_broadcast(&g_callback_done);
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* Checks what a callback returned against what was asked: a callback that
 * ignored the filter or copied more than the page must not widen the
 * response. Frees the extra endpoints. Returns 1 when the state is kept. */
static int accept_state(ap_ring_state *s, const ap_snapshot_query *q) {
  if (!ap_snapshot_query_matches(q, s->target)) return 0;
  if (s->endpoints == NULL) s->copied_endpoints = 0;
  while (s->copied_endpoints > q->max_endpoints) free(s->endpoints[--s->copied_endpoints].address);
  if (s->first_endpoint > s->endpoint_count - s->copied_endpoints || s->copied_endpoints > s->endpoint_count)
    s->endpoint_count = s->first_endpoint + s->copied_endpoints; /* keep it self-consistent */
  s->fingerprint[sizeof s->fingerprint - 1] = '\0';
  s->peer_fingerprint[sizeof s->peer_fingerprint - 1] = '\0';
  s->peer_keys[sizeof s->peer_keys - 1] = '\0';
  s->query = NULL; /* borrowed for the call only */
  return 1;
}

/* An instance whose callback fails (other than out of memory) is left out
 * rather than failing the whole snapshot: one broken instance must not hide
 * the others from operators. */
int ap_registry_snapshot(const ap_snapshot_query *query, size_t max_total_endpoints,
                         ap_ring_state **states, size_t *count, ap_error *err) {
  if (states == NULL || count == NULL)
    return ap_error_set(err, AP_EINVAL, "ap_registry_snapshot: %s is NULL",
                     states == NULL ? "states" : "count");
  *states = NULL;
  *count = 0;
  ap_snapshot_query all = {NULL, 0, SIZE_MAX};
  if (query == NULL) {
    query = &all;
    max_total_endpoints = SIZE_MAX;
  }
  ap_registry_entry **refs = NULL;
  size_t n_refs = 0;
  int rc = take_refs(&refs, &n_refs, err);
  if (rc != AP_OK) return rc;
  ap_ring_state *out = n_refs > 0 ? calloc(n_refs, sizeof *out) : NULL;
  if (n_refs > 0 && out == NULL)
    rc = ap_error_set(err, AP_ENOMEM, "ap_registry_snapshot: out of memory for %zu states", n_refs);
  size_t n = 0;
  size_t budget = max_total_endpoints;
  for (size_t i = 0; rc == AP_OK && i < n_refs; i++) {
    ap_snapshot_query page = *query;
    if (page.max_endpoints > budget) page.max_endpoints = budget;
    ap_ring_state *s = &out[n];
    memset(s, 0, sizeof *s);
    s->query = &page;
    int cb = call_entry(refs[i], s);
    if (cb == AP_OK && accept_state(s, &page)) {
      budget -= s->copied_endpoints;
      n++;
      continue;
    }
    s->query = NULL;
    ap_ring_state_clear(s);
    if (cb == AP_ENOMEM)
      rc = ap_error_set(err, AP_ENOMEM, "ap_registry_snapshot: an instance ran out of memory");
  }
  drop_refs(refs, n_refs);
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
