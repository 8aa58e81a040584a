#define _POSIX_C_SOURCE 200809L
#include "interop/testing/slow_toggle.h"

#include <stdatomic.h>
#include <stdio.h>

static long g_slow_ms;           /* set once before the server starts */
static atomic_long g_current_ms; /* g_slow_ms while on, else 0 */

int io_slow_toggle_configure(long slow_latency_ms) {
  if (slow_latency_ms < 0 || slow_latency_ms > 60000) {
    fprintf(stderr, "flag --slow-latency-ms: %ld is not in 0..60000\n", slow_latency_ms);
    return -1;
  }
  g_slow_ms = slow_latency_ms;
  atomic_store(&g_current_ms, 0);
  return 0;
}

void io_slow_toggle_add_signals(sigset_t *set) {
  if (set == NULL || g_slow_ms <= 0) return;
  sigaddset(set, SIGUSR1);
  sigaddset(set, SIGUSR2);
}

int io_slow_toggle_signal(int sig) {
  if (g_slow_ms <= 0 || (sig != SIGUSR1 && sig != SIGUSR2)) return 0;
  long v = sig == SIGUSR1 ? g_slow_ms : 0;
  atomic_store(&g_current_ms, v);
  fprintf(stderr, "server: slow latency %ld ms\n", v);
  return 1;
}

long io_slow_toggle_extra_ms(void) { return atomic_load_explicit(&g_current_ms, memory_order_relaxed); }
