/* One interop server process of a fleet: started on a host and port,
 * writing its stats file (calls and channelz connection counts) every 50 ms
 * and once more at exit. */
#ifndef APERTURE_INTEROP_FLEET_SERVER_H
#define APERTURE_INTEROP_FLEET_SERVER_H

#include "interop/common/proc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fleet_server {
  proc *p;         /* NULL when not running */
  char host[32];   /* from io_fleet_net_server_host (fleet_net.h), which
                      also decides where the process runs */
  int port;
  char stats[4200]; /* its stats file */
} fleet_server;

/* Starts `bin` as server `name` (also its hostname and server id) on
 * s->host and `port` (0: ephemeral), with stats in
 * <dir>/<name><stats_suffix>.json and stderr in <dir>/<name>.log, plus
 * `extra` arguments (NULL terminated; NULL for none). Waits up to 10 s for
 * its `listening` line and sets s->p, s->port and s->stats. Returns 0, or
 * -1 when it did not start (s->p may then be set: stop it). */
int io_fleet_server_start(const char *bin, const char *dir, const char *name, int port,
                       const char *stats_suffix, const char *const *extra, fleet_server *s);

/* The two halves of fleet_server_start, so that a fleet's servers start
 * side by side: spawn starts the process (returns 0, or -1 when it could
 * not be started); await waits up to 10 s for its `listening` line and
 * sets s->port (returns 0, or -1: stop s->p). */
int io_fleet_server_spawn(const char *bin, const char *dir, const char *name, int port,
                       const char *stats_suffix, const char *const *extra, fleet_server *s);
int io_fleet_server_await(fleet_server *s);

/* Cumulative connections opened and connections open now, from a stats
 * file (at most 50 ms old while the server runs). Returns 0, or -1 with
 * both set to 0 when the file is missing or unreadable. */
int io_fleet_server_counts(const char *stats_path, long *opened, long *current);

/* Connections a server opened or closed between two readings of
 * io_fleet_server_counts, a (earlier) then b: the new ones plus the closed
 * ones (open at a, plus new, minus open at b; never below 0). */
long io_fleet_server_moved(long opened_a, long current_a, long opened_b, long current_b);

/* 1 when each server i of servers[0..n) has exactly held[i] connections
 * open (a stopped one, p == NULL, counts as none); 0 otherwise, when a
 * running server's stats file is unreadable, or on NULL arguments. */
int io_fleet_servers_hold(const fleet_server *servers, int n, const long *held);

#ifdef __cplusplus
}
#endif

#endif
