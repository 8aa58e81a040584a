#include "interop/fleet/fleet_kill.h"

#include <stdio.h>

#include "interop/fleet/fleet_clock.h"

#define KILLED_SERVER 1
#define KILL_AT_S 1.0    /* scale with --duration-s */
#define RESTART_AT_S 2.5

typedef struct kill_state {
  int killed, restarted;
  double restart_time;
} kill_state;

/* s1, or the last server of a smaller fleet. */
static int killed_server(const fleet_timeline_fleet *f) {
  return KILLED_SERVER < f->n_servers ? KILLED_SERVER : f->n_servers - 1;
}

static int tick(fleet_timeline_fleet *f, void *state, double t) {
  kill_state *st = state;
  int k = killed_server(f);
  /* the kill waits until the server has served calls, so that it
   * disturbs traffic even when the clients start slowly */
  if (!st->killed && t >= KILL_AT_S * f->time_scale && io_fleet_timeline_calls(f, k) > 0) {
    io_fleet_timeline_down(f, k, 1);
    st->killed = 1;
    f->disturbed = k;
  }
  if (st->killed && !st->restarted && t >= RESTART_AT_S * f->time_scale) {
    int port = f->servers[k].s.port;
    if (io_fleet_timeline_start_server(f, k, port, ".restarted") != 0) {
      snprintf(f->r->error, sizeof(f->r->error), "server s%d did not restart on port %d", k, port);
      return -1;
    }
    st->restarted = 1;
    st->restart_time = io_fleet_now_ms() / 1e3;
  }
  if (st->restarted && f->r->recover_s < 0 && io_fleet_timeline_calls(f, k) > 0) {
    f->r->recover_s = io_fleet_now_ms() / 1e3 - st->restart_time;
  }
  return 0;
}

static void mark(const fleet_timeline_fleet *f, int i, fleet_server_result *sv) {
  sv->killed = i == killed_server(f);
}

static const fleet_timeline_hooks kHooks = {
    .state_size = sizeof(kill_state), .tick = tick, .mark = mark};

const fleet_timeline io_fleet_kill_timeline = {
    .name = "kill",
    .servers = 5,
    .n_services = 1,
    .service_clients = {3},
    .rate = 100,
    .duration_s = 5,
    .concurrency = 4,
    .max_backoff_ms = 500,
    .default_modes = "continuous,round_robin",
    .min_aperture = 2,
    .hooks = &kHooks,
};
