/* The tail scenario's figures from its clients' call logs (the interop
 * client's --call-log; lines parsed by io_fleet_gray_parse_line): how many
 * calls failed, the latency quantiles, and the busiest window: the window
 * (1 s by default) and server in which one server took the most above the
 * mean of that window. Pure computation, no processes. */
#ifndef APERTURE_INTEROP_FLEET_TAIL_CALLS_H
#define APERTURE_INTEROP_FLEET_TAIL_CALLS_H

#include <stddef.h>

#include "interop/fleet/fleet_gray_calls.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tail_figures {
  long calls, ok, failed;
  double failed_share;   /* failed / calls */
  double p50_ms, p99_ms; /* over every call, failed ones too */
  /* The busiest window: windows are window_ms long from the first call's
   * start, only whole ones (the last, cut short by the end of the calls,
   * is left out), each counting the calls that started in it and name a
   * server; a window with fewer than min_window_calls such calls says
   * nothing. max_mean is the busiest server's calls in it over the
   * window's mean per server; -1 when no window counted. */
  double busiest_max_mean;
  int busiest_window; /* its index (seconds from the first call at 1 s) */
  int busiest_server; /* the server slot; -1 when none */
  long windows;       /* windows counted */
} tail_figures;

/* The figures of calls[0..n) over n_servers servers (slots 0..n_servers-1;
 * unattributed calls count for failed and the quantiles, not the windows).
 * The array is sorted by start in place. Returns 0, or -1 on NULL
 * arguments, n == 0, n_servers outside 1..GRAY_MAX_SERVERS or
 * window_ms <= 0. */
int io_fleet_tail_figures(gray_call *calls, size_t n, int n_servers, double window_ms,
                          long min_window_calls, tail_figures *out);

#ifdef __cplusplus
}
#endif

#endif
