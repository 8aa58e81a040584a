#include "interop/fleet/fleet_tail_calls.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int by_start(const void *a, const void *b) {
  const gray_call *x = a, *y = b;
  return (x->start_us > y->start_us) - (x->start_us < y->start_us);
}

static int by_value(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Nearest-rank quantile of sorted v[0..n), in ms. */
static double quantile_ms(const int64_t *v, size_t n, double q) {
  size_t rank = (size_t)(q * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return (double)v[rank - 1] / 1000.0;
}

/* Closes window `w` with counts c[0..n_servers): the busiest so far? */
static void close_window(const long *c, int n_servers, long min_calls, int w,
                         tail_figures *out) {
  long total = 0, max = 0;
  int at = -1;
  for (int s = 0; s < n_servers; s++) {
    total += c[s];
    if (c[s] > max) {
      max = c[s];
      at = s;
    }
  }
  if (total < min_calls || total == 0) return;
  out->windows++;
  const double max_mean = (double)max * n_servers / (double)total;
  if (max_mean > out->busiest_max_mean) {
    out->busiest_max_mean = max_mean;
    out->busiest_window = w;
    out->busiest_server = at;
  }
}

int io_fleet_tail_figures(gray_call *calls, size_t n, int n_servers, double window_ms,
                          long min_window_calls, tail_figures *out) {
  if (calls == NULL || out == NULL || n == 0 || n_servers < 1 || n_servers > GRAY_MAX_SERVERS ||
      !(window_ms > 0))
    return -1;
  memset(out, 0, sizeof(*out));
  out->busiest_max_mean = -1;
  out->busiest_window = -1;
  out->busiest_server = -1;
  qsort(calls, n, sizeof(calls[0]), by_start);
  int64_t *lat = malloc(n * sizeof(int64_t));
  if (lat == NULL) return -1;
  for (size_t i = 0; i < n; i++) {
    out->calls++;
    if (calls[i].code == 0) out->ok++;
    else out->failed++;
    lat[i] = calls[i].latency_us;
  }
  qsort(lat, n, sizeof(lat[0]), by_value);
  out->p50_ms = quantile_ms(lat, n, 0.50);
  out->p99_ms = quantile_ms(lat, n, 0.99);
  free(lat);
  out->failed_share = (double)out->failed / (double)out->calls;

  const int64_t first = calls[0].start_us, last = calls[n - 1].start_us;
  const int64_t width_us = (int64_t)(window_ms * 1000.0);
  if (width_us <= 0) return 0;
  const int64_t whole = (last - first) / width_us; /* windows before the last, partial one */
  long counts[GRAY_MAX_SERVERS] = {0};
  int64_t w = 0;
  for (size_t i = 0; i < n && w < whole; i++) {
    const int64_t at = (calls[i].start_us - first) / width_us;
    while (w < at && w < whole) {
      close_window(counts, n_servers, min_window_calls, (int)w, out);
      memset(counts, 0, sizeof(counts));
      w++;
    }
    if (w >= whole) break;
    const int s = calls[i].server;
    if (s >= 0 && s < n_servers) counts[s]++;
  }
  if (w < whole) close_window(counts, n_servers, min_window_calls, (int)w, out);
  return 0;
}
