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

int io_fleet_wait_steady(int (*check)(void *ctx), void *ctx, int in_a_row, long timeout_ms,
                         long poll_ms) {
  if (check == NULL || in_a_row < 1) return -1;
  double deadline = io_fleet_now_ms() + (double)timeout_ms;
  int good = 0;
  while (io_fleet_now_ms() < deadline) {
    good = check(ctx) ? good + 1 : 0;
    if (good >= in_a_row) return 1;
    io_fleet_sleep_ms(poll_ms);
  }
  return 0;
}
