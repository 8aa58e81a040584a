#define _GNU_SOURCE
#include "interop/fleet/fleet_netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "interop/fleet/fleet_dnsmasq.h"

#define MAX_SERVER_NS 245
#define MAX_CLIENT_NS 2540
#define MAX_NS (1 + MAX_SERVER_NS + MAX_CLIENT_NS)
#define BRIDGE_ADDR "198.18.0.1"
/* A fixed (locally administered) MAC: a bridge without one takes the
 * lowest of its ports' and changes it as ports join, and a host whose ARP
 * entry for BRIDGE_ADDR still names the old one has its packets to the
 * bridge's own address (dnsmasq) dropped until the entry expires. */
#define BRIDGE_MAC "02:00:c6:12:00:01"

/* Every namespace this run made or began to make, by full path, so that
 * close (async-signal-safe) needs no formatting. Slot 0 is the bridge's,
 * 1 + k server k's, 1 + 245 + i client i's. */
typedef struct ns_entry {
  char name[32];
  char path[64]; /* /run/netns/<name> */
  volatile sig_atomic_t made;
} ns_entry;
static ns_entry g_ns[MAX_NS];
static char g_prefix[24];
static char g_ip[64];
static volatile sig_atomic_t g_open, g_closed;
static int g_dns_seq;

const char *io_fleet_netns_prefix(void) { return g_prefix; }

static int find_ip(void) {
  static const char *const kPaths[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"};
  for (size_t i = 0; i < sizeof(kPaths) / sizeof(kPaths[0]); i++) {
    if (access(kPaths[i], X_OK) == 0) {
      snprintf(g_ip, sizeof(g_ip), "%s", kPaths[i]);
      return 0;
    }
  }
  return -1;
}

/* Runs `ip ARGS...` (NULL terminated), with `input` on its stdin when not
 * NULL (for -batch -); its stdout discarded, stderr inherited. Returns its
 * exit status, or -1. */
static int run_ip(const char *input, const char *const *args) {
  const char *argv[16];
  int n = 0;
  argv[n++] = g_ip;
  for (int i = 0; args[i] != NULL && n < 15; i++) argv[n++] = args[i];
  argv[n] = NULL;
  int in[2] = {-1, -1};
  if (input != NULL && pipe2(in, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    if (input != NULL) {
      close(in[0]);
      close(in[1]);
    }
    return -1;
  }
  if (pid == 0) {
    if (input != NULL) dup2(in[0], STDIN_FILENO);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    execv(g_ip, (char *const *)argv);
    _exit(127);
  }
  if (input != NULL) {
    close(in[0]);
    size_t left = strlen(input);
    const char *at = input;
    while (left > 0) {
      ssize_t w = write(in[1], at, left);
      if (w <= 0) break;
      at += w;
      left -= (size_t)w;
    }
    close(in[1]);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Registers namespace slot `i` as `suffix` and adds it (ip netns add). */
static int add_ns(int i, const char *suffix) {
  ns_entry *e = &g_ns[i];
  char name[sizeof(e->name)];
  snprintf(name, sizeof(name), "%s%s", g_prefix, suffix);
  memcpy(e->name, name, sizeof(name));
  snprintf(e->path, sizeof(e->path), "/run/netns/%s", name);
  e->made = 1; /* before it exists: a signal now still removes it */
  const char *args[] = {"netns", "add", e->name, NULL};
  return run_ip(NULL, args) == 0 ? 0 : -1;
}

/* The namespace slot and veth port name of a host address; -1 if none. */
static int slot_of(const char *host, char *port, size_t len) {
  unsigned a, b, c, d;
  char extra;
  if (host == NULL || sscanf(host, "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) != 4 || a != 198 ||
      b != 18 || c > 255 || d > 255)
    return -1;
  if (c == 0) {
    if (d < 10 || d - 10 >= MAX_SERVER_NS) return -1;
    snprintf(port, len, "s%u", d - 10);
    return 1 + (int)(d - 10);
  }
  if (d < 1 || d > 254) return -1;
  unsigned idx = (c - 1) * 254 + (d - 1);
  if (idx >= MAX_CLIENT_NS) return -1;
  snprintf(port, len, "c%u", idx);
  return 1 + MAX_SERVER_NS + (int)idx;
}

/* Makes host's namespace unless it exists: lo up, eth0 with the address,
 * its peer on the bridge. Returns the slot, or -1 (message on stderr). */
static int ensure_host(const char *host) {
  char port[16];
  int i = slot_of(host, port, sizeof(port));
  if (i < 0 || !g_open) {
    fprintf(stderr, "fleet: netns: %s is not a host of this network\n", host ? host : "(null)");
    return -1;
  }
  if (g_ns[i].made) return i;
  if (add_ns(i, port) != 0) {
    fprintf(stderr, "fleet: netns: ip netns add %s failed\n", g_ns[i].name);
    return -1;
  }
  char batch[512];
  snprintf(batch, sizeof(batch),
           "link set lo up\n"
           "link add eth0 type veth peer name %s netns %s\n"
           "addr add %s/15 dev eth0\n"
           "link set eth0 up\n",
           port, g_ns[0].name, host);
  const char *in_host[] = {"-n", g_ns[i].name, "-batch", "-", NULL};
  char bridge[256];
  snprintf(bridge, sizeof(bridge), "link set %s master br0\nlink set %s up\n", port, port);
  const char *in_bridge[] = {"-n", g_ns[0].name, "-batch", "-", NULL};
  if (run_ip(batch, in_host) != 0 || run_ip(bridge, in_bridge) != 0) {
    fprintf(stderr, "fleet: netns: cannot wire %s (%s) to the bridge\n", g_ns[i].name, host);
    return -1;
  }
  return i;
}

int io_fleet_netns_open(char *err, size_t len) {
  if (g_open) return 0;
  if (geteuid() != 0) {
    snprintf(err, len, "--network netns needs root (it creates network namespaces)");
    return -1;
  }
  if (find_ip() != 0) {
    snprintf(err, len, "--network netns needs the ip command (Debian's iproute2)");
    return -1;
  }
  /* the pid, and a few bits of the clock: pids repeat across pid
   * namespaces (sandboxes) */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  snprintf(g_prefix, sizeof(g_prefix), "ap%d-%04lx-", (int)getpid(),
           (unsigned long)((now.tv_nsec / 1000) & 0xffff));
  g_open = 1;
  if (add_ns(0, "br") != 0) {
    snprintf(err, len, "--network netns: ip netns add %sbr failed (no network namespaces here?)",
             g_prefix);
    return -1;
  }
  const char *args[] = {"-n", g_ns[0].name, "-batch", "-", NULL};
  if (run_ip("link set lo up\n"
             "link add br0 address " BRIDGE_MAC " type bridge\n"
             "addr add " BRIDGE_ADDR "/15 dev br0\n"
             "link set br0 up\n",
             args) != 0) {
    snprintf(err, len, "--network netns: cannot make the bridge in %s (no bridge support?)",
             g_ns[0].name);
    return -1;
  }
  return 0;
}

/* --- the operations --- */

static int netns_server_host(int slot, int own_address, char *out, size_t len) {
  (void)own_address; /* every server has an address of its own */
  if (slot < 0 || slot >= MAX_SERVER_NS || out == NULL) return -1;
  snprintf(out, len, "198.18.0.%d", 10 + slot);
  return 0;
}

static int netns_client_host(int index, char *out, size_t len) {
  if (index < 0 || index >= MAX_CLIENT_NS || out == NULL) return -1;
  snprintf(out, len, "198.18.%d.%d", 1 + index / 254, 1 + index % 254);
  return 0;
}

/* argv run in namespace slot i: ip netns exec NAME argv... */
static proc *start_in(int i, char *const argv[], const char *log) {
  char *full[72];
  int n = 0;
  full[n++] = g_ip;
  full[n++] = "netns";
  full[n++] = "exec";
  full[n++] = g_ns[i].name;
  for (int k = 0; argv[k] != NULL; k++) {
    if (n >= 71) return NULL;
    full[n++] = argv[k];
  }
  full[n] = NULL;
  return io_proc_start(full, log);
}

static proc *netns_start(const char *host, char *const argv[], const char *log) {
  int i = ensure_host(host);
  return i < 0 ? NULL : start_in(i, argv, log);
}

typedef struct dial_job {
  const char *path;
  struct sockaddr_in addr;
  int fd;
} dial_job;

/* In a thread of its own, so that only it changes namespace: the socket
 * it makes stays in the namespace it was made in. */
static void *dial_thread(void *arg) {
  dial_job *j = arg;
  int ns = open(j->path, O_RDONLY | O_CLOEXEC);
  if (ns < 0) return NULL;
  if (setns(ns, CLONE_NEWNET) == 0) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&j->addr, sizeof(j->addr)) == 0) {
      j->fd = fd;
    } else if (fd >= 0) {
      close(fd);
    }
  }
  close(ns);
  return NULL;
}

static int netns_dial(const char *host, const char *ip, int port) {
  char name[16];
  int i = slot_of(host, name, sizeof(name));
  if (i < 0 || !g_ns[i].made || ip == NULL || port <= 0 || port > 65535) return -1;
  dial_job j;
  memset(&j, 0, sizeof(j));
  j.path = g_ns[i].path;
  j.fd = -1;
  j.addr.sin_family = AF_INET;
  j.addr.sin_port = htons((unsigned short)port);
  if (inet_pton(AF_INET, ip, &j.addr.sin_addr) != 1) return -1;
  pthread_t t;
  if (pthread_create(&t, NULL, dial_thread, &j) != 0) return -1;
  pthread_join(t, NULL);
  return j.fd;
}

static void netns_close(void) {
  if (!g_open || g_closed) return;
  g_closed = 1;
  for (int i = MAX_NS - 1; i >= 0; i--) { /* the bridge last */
    if (!g_ns[i].made) continue;
    umount2(g_ns[i].path, MNT_DETACH);
    unlink(g_ns[i].path);
    g_ns[i].made = 0;
  }
}

/* --- dnsmasq in the bridge namespace --- */

static proc *bridge_launch(char *const argv[], const char *log) { return start_in(0, argv, log); }

static void *netns_dns_start(const char *name, char *server, size_t len) {
  int port = 5300 + __atomic_fetch_add(&g_dns_seq, 1, __ATOMIC_RELAXED) % 1000;
  return io_fleet_dnsmasq_start(name, BRIDGE_ADDR, port, bridge_launch, server, len);
}

static int netns_dns_set(void *impl, const char *const *hosts, size_t n) {
  return io_fleet_dnsmasq_set(impl, hosts, n);
}

static long netns_dns_queries(const void *impl) { return io_fleet_dnsmasq_queries(impl); }

static void netns_dns_stop(void *impl) { io_fleet_dnsmasq_stop(impl); }

static const fleet_dns_ops kNetnsDns = {"dnsmasq", netns_dns_start, netns_dns_set,
                                        netns_dns_queries, netns_dns_stop};

const fleet_net_ops io_fleet_net_netns = {
    "netns", netns_server_host, netns_client_host, netns_start, &kNetnsDns, netns_close,
    netns_dial, 1,
};
