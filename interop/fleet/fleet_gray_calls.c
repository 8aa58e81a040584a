#include "interop/fleet/fleet_gray_calls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int io_fleet_gray_server_of(const gray_servers *s, const char *field) {
  if (s == NULL || field == NULL) return GRAY_UNATTRIBUTED;
  if (field[0] == 's' && field[1] >= '0' && field[1] <= '9') {
    char *end;
    long i = strtol(field + 1, &end, 10);
    if (*end == '\0' && i >= 0 && i < s->n) return (int)i;
    return GRAY_UNATTRIBUTED;
  }
  if (strncmp(field, "ipv4:", 5) == 0 && strchr(field, ',') == NULL) {
    for (int i = 0; i < s->n; i++) {
      if (strcmp(field + 5, s->addrs[i]) == 0) return i;
    }
  }
  return GRAY_UNATTRIBUTED;
}

int io_fleet_gray_parse_line(const gray_servers *s, const char *line, gray_call *out) {
  if (s == NULL || line == NULL || out == NULL) return -1;
  long long start, lat;
  int code;
  char server[256];
  if (sscanf(line, "%lld %lld %d %255s", &start, &lat, &code, server) != 4) return -1;
  if (code < 0 || code > 16 || lat < 0) return -1;
  out->start_us = start;
  out->latency_us = lat;
  out->code = code;
  out->server = io_fleet_gray_server_of(s, server);
  out->client = 0;
  return 0;
}

static int by_start(const void *a, const void *b) {
  const gray_call *x = a, *y = b;
  return (x->start_us > y->start_us) - (x->start_us < y->start_us);
}

static int by_value(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void io_fleet_gray_sort_by_start(gray_call *calls, size_t n) {
  if (calls != NULL && n > 0) qsort(calls, n, sizeof(*calls), by_start);
}

int io_fleet_gray_latency_quantiles(const gray_call *calls, size_t n, const double *q,
                                    size_t n_q, double *out_ms) {
  if (calls == NULL || n == 0 || q == NULL || out_ms == NULL) return -1;
  int64_t *lat = malloc(n * sizeof(*lat));
  if (lat == NULL) return -1;
  for (size_t i = 0; i < n; i++) lat[i] = calls[i].latency_us;
  qsort(lat, n, sizeof(*lat), by_value);
  for (size_t k = 0; k < n_q; k++) {
    /* Nearest rank: the smallest latency with at least q of them at or below. */
    size_t rank = (size_t)(q[k] * (double)n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    out_ms[k] = (double)lat[rank - 1] / 1000.0;
  }
  free(lat);
  return 0;
}

/* The fault's servers and clients as bit sets. */
typedef struct scope {
  unsigned servers, clients;
} scope;

static int in_scope(const scope *sc, const gray_call *c) {
  return c->client >= 0 && c->client < 32 && ((sc->clients >> c->client) & 1u);
}

static int on_faulty(const scope *sc, const gray_call *c) {
  return in_scope(sc, c) && c->server >= 0 && c->server < 32 && ((sc->servers >> c->server) & 1u);
}

/* The fault's clients' calls to its servers and all their calls started in
 * [from, to), over calls sorted by start, from index *at on (advanced past
 * them). */
static void window(const gray_call *calls, size_t n, size_t *at, int64_t from, int64_t to,
                   const scope *sc, long *mine, long *all) {
  *mine = *all = 0;
  while (*at < n && calls[*at].start_us < from) (*at)++;
  for (; *at < n && calls[*at].start_us < to; (*at)++) {
    if (!in_scope(sc, &calls[*at])) continue;
    (*all)++;
    if (on_faulty(sc, &calls[*at])) (*mine)++;
  }
}

static int popcount(unsigned v) {
  int n = 0;
  for (; v; v &= v - 1) n++;
  return n;
}

int io_fleet_gray_figures(gray_call *calls, size_t n, const gray_windows *w, gray_figures *out) {
  if (calls == NULL || w == NULL || out == NULL || n == 0 || w->heal_us < w->fault_start_us ||
      w->bucket_ms <= 0 || w->n_servers <= 0 || w->n_servers > 32 || w->faulty < 0 ||
      w->faulty >= w->n_servers || (w->n_servers < 32 && (w->faulty_mask >> w->n_servers) != 0))
    return -1;
  scope sc = {w->faulty_mask ? w->faulty_mask : 1u << w->faulty,
              w->client_mask ? w->client_mask : ~0u};
  memset(out, 0, sizeof(*out));
  const double q[] = {0.5, 0.99, 0.999};
  double at_q[3];
  if (io_fleet_gray_latency_quantiles(calls, n, q, 3, at_q) != 0) return -1;
  out->p50_ms = at_q[0];
  out->p99_ms = at_q[1];
  out->p999_ms = at_q[2];
  io_fleet_gray_sort_by_start(calls, n);
  long during = 0, during_mine = 0, after = 0, after_mine = 0;
  for (size_t i = 0; i < n; i++) {
    const gray_call *c = &calls[i];
    out->calls++;
    out->by_code[c->code]++;
    if (in_scope(&sc, c) && c->start_us >= w->fault_start_us && c->start_us < w->heal_us) {
      during++;
      during_mine += on_faulty(&sc, c);
    } else if (in_scope(&sc, c) && c->start_us >= w->heal_us) {
      after++;
      after_mine += on_faulty(&sc, c);
    }
    if (on_faulty(&sc, c) && c->start_us < w->fault_start_us &&
        c->start_us + c->latency_us > w->fault_start_us)
      out->inflight_at_fault++;
    if (c->code == 0) {
      out->ok++;
      continue;
    }
    out->failed++;
    if (c->server == GRAY_UNATTRIBUTED) out->failed_unattributed++;
    else if (on_faulty(&sc, c)) out->failed_faulty++;
    else out->failed_healthy++;
  }
  out->failed_budget = out->inflight_at_fault + out->calls / 1000;
  out->share_during = during ? (double)during_mine / (double)during : 0;
  out->share_after = after ? (double)after_mine / (double)after : 0;

  int64_t bucket_us = (int64_t)(w->bucket_ms * 1000.0);
  if (bucket_us < 1) bucket_us = 1;
  out->detect_ms = -1;
  size_t at = 0;
  for (int64_t from = w->fault_start_us; from < w->heal_us; from += bucket_us) {
    int64_t to = from + bucket_us < w->heal_us ? from + bucket_us : w->heal_us;
    long mine, all;
    window(calls, n, &at, from, to, &sc, &mine, &all);
    if (all < w->min_bucket_calls) continue;
    int under = (double)mine < 0.01 * (double)all;
    if (out->detect_ms < 0 && under) out->detect_ms = (double)(to - w->fault_start_us) / 1000.0;
    else if (out->detect_ms >= 0 && !under) out->relapses++;
  }
  out->recover_ms = -1;
  int64_t last = calls[n - 1].start_us;
  double fair = (double)popcount(sc.servers) / (double)w->n_servers;
  for (int64_t from = w->heal_us; from <= last; from += bucket_us) {
    long mine, all;
    window(calls, n, &at, from, from + bucket_us, &sc, &mine, &all);
    if (all < w->min_bucket_calls) continue;
    if ((double)mine >= 0.5 * fair * (double)all) {
      out->recover_ms = (double)(from + bucket_us - w->heal_us) / 1000.0;
      break;
    }
  }
  return 0;
}
