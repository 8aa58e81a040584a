/* The gray scenario's faults (fleet_gray.h): what happens to one server of
 * a running fleet while its clients keep calling, and how it heals. Each
 * fault is a row of a table: begin at the fault's start, end when it is
 * over, and cleanup, which every exit path of a run calls (also after a
 * failed begin or end), so that no server is left stopped or slowed and no
 * stand-in is left listening. Faults that need network namespaces of
 * their own (netns_only) are skipped on the loopback network. */
#ifndef APERTURE_INTEROP_FLEET_GRAY_FAULTS_H
#define APERTURE_INTEROP_FLEET_GRAY_FAULTS_H

#include <stddef.h>

#include "interop/common/proc.h"
#include "interop/fleet/fleet_gray_calls.h"
#include "interop/fleet/fleet_gray_netns.h"
#include "interop/fleet/fleet_server.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRAY_SERVERS 4
#define GRAY_CLIENTS 4
/* Every server's modelled service time, and the faulty one's extra
 * latency while `slow` (GRAY_SLOW_FACTOR times the service time in all). */
#define GRAY_BASE_LATENCY_MS 2
#define GRAY_SLOW_FACTOR 20
#define GRAY_BASE_LATENCY_TEXT "2"
#define GRAY_SLOW_EXTRA_TEXT "38" /* 2 * (20 - 1) */

/* One run's fleet, as the faults see it. */
typedef struct gray_fleet {
  const char *server_bin, *no_answer_bin;
  char dir[4200];                    /* this run's logs, stats and call logs */
  fleet_server servers[GRAY_SERVERS];
  int faulty;                        /* the slot the fault is about */
  proc *stand_in;                    /* no-answer: the listener on its port */
  int resumed;                       /* freeze: 1 once the server was seen running
                                        again after SIGCONT; -1: not checked */
  int client_pids[GRAY_CLIENTS];     /* the clients' processes */
  int n_clients;                     /* clients running: 1..GRAY_CLIENTS */
  /* link-down: the faulty server's namespace and device, once found */
  char link_ns[GRAY_NETNS_NAME_LEN], link_dev[32];
  /* partition: the blackhole routes added (namespace, address) */
  int n_routes;
  char route_ns[GRAY_CLIENTS * GRAY_SERVERS][GRAY_NETNS_NAME_LEN];
  char route_to[GRAY_CLIENTS * GRAY_SERVERS][32];
  char error[200];                   /* why begin or end failed */
} gray_fleet;

typedef struct gray_fault {
  const char *name;  /* the row's "fault" */
  int netns_only;    /* 1: needs --network netns; skipped on loopback */
  /* Whom it hits (gray_windows): 0, 0 for the faulty slot as every client
   * sees it; a partition names its servers and clients. */
  unsigned faulty_mask, client_mask;
  /* Each returns 0, or -1 with g->error set. */
  int (*begin)(gray_fleet *g);
  int (*end)(gray_fleet *g);
  void (*cleanup)(gray_fleet *g); /* idempotent */
} gray_fault;

/* The faults, in report order: freeze, link-down, partition, no-answer,
 * slow; *n set to how many. link-down takes the faulty server's device
 * down in its namespace; partition adds blackhole routes in the
 * namespaces of clients 0 and 1 to servers 0 and 1 (the faulty slot is 1);
 * both find the namespaces from the processes (fleet_gray_netns.h). */
const gray_fault *io_fleet_gray_faults(int *n);

/* The fault named by `len` bytes at `name`; NULL when there is none. */
const gray_fault *io_fleet_gray_fault_find(const char *name, size_t len);

/* The extra arguments (NULL terminated, static strings) of server slot i
 * for every fault: the modelled service time, and on the faulty slot the
 * latency that `slow` switches on. */
void io_fleet_gray_server_args(const gray_fleet *g, int i, const char **extra, size_t max);

/* The state of process `pid` from /proc/PID/stat ('R', 'S', 'T', ...), or
 * 0 when there is no such process. */
char io_fleet_gray_proc_state(int pid);

#ifdef __cplusplus
}
#endif

#endif
