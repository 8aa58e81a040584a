/* The timeline scenarios (balance, multi-service, slow-backend, kill,
 * churn, restart, remove, throughput): per mode, a fleet of server
 * processes and services of client processes that send calls for a set
 * time while something may happen to a server at set times, then the
 * per-server figures of the report (fleet_report.h's fleet_run).
 *
 * A scenario is a fleet_timeline: its data, and hooks when something
 * happens during the run. The hooks see the running fleet and take
 * servers down and up through the functions below, so a mechanism that
 * several scenarios share (fleet_bounce.h) is written once. */
#ifndef APERTURE_INTEROP_FLEET_TIMELINE_H
#define APERTURE_INTEROP_FLEET_TIMELINE_H

#include <stddef.h>

#include "interop/fleet/fleet_dns.h"
#include "interop/fleet/fleet_modes.h"
#include "interop/fleet/fleet_report.h"
#include "interop/fleet/fleet_scenario.h"
#include "interop/fleet/fleet_server.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_TIMELINE_MAX_CLIENTS 64 /* over all services */
#define FLEET_TIMELINE_MAX_SLOTS (FLEET_MAX_SERVERS + 1)
#define FLEET_TIMELINE_MAX_ARGS 8     /* extra arguments per server */

typedef struct fleet_timeline_fleet fleet_timeline_fleet;

/* What happens during a run and what it means for the report. Every field
 * may be 0 or NULL. */
typedef struct fleet_timeline_hooks {
  size_t state_size; /* the hooks' own state per run, zeroed; 0: none */
  /* Extra arguments for server slot i (at most FLEET_TIMELINE_MAX_ARGS,
   * strings that outlive the run); returns how many. */
  int (*server_args)(const fleet_timeline_fleet *f, int i, const char **extra);
  /* Every 20 ms while the clients run, t seconds after they started.
   * Returns 0, or -1 with f->r->error set (the run fails). */
  int (*tick)(fleet_timeline_fleet *f, void *state, double t);
  /* Once every client is done, before anything stops (not after a
   * failed run). */
  void (*end)(fleet_timeline_fleet *f, void *state);
  /* Sets what happened to server i (slow, killed, removed, added). */
  void (*mark)(const fleet_timeline_fleet *f, int i, fleet_server_result *sv);
  /* Adds the scenario's own figures to f->r, the others being in. */
  void (*figures)(fleet_timeline_fleet *f);
  /* The load of client `c` (0-based over all services): may change its
   * calls/s (0: unpaced) and calls in flight from the scenario's. */
  void (*client_load)(const fleet_timeline_fleet *f, int c, double *rate,
                      long *concurrency);
} fleet_timeline_hooks;

/* A timeline scenario. */
typedef struct fleet_timeline {
  const char *name;
  int servers;       /* up from the start: slots 0 .. servers-1 */
  int spares;        /* slots after them, started by a hook */
  int n_services;
  int service_clients[FLEET_MAX_SERVICES];
  double rate;       /* calls/s per client; 0: unpaced */
  double duration_s; /* traffic time per mode */
  long concurrency;  /* calls in flight per client */
  long max_backoff_ms;       /* the clients' reconnect backoff cap; 0: their default */
  const char *default_modes; /* comma separated; filtered by availability */
  long min_aperture;         /* aperture's minAperture (12 = the library default) */
  long grace_ms;             /* aperture's removalGraceMs (0: not set) */
  const char *pick_metric;   /* aperture's pickMetric (NULL: not set) */
  const char *extra_config;  /* more aperture fields, e.g. ",\"x\":1" (NULL: none) */
  const char *label;         /* names the run's directory (NULL: the pickMetric) */
  /* 1: the servers have addresses of their own on one port (fleet_net.h)
   * and the clients find them through the fleet's DNS (fleet_dns.h), so
   * that membership changes reach them as real resolver updates; 0: a
   * fixed ipv4: list. */
  int dns;
  const fleet_timeline_hooks *hooks; /* NULL: nothing happens */
  const void *params;                /* the hooks' settings */
} fleet_timeline;

/* A server slot of a run, with what its earlier instances answered. */
typedef struct fleet_timeline_server {
  fleet_server s;          /* s.p NULL: not running */
  long calls_before;       /* calls answered by earlier (stopped) instances */
  long conns_peak_before;
  long conns_opened_before;
} fleet_timeline_server;

/* One mode's running fleet, as the hooks see it. */
struct fleet_timeline_fleet {
  const fleet_timeline *sc; /* the scenario with the flags applied */
  const fleet_args *a;
  const fleet_mode *mode;
  double time_scale;        /* --duration-s over the scenario's own (1 without
                               it): the hooks' times scale by it */
  char dir[4200];           /* this mode's logs and stats */
  int n_servers;            /* sc->servers */
  int n_slots;              /* servers and spares */
  fleet_timeline_server servers[FLEET_TIMELINE_MAX_SLOTS];
  int port;                 /* the servers' one port (sc->dns), else 0 */
  fleet_dns *dns;           /* sc->dns: the answer the clients resolve */
  int disturbed;            /* the server whose failed calls the report counts
                               apart (failed_on_disturbed); -1: none */
  fleet_run *r;             /* the run's figures, filled as it goes */
  void *state;              /* the hooks' state */
};

/* Runs scenario sc (the flags in a applied) for mode m into r. Returns 0,
 * or -1 with r->error set (r->complete 0) or on a NULL argument. One run
 * at a time: the fleet lives in static storage. */
int io_fleet_timeline_run_mode(const fleet_timeline *sc, const fleet_args *a,
                               const fleet_mode *m, fleet_run *r);

/* --- for the hooks --- */

/* Starts server slot i on `port` (0: ephemeral), stats in
 * s<i><suffix>.json, and waits until it listens. Returns 0, or -1. */
int io_fleet_timeline_start_server(fleet_timeline_fleet *f, int i, int port,
                                   const char *suffix);

/* Takes server slot i down, keeping what it answered for the report:
 * kill 1 sends SIGKILL (its last stats snapshot, at most 50 ms old,
 * counts), kill 0 stops it gracefully (SIGTERM: GOAWAY; its final stats
 * count). Nothing when it does not run. */
void io_fleet_timeline_down(fleet_timeline_fleet *f, int i, int kill);

/* Calls server slot i's current instance has answered (its stats file);
 * 0 when unreadable or i is out of range. */
long io_fleet_timeline_calls(const fleet_timeline_fleet *f, int i);

/* Makes the DNS answer slots [from, to) except `except` (-1: none).
 * Returns 0, or -1 without DNS or on a bad range. */
int io_fleet_timeline_publish(fleet_timeline_fleet *f, int from, int to, int except);

#ifdef __cplusplus
}
#endif

#endif
