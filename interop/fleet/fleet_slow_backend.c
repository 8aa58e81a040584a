#include "interop/fleet/fleet_slow_backend.h"

#include <stddef.h>

#define SLOW_SERVER 0

static int server_args(const fleet_timeline_fleet *f, int i, const char **extra) {
  (void)f;
  if (i != SLOW_SERVER) return 0;
  extra[0] = "--extra-latency-ms";
  extra[1] = "40";
  return 2;
}

static void mark(const fleet_timeline_fleet *f, int i, fleet_server_result *sv) {
  (void)f;
  sv->slow = i == SLOW_SERVER;
}

static void figures(fleet_timeline_fleet *f) {
  fleet_run *r = f->r;
  long total = 0;
  for (int i = 0; i < r->n_servers; i++) total += r->servers[i].calls;
  r->slow_share = total ? (double)r->servers[SLOW_SERVER].calls / (double)total : 0;
}

static const fleet_timeline_hooks kHooks = {
    .server_args = server_args, .mark = mark, .figures = figures};

const fleet_timeline io_fleet_slow_backend_timeline = {
    .name = "slow-backend",
    .servers = 6,
    .n_services = 1,
    .service_clients = {3},
    .rate = 150,
    .duration_s = 3,
    .concurrency = 16,
    .default_modes = "continuous,round_robin",
    .min_aperture = 12, /* every server: pick-of-two alone decides the slow one's share */
    .hooks = &kHooks,
};
