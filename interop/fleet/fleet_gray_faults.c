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

/* --- link-down and partition: need the hosts' network namespaces ---
 *
 * link-down is `ip -n <ns of the faulty server> link set eth0 down`, then
 * up; partition adds `ip -n <ns of client c> route add blackhole
 * <server address>/32` for half the clients to half the servers, then
 * deletes them. Both need the namespace in which a host runs, which
 * fleet_net_ops does not name yet (TODO: an operation of the network that
 * runs `ip` in a host's namespace; the netns network knows it). Until then
 * they fail on any network but loopback, where they are skipped. */
static int needs_namespaces(gray_fleet *g) {
  snprintf(g->error, sizeof(g->error),
           "network '%s' names no namespace per host (fleet_net_ops has no operation for it)",
           io_fleet_net_name());
  return -1;
}
static void nothing(gray_fleet *g) { (void)g; }

static const gray_fault kFaults[] = {
    {"freeze", 0, freeze_begin, freeze_end, freeze_cleanup},
    {"link-down", 1, needs_namespaces, needs_namespaces, nothing},
    {"partition", 1, needs_namespaces, needs_namespaces, nothing},
    {"no-answer", 0, no_answer_begin, no_answer_end, no_answer_cleanup},
    {"slow", 0, slow_begin, slow_end, slow_cleanup},
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
