/* The fleet scenarios' clock: a monotonic millisecond reading, a plain
 * sleep and a bounded poll, shared so every scenario waits the same way. */
#ifndef APERTURE_INTEROP_FLEET_CLOCK_H
#define APERTURE_INTEROP_FLEET_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Sleeps about `ms` milliseconds; ms <= 0 returns at once. */
void io_fleet_sleep_ms(long ms);

/* Milliseconds on the monotonic clock (the delay queue's clock). */
double io_fleet_now_ms(void);

/* Calls check(ctx) every poll_ms until it has returned nonzero on
 * `in_a_row` polls in a row (returns 1) or timeout_ms has passed (returns
 * 0). Returns -1 when check is NULL or in_a_row < 1. */
int io_fleet_wait_steady(int (*check)(void *ctx), void *ctx, int in_a_row, long timeout_ms,
                         long poll_ms);

#ifdef __cplusplus
}
#endif

#endif
