#include "interop/fleet/fleet_bounce.h"

#include <stdio.h>

#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_server.h"

#define BOUNCED FLEET_BOUNCE_SERVER

typedef struct bounce_state {
  int phase; /* 1: s1 out, 2: back (or gone, for a removal), 3: measured */
  int dns_back;
  double left_at;
  long opened0[FLEET_TIMELINE_MAX_SLOTS], current0[FLEET_TIMELINE_MAX_SLOTS];
} bounce_state;

static double since(const bounce_state *st) { return io_fleet_now_ms() / 1e3 - st->left_at; }

/* Snapshots the servers, then s1 leaves the answer and stops. */
static void leave(fleet_timeline_fleet *f, bounce_state *st) {
  fleet_run *r = f->r;
  r->sessions_before = 0;
  for (int i = 0; i < f->n_servers; i++) {
    io_fleet_server_counts(f->servers[i].s.stats, &st->opened0[i], &st->current0[i]);
    r->sessions_before += st->current0[i];
  }
  io_fleet_timeline_publish(f, 0, f->n_servers, BOUNCED);
  io_fleet_timeline_down(f, BOUNCED, 0);
  st->phase = 1;
  f->disturbed = BOUNCED;
  st->left_at = io_fleet_now_ms() / 1e3;
}

/* Settled: what moved on the servers that stayed. */
static void measure(fleet_timeline_fleet *f, bounce_state *st) {
  fleet_run *r = f->r;
  r->sessions_changed = 0;
  for (int i = 0; i < f->n_servers; i++) {
    if (i == BOUNCED) continue;
    long opened, current;
    io_fleet_server_counts(f->servers[i].s.stats, &opened, &current);
    r->sessions_changed += io_fleet_server_moved(st->opened0[i], st->current0[i], opened, current);
  }
  r->bounce_measured = 1;
  st->phase = 3;
}

static int tick(fleet_timeline_fleet *f, void *state, double t) {
  bounce_state *st = state;
  const fleet_bounce *b = f->sc->params;
  if (st->phase == 0 && t >= b->leave_at_s * f->time_scale) leave(f, st);
  if (st->phase == 1 && b->comes_back && !st->dns_back && since(st) >= b->back_s / 2) {
    /* the address returns to the answer half-way, the process at the end:
     * the clients' failing reconnects to s1 ask the resolver again and
     * learn that it is back (gRPC's DNS resolver does not poll) */
    io_fleet_timeline_publish(f, 0, f->n_servers, -1);
    st->dns_back = 1;
  }
  if (st->phase == 1 && b->comes_back && since(st) >= b->back_s) {
    if (io_fleet_timeline_start_server(f, BOUNCED, f->port, ".restarted") != 0) {
      snprintf(f->r->error, sizeof(f->r->error), "server s1 did not restart on port %d", f->port);
      return -1;
    }
    st->phase = 2;
  }
  if (st->phase == 1 && !b->comes_back) st->phase = 2;
  if (st->phase == 2 && since(st) >= b->back_s + FLEET_BOUNCE_SETTLE_S) measure(f, st);
  return 0;
}

static void end(fleet_timeline_fleet *f, void *state) {
  const bounce_state *st = state;
  const fleet_bounce *b = f->sc->params;
  if (b->comes_back && st->phase >= 2) f->r->restarted_calls = io_fleet_timeline_calls(f, BOUNCED);
}

static void mark(const fleet_timeline_fleet *f, int i, fleet_server_result *sv) {
  const fleet_bounce *b = f->sc->params;
  sv->killed = b->comes_back && i == BOUNCED;
  sv->removed = !b->comes_back && i == BOUNCED;
}

const fleet_timeline_hooks io_fleet_bounce_hooks = {
    .state_size = sizeof(bounce_state), .tick = tick, .end = end, .mark = mark};
