#include "interop/fleet/fleet_tail_calls.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
  const double q[] = {0.50, 0.99};
  double at_q[2];
  if (io_fleet_gray_latency_quantiles(calls, n, q, 2, at_q) != 0) return -1;
  out->p50_ms = at_q[0];
  out->p99_ms = at_q[1];
  io_fleet_gray_sort_by_start(calls, n);
  for (size_t i = 0; i < n; i++) {
    out->calls++;
    if (calls[i].code == 0) out->ok++;
    else out->failed++;
  }
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
