#define _GNU_SOURCE
#include "interop/fleet/fleet_gray_faults.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_net.h"

char io_fleet_gray_proc_state(int pid) {
  char path[64], buf[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *paren = strrchr(buf, ')'); /* the command may hold spaces */
  return paren != NULL && paren[1] == ' ' ? paren[2] : 0;
}

void io_fleet_gray_server_args(const gray_fleet *g, int i, const char **extra, size_t max) {
  size_t n = 0;
  if (max < 5) {
    if (max > 0) extra[0] = NULL;
    return;
  }
  extra[n++] = "--extra-latency-ms";
  extra[n++] = GRAY_BASE_LATENCY_TEXT;
  if (i == g->faulty) { /* `slow` switches this on with SIGUSR1 */
    extra[n++] = "--slow-latency-ms";
    extra[n++] = GRAY_SLOW_EXTRA_TEXT;
  }
  extra[n] = NULL;
}

static int signal_faulty(gray_fleet *g, int sig, const char *what) {
  proc *p = g->servers[g->faulty].p;
  if (p == NULL || io_proc_signal(p, sig) != 0) {
    snprintf(g->error, sizeof(g->error), "cannot %s server s%d", what, g->faulty);
    return -1;
  }
  return 0;
}

/* --- freeze: SIGSTOP, then SIGCONT --- */

static int freeze_begin(gray_fleet *g) { return signal_faulty(g, SIGSTOP, "stop (SIGSTOP)"); }

static int freeze_end(gray_fleet *g) {
  if (signal_faulty(g, SIGCONT, "resume (SIGCONT)") != 0) return -1;
  int pid = io_proc_pid(g->servers[g->faulty].p);
  g->resumed = 0;
  for (int i = 0; i < 50 && !g->resumed; i++) { /* up to 500 ms */
    char st = io_fleet_gray_proc_state(pid);
    if (st != 0 && st != 'T' && st != 't') g->resumed = 1;
    else io_fleet_sleep_ms(10);
  }
  if (!g->resumed) {
    snprintf(g->error, sizeof(g->error), "server s%d (pid %d) did not resume after SIGCONT",
             g->faulty, pid);
    return -1;
  }
  return 0;
}

static void freeze_cleanup(gray_fleet *g) {
  proc *p = g->servers[g->faulty].p;
  if (p != NULL) io_proc_signal(p, SIGCONT); /* never leave it stopped */
}

/* --- no-answer: a listener that never speaks HTTP/2 takes the port --- */

/* The stand-in shares the port (SO_REUSEPORT) while the server still runs,
 * so no connection attempt is refused in between; the server then stops
 * gracefully (GOAWAY, its calls finish) and the clients' reconnections all
 * reach the stand-in. */
static int no_answer_begin(gray_fleet *g) {
  fleet_server *s = &g->servers[g->faulty];
  char port[16], log[4300];
  snprintf(port, sizeof(port), "%d", s->port);
  snprintf(log, sizeof(log), "%s/no-answer.log", g->dir);
  char *argv[] = {(char *)g->no_answer_bin, "--host", s->host, "--port", port, NULL};
  g->stand_in = io_fleet_net_start(s->host, argv, log);
  char line[128];
  if (g->stand_in == NULL || io_proc_wait_line(g->stand_in, "listening ", 5000, line, sizeof(line)) != 0) {
    snprintf(g->error, sizeof(g->error), "the no-answer listener did not start on %s:%d", s->host,
             s->port);
    return -1;
  }
  io_proc_stop(s->p, 5000);
  s->p = NULL;
  return 0;
}

/* Heals: the server starts again on its port, then the stand-in stops; its
 * connections close and the clients reconnect to the server. */
static int no_answer_end(gray_fleet *g) {
  fleet_server *s = &g->servers[g->faulty];
  const char *extra[8];
  io_fleet_gray_server_args(g, g->faulty, extra, 8);
  char name[16];
  snprintf(name, sizeof(name), "s%d", g->faulty);
  if (io_fleet_server_start(g->server_bin, g->dir, name, s->port, ".healed", extra, s) != 0) {
    snprintf(g->error, sizeof(g->error), "server s%d did not start again on port %d", g->faulty,
             s->port);
    return -1;
  }
  io_proc_stop(g->stand_in, 2000);
  g->stand_in = NULL;
  return 0;
}

static void no_answer_cleanup(gray_fleet *g) {
  if (g->stand_in != NULL) io_proc_stop(g->stand_in, 2000);
  g->stand_in = NULL;
}

/* --- slow: the server's --slow-latency-ms switched on and off --- */

static int slow_begin(gray_fleet *g) { return signal_faulty(g, SIGUSR1, "slow (SIGUSR1)"); }
static int slow_end(gray_fleet *g) { return signal_faulty(g, SIGUSR2, "unslow (SIGUSR2)"); }
static void slow_cleanup(gray_fleet *g) {
  proc *p = g->servers[g->faulty].p;
  if (p != NULL) io_proc_signal(p, SIGUSR2);
}

/* --- link-down and partition: in the hosts' network namespaces --- */

static int link_begin(gray_fleet *g) {
  fleet_server *s = &g->servers[g->faulty];
  if (io_fleet_gray_netns_of(io_proc_pid(s->p), g->link_ns, sizeof(g->link_ns), g->error,
                             sizeof(g->error)) != 0 ||
      io_fleet_gray_dev_of(g->link_ns, s->host, g->link_dev, sizeof(g->link_dev), g->error,
                           sizeof(g->error)) != 0) {
    g->link_ns[0] = '\0';
    return -1;
  }
  return io_fleet_gray_link(g->link_ns, g->link_dev, 0, g->error, sizeof(g->error));
}

static int link_end(gray_fleet *g) {
  if (g->link_ns[0] == '\0') return 0;
  int rc = io_fleet_gray_link(g->link_ns, g->link_dev, 1, g->error, sizeof(g->error));
  if (rc == 0) g->link_ns[0] = '\0';
  return rc;
}

static void link_cleanup(gray_fleet *g) {
  char err[200];
  if (g->link_ns[0] != '\0') (void)io_fleet_gray_link(g->link_ns, g->link_dev, 1, err, sizeof(err));
  g->link_ns[0] = '\0';
}

#define PARTITION_SERVERS 0x3u /* s0, s1 */
#define PARTITION_CLIENTS 0x3u /* clients 0, 1 */

static int partition_begin(gray_fleet *g) {
  for (int c = 0; c < g->n_clients && c < GRAY_CLIENTS; c++) {
    if (!((PARTITION_CLIENTS >> c) & 1u)) continue;
    char ns[GRAY_NETNS_NAME_LEN];
    if (io_fleet_gray_netns_of(g->client_pids[c], ns, sizeof(ns), g->error, sizeof(g->error)) != 0)
      return -1;
    for (int i = 0; i < GRAY_SERVERS; i++) {
      if (!((PARTITION_SERVERS >> i) & 1u)) continue;
      if (io_fleet_gray_blackhole(ns, g->servers[i].host, 1, g->error, sizeof(g->error)) != 0)
        return -1;
      snprintf(g->route_ns[g->n_routes], sizeof(g->route_ns[0]), "%s", ns);
      snprintf(g->route_to[g->n_routes], sizeof(g->route_to[0]), "%s", g->servers[i].host);
      g->n_routes++;
    }
  }
  return 0;
}

static int partition_end(gray_fleet *g) {
  int rc = 0;
  while (g->n_routes > 0) {
    int k = --g->n_routes;
    if (io_fleet_gray_blackhole(g->route_ns[k], g->route_to[k], 0, g->error, sizeof(g->error)) != 0)
      rc = -1;
  }
  return rc;
}

static void partition_cleanup(gray_fleet *g) {
  char keep[200];
  snprintf(keep, sizeof(keep), "%s", g->error);
  (void)partition_end(g);
  snprintf(g->error, sizeof(g->error), "%s", keep);
}

static const gray_fault kFaults[] = {
    {"freeze", 0, 0, 0, freeze_begin, freeze_end, freeze_cleanup},
    {"link-down", 1, 0, 0, link_begin, link_end, link_cleanup},
    {"partition", 1, PARTITION_SERVERS, PARTITION_CLIENTS, partition_begin, partition_end,
     partition_cleanup},
    {"no-answer", 0, 0, 0, no_answer_begin, no_answer_end, no_answer_cleanup},
    {"slow", 0, 0, 0, slow_begin, slow_end, slow_cleanup},
};
#define N_FAULTS ((int)(sizeof(kFaults) / sizeof(kFaults[0])))

const gray_fault *io_fleet_gray_faults(int *n) {
  if (n) *n = N_FAULTS;
  return kFaults;
}

const gray_fault *io_fleet_gray_fault_find(const char *name, size_t len) {
  if (name == NULL) return NULL;
  for (int i = 0; i < N_FAULTS; i++) {
    if (strlen(kFaults[i].name) == len && strncmp(kFaults[i].name, name, len) == 0) return &kFaults[i];
  }
  return NULL;
}
