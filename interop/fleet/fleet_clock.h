/* The fleet scenarios' clock: a monotonic millisecond reading and a plain
 * sleep, shared so every scenario bounds its waits the same way. */
#ifndef APERTURE_INTEROP_FLEET_CLOCK_H
#define APERTURE_INTEROP_FLEET_CLOCK_H

/* Sleeps about `ms` milliseconds; ms <= 0 returns at once. */
void io_fleet_sleep_ms(long ms);

/* Milliseconds on the monotonic clock (the delay queue's clock). */
double io_fleet_now_ms(void);

#endif
