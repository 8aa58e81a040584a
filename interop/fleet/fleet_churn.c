#include "interop/fleet/fleet_churn.h"

#include <stdio.h>

#include "interop/common/json_read.h"
#include "interop/common/proc.h"
#include "interop/fleet/fleet_clock.h"

#define CHURN_AT_S 1.5  /* scales with --duration-s */
#define DRAIN_MAX_S 5.0

typedef struct churn_state {
  int churned; /* 1: swapped, 2: s0 stopped */
  double drain_started;
} churn_state;

static int server_args(const fleet_timeline_fleet *f, int i, const char **extra) {
  (void)f;
  (void)i;
  /* connections recycle every second: clients re-resolve regularly, so a
   * server removed from DNS drains before it is stopped */
  extra[0] = "--max-connection-age-ms";
  extra[1] = "1000";
  return 2;
}

static int tick(fleet_timeline_fleet *f, void *state, double t) {
  churn_state *st = state;
  int spare = f->n_servers;
  if (!st->churned && t >= CHURN_AT_S * f->time_scale) {
    /* add the spare and remove s0 in the DNS answer; the clients
     * re-resolve as their connections age out and stop using s0 */
    if (io_fleet_timeline_start_server(f, spare, f->port, "") != 0) {
      snprintf(f->r->error, sizeof(f->r->error), "spare server did not start");
      return -1;
    }
    io_fleet_timeline_publish(f, 1, spare + 1, -1);
    st->churned = 1;
    f->disturbed = 0;
    st->drain_started = io_fleet_now_ms() / 1e3;
  }
  if (st->churned == 1) {
    /* stop s0 once drained (no connection left), or after 5 s anyway;
     * its final stats stay in its file, nothing to carry over */
    json_value *v = io_json_parse_file(f->servers[0].s.stats, NULL, 0);
    long current = v ? (long)io_json_get_number(v, "connections_current", 1) : 1;
    io_json_free(v);
    if (current == 0 || io_fleet_now_ms() / 1e3 - st->drain_started > DRAIN_MAX_S) {
      f->r->drain_s = io_fleet_now_ms() / 1e3 - st->drain_started;
      io_proc_stop(f->servers[0].s.p, 5000);
      f->servers[0].s.p = NULL;
      st->churned = 2;
    }
  }
  return 0;
}

static void mark(const fleet_timeline_fleet *f, int i, fleet_server_result *sv) {
  sv->removed = i == 0;
  sv->added = i == f->n_servers;
}

static const fleet_timeline_hooks kHooks = {
    .state_size = sizeof(churn_state), .server_args = server_args, .tick = tick, .mark = mark};

const fleet_timeline io_fleet_churn_timeline = {
    .name = "churn",
    .servers = 5,
    .spares = 1,
    .n_services = 1,
    .service_clients = {3},
    .rate = 100,
    .duration_s = 4,
    .concurrency = 4,
    .max_backoff_ms = 500,
    .default_modes = "continuous,round_robin",
    .min_aperture = 2,
    .dns = 1,
    .hooks = &kHooks,
};
