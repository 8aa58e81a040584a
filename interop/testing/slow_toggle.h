/* The interop server's --slow-latency-ms N: extra latency that signals
 * switch on and off while the server runs, so that a fleet can make one
 * server slow for a while without restarting it (its connections stay).
 * SIGUSR1 adds N ms to every TestService call's delay (besides
 * --extra-latency-ms and rpc-behavior sleeps), SIGUSR2 takes it off again.
 * Health checks are never slowed. Without the flag the signals are not
 * taken (their default action applies). */
#ifndef APERTURE_INTEROP_SLOW_TOGGLE_H
#define APERTURE_INTEROP_SLOW_TOGGLE_H

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the latency that SIGUSR1 switches on (0..60000 ms; 0: the toggle
 * is off and io_slow_toggle_add_signals adds nothing). Returns 0, or -1
 * on a value out of range (message naming the flag on stderr). */
int io_slow_toggle_configure(long slow_latency_ms);

/* Adds SIGUSR1 and SIGUSR2 to `set` when the toggle is configured, for
 * the server's synchronous signal wait. */
void io_slow_toggle_add_signals(sigset_t *set);

/* Handles a signal the server took: SIGUSR1 switches the extra latency
 * on, SIGUSR2 off (a line on stderr each). Returns 1 when `sig` was one of
 * them, else 0. */
int io_slow_toggle_signal(int sig);

/* The extra latency now: the configured ms while switched on, else 0.
 * Lock-free (one atomic load), for the call path. */
long io_slow_toggle_extra_ms(void);

#ifdef __cplusplus
}
#endif

#endif
