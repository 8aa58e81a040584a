#define _POSIX_C_SOURCE 200809L
#include "interop/testing/client_stats.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "interop/common/json_write.h"
#include "interop/common/latency_hist.h"

#define MAX_PEERS 1024
#define PEER_NAME 128

typedef struct peer_count {
  char name[PEER_NAME];
  long count;
} peer_count;

typedef struct peer_table {
  peer_count *items;
  size_t n, cap;
} peer_table;

struct stats_watcher {
  int remaining;
  int failures;
  peer_table peers;
  peer_table method_peers[CLIENT_METHODS]; /* rpcs_by_method */
  stats_watcher *next;
};

struct client_stats {
  pthread_mutex_t mu;
  long started[CLIENT_METHODS];
  long results[CLIENT_METHODS][17];
  peer_table peers;
  peer_table failed_addresses;
  latency_hist hist;
  stats_watcher *watchers;
};

const char *io_client_method_name(client_method m) {
  return m == CLIENT_EMPTY ? "EMPTY_CALL" : "UNARY_CALL";
}

static void peer_add(peer_table *t, const char *name) {
  for (size_t i = 0; i < t->n; i++) {
    if (strcmp(t->items[i].name, name) == 0) {
      t->items[i].count++;
      return;
    }
  }
  if (t->n == t->cap) {
    if (t->cap >= MAX_PEERS) return; /* bounded: extra peers go uncounted */
    size_t cap = t->cap ? t->cap * 2 : 16;
    peer_count *n = realloc(t->items, cap * sizeof(*n));
    if (n == NULL) return;
    t->items = n;
    t->cap = cap;
  }
  snprintf(t->items[t->n].name, PEER_NAME, "%s", name);
  t->items[t->n].count = 1;
  t->n++;
}

static void watcher_free(stats_watcher *w) {
  free(w->peers.items);
  for (int m = 0; m < CLIENT_METHODS; m++) free(w->method_peers[m].items);
  free(w);
}

client_stats *io_client_stats_create(void) {
  client_stats *s = calloc(1, sizeof(*s));
  if (s == NULL) return NULL;
  pthread_mutex_init(&s->mu, NULL);
  return s;
}

void io_client_stats_destroy(client_stats *s) {
  if (s == NULL) return;
  while (s->watchers) {
    stats_watcher *w = s->watchers;
    s->watchers = w->next;
    watcher_free(w);
  }
  free(s->peers.items);
  free(s->failed_addresses.items);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

void io_client_stats_started(client_stats *s, client_method m) {
  if (s == NULL || (unsigned)m >= CLIENT_METHODS) return;
  pthread_mutex_lock(&s->mu);
  s->started[m]++;
  pthread_mutex_unlock(&s->mu);
}

void io_client_stats_finished(client_stats *s, client_method m, int code, const char *peer,
                           uint64_t latency_us) {
  if (s == NULL || (unsigned)m >= CLIENT_METHODS || code < 0 || code > 16) return;
  int known = peer != NULL && peer[0] != '\0';
  pthread_mutex_lock(&s->mu);
  s->results[m][code]++;
  if (code == 0) io_latency_hist_record(&s->hist, latency_us);
  if (known && code == 0) peer_add(&s->peers, peer);
  for (stats_watcher *w = s->watchers; w; w = w->next) {
    if (w->remaining <= 0) continue;
    w->remaining--;
    /* As in gRPC's interop clients: a call counts for its peer only when
     * it succeeded; otherwise it is a failure. */
    if (known && code == 0) {
      peer_add(&w->peers, peer);
      peer_add(&w->method_peers[m], peer);
    } else {
      w->failures++;
    }
  }
  pthread_mutex_unlock(&s->mu);
}

void io_client_stats_failed_address(client_stats *s, const char *address) {
  if (s == NULL || address == NULL || address[0] == '\0') return;
  pthread_mutex_lock(&s->mu);
  peer_add(&s->failed_addresses, address);
  pthread_mutex_unlock(&s->mu);
}

stats_watcher *io_client_stats_watch(client_stats *s, int num_rpcs) {
  if (s == NULL || num_rpcs <= 0) return NULL;
  stats_watcher *w = calloc(1, sizeof(*w));
  if (w == NULL) return NULL;
  w->remaining = num_rpcs;
  pthread_mutex_lock(&s->mu);
  w->next = s->watchers;
  s->watchers = w;
  pthread_mutex_unlock(&s->mu);
  return w;
}

int io_client_stats_watch_done(client_stats *s, stats_watcher *w) {
  if (s == NULL || w == NULL) return 0;
  pthread_mutex_lock(&s->mu);
  int done = w->remaining <= 0;
  pthread_mutex_unlock(&s->mu);
  return done;
}

/* The same counts split by method ("UNARY_CALL", "EMPTY_CALL"), as gRPC's
 * interop clients report them; methods without a call are left out. */
static void fill_rpcs_by_method(const stats_watcher *w,
                                Grpc__Testing__LoadBalancerStatsResponse *out) {
  typedef Grpc__Testing__LoadBalancerStatsResponse__RpcsByMethodEntry method_entry;
  typedef Grpc__Testing__LoadBalancerStatsResponse__RpcsByPeer__RpcsByPeerEntry peer_entry;
  out->rpcs_by_method = calloc(CLIENT_METHODS, sizeof(*out->rpcs_by_method));
  if (out->rpcs_by_method == NULL) return;
  for (int m = 0; m < CLIENT_METHODS; m++) {
    const peer_table *t = &w->method_peers[m];
    if (t->n == 0) continue;
    method_entry *e = calloc(1, sizeof(*e));
    Grpc__Testing__LoadBalancerStatsResponse__RpcsByPeer *by_peer = calloc(1, sizeof(*by_peer));
    peer_entry **entries = calloc(t->n, sizeof(*entries));
    char *key = strdup(io_client_method_name((client_method)m));
    if (e == NULL || by_peer == NULL || entries == NULL || key == NULL) {
      free(e);
      free(by_peer);
      free(entries);
      free(key);
      return;
    }
    grpc__testing__load_balancer_stats_response__rpcs_by_method_entry__init(e);
    grpc__testing__load_balancer_stats_response__rpcs_by_peer__init(by_peer);
    e->key = key;
    e->value = by_peer;
    by_peer->rpcs_by_peer = entries;
    out->rpcs_by_method[out->n_rpcs_by_method++] = e;
    for (size_t i = 0; i < t->n; i++) {
      peer_entry *pe = malloc(sizeof(*pe));
      if (pe == NULL) return;
      grpc__testing__load_balancer_stats_response__rpcs_by_peer__rpcs_by_peer_entry__init(pe);
      pe->key = strdup(t->items[i].name);
      pe->value = (int32_t)t->items[i].count;
      if (pe->key == NULL) {
        free(pe);
        return;
      }
      entries[by_peer->n_rpcs_by_peer++] = pe;
    }
  }
}

void io_client_stats_unwatch(client_stats *s, stats_watcher *w,
                          Grpc__Testing__LoadBalancerStatsResponse *out) {
  if (s == NULL || w == NULL) return;
  pthread_mutex_lock(&s->mu);
  for (stats_watcher **p = &s->watchers; *p; p = &(*p)->next) {
    if (*p == w) {
      *p = w->next;
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
  if (out != NULL) {
    grpc__testing__load_balancer_stats_response__init(out);
    out->num_failures = w->failures;
    out->rpcs_by_peer = calloc(w->peers.n ? w->peers.n : 1, sizeof(*out->rpcs_by_peer));
    for (size_t i = 0; out->rpcs_by_peer && i < w->peers.n; i++) {
      Grpc__Testing__LoadBalancerStatsResponse__RpcsByPeerEntry *e = malloc(sizeof(*e));
      if (e == NULL) break;
      grpc__testing__load_balancer_stats_response__rpcs_by_peer_entry__init(e);
      e->key = strdup(w->peers.items[i].name);
      e->value = (int32_t)w->peers.items[i].count;
      out->rpcs_by_peer[out->n_rpcs_by_peer++] = e;
    }
    fill_rpcs_by_method(w, out);
  }
  watcher_free(w);
}

void io_client_stats_free_response(Grpc__Testing__LoadBalancerStatsResponse *out) {
  if (out == NULL) return;
  for (size_t i = 0; i < out->n_rpcs_by_peer; i++) {
    free(out->rpcs_by_peer[i]->key);
    free(out->rpcs_by_peer[i]);
  }
  free(out->rpcs_by_peer);
  out->rpcs_by_peer = NULL;
  out->n_rpcs_by_peer = 0;
  for (size_t i = 0; i < out->n_rpcs_by_method; i++) {
    Grpc__Testing__LoadBalancerStatsResponse__RpcsByMethodEntry *e = out->rpcs_by_method[i];
    for (size_t k = 0; k < e->value->n_rpcs_by_peer; k++) {
      free(e->value->rpcs_by_peer[k]->key);
      free(e->value->rpcs_by_peer[k]);
    }
    free(e->value->rpcs_by_peer);
    free(e->value);
    free(e->key);
    free(e);
  }
  free(out->rpcs_by_method);
  out->rpcs_by_method = NULL;
  out->n_rpcs_by_method = 0;
}

void io_client_stats_accumulated(client_stats *s,
                              Grpc__Testing__LoadBalancerAccumulatedStatsResponse *out) {
  if (s == NULL || out == NULL) return;
  grpc__testing__load_balancer_accumulated_stats_response__init(out);
  typedef Grpc__Testing__LoadBalancerAccumulatedStatsResponse__StatsPerMethodEntry method_entry;
  typedef Grpc__Testing__LoadBalancerAccumulatedStatsResponse__MethodStats method_stats;
  typedef Grpc__Testing__LoadBalancerAccumulatedStatsResponse__MethodStats__ResultEntry result_entry;
  out->stats_per_method = calloc(CLIENT_METHODS, sizeof(method_entry *));
  if (out->stats_per_method == NULL) return;
  pthread_mutex_lock(&s->mu);
  for (int m = 0; m < CLIENT_METHODS; m++) {
    if (s->started[m] == 0) continue;
    method_entry *e = calloc(1, sizeof(*e));
    method_stats *ms = calloc(1, sizeof(*ms));
    result_entry **results = calloc(17, sizeof(result_entry *));
    if (e == NULL || ms == NULL || results == NULL) {
      free(e);
      free(ms);
      free(results);
      break;
    }
    grpc__testing__load_balancer_accumulated_stats_response__stats_per_method_entry__init(e);
    grpc__testing__load_balancer_accumulated_stats_response__method_stats__init(ms);
    e->key = strdup(io_client_method_name((client_method)m));
    e->value = ms;
    ms->rpcs_started = (int32_t)s->started[m];
    ms->result = results;
    for (int c = 0; c <= 16; c++) {
      if (s->results[m][c] == 0) continue;
      result_entry *r = malloc(sizeof(*r));
      if (r == NULL) break;
      grpc__testing__load_balancer_accumulated_stats_response__method_stats__result_entry__init(r);
      r->key = c;
      r->value = (int32_t)s->results[m][c];
      ms->result[ms->n_result++] = r;
    }
    out->stats_per_method[out->n_stats_per_method++] = e;
  }
  pthread_mutex_unlock(&s->mu);
}

void io_client_stats_free_accumulated(Grpc__Testing__LoadBalancerAccumulatedStatsResponse *out) {
  if (out == NULL) return;
  for (size_t i = 0; i < out->n_stats_per_method; i++) {
    Grpc__Testing__LoadBalancerAccumulatedStatsResponse__StatsPerMethodEntry *e =
        out->stats_per_method[i];
    for (size_t r = 0; r < e->value->n_result; r++) free(e->value->result[r]);
    free(e->value->result);
    free(e->value);
    free(e->key);
    free(e);
  }
  free(out->stats_per_method);
  out->stats_per_method = NULL;
  out->n_stats_per_method = 0;
}

void io_client_stats_totals(client_stats *s, client_totals *out) {
  if (s == NULL || out == NULL) return;
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&s->mu);
  for (int m = 0; m < CLIENT_METHODS; m++) {
    out->started += s->started[m];
    for (int c = 0; c <= 16; c++) {
      out->by_code[c] += s->results[m][c];
      if (c == 0) out->ok += s->results[m][c];
      else out->failed += s->results[m][c];
    }
  }
  out->p50_us = io_latency_hist_quantile(&s->hist, 0.50);
  out->p90_us = io_latency_hist_quantile(&s->hist, 0.90);
  out->p99_us = io_latency_hist_quantile(&s->hist, 0.99);
  out->p999_us = io_latency_hist_quantile(&s->hist, 0.999);
  out->max_us = s->hist.max_us;
  out->mean_us = io_latency_hist_mean(&s->hist);
  pthread_mutex_unlock(&s->mu);
}

void io_client_stats_write_peers(client_stats *s, FILE *f) {
  if (s == NULL || f == NULL) return;
  pthread_mutex_lock(&s->mu);
  fprintf(f, "\"peers\":{");
  for (size_t i = 0; i < s->peers.n; i++) {
    if (i) fputc(',', f);
    io_json_write_string(f, s->peers.items[i].name);
    fprintf(f, ":%ld", s->peers.items[i].count);
  }
  fputc('}', f);
  pthread_mutex_unlock(&s->mu);
}

void io_client_stats_write_details(client_stats *s, FILE *f) {
  if (s == NULL || f == NULL) return;
  pthread_mutex_lock(&s->mu);
  fprintf(f, "\"failed_addresses\":{");
  for (size_t i = 0; i < s->failed_addresses.n; i++) {
    if (i) fputc(',', f);
    io_json_write_string(f, s->failed_addresses.items[i].name);
    fprintf(f, ":%ld", s->failed_addresses.items[i].count);
  }
  fprintf(f, "},\"latency_hist\":[");
  int first = 1;
  for (int i = 0; i < LATENCY_HIST_BUCKETS; i++) {
    if (s->hist.buckets[i] == 0) continue;
    fprintf(f, "%s[%llu,%llu]", first ? "" : ",",
            (unsigned long long)io_latency_hist_bucket_value(i),
            (unsigned long long)s->hist.buckets[i]);
    first = 0;
  }
  fputc(']', f);
  pthread_mutex_unlock(&s->mu);
}
