#define _POSIX_C_SOURCE 200809L
#include "interop/fleet/fleet_clock.h"

#include <time.h>

#include "interop/common/delay_queue.h"

void io_fleet_sleep_ms(long ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

double io_fleet_now_ms(void) { return (double)io_delay_queue_now_ns() / 1e6; }
