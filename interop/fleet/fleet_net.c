#define _GNU_SOURCE
#include "interop/fleet/fleet_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/* --- loopback: the runner's own namespace --- */

static int loopback_server_host(int slot, int own_address, char *out, size_t len) {
  if (slot < 0 || slot >= 245 || out == NULL) return -1;
  if (own_address) snprintf(out, len, "127.0.0.%d", 10 + slot);
  else snprintf(out, len, "127.0.0.1");
  return 0;
}

static int loopback_client_host(int index, char *out, size_t len) {
  if (index < 0 || index >= 254 || out == NULL) return -1;
  snprintf(out, len, "127.0.1.%d", index + 1);
  return 0;
}

static proc *loopback_start(const char *host, char *const argv[], const char *log) {
  (void)host; /* every address is local */
  return io_proc_start(argv, log);
}

const fleet_net_ops io_fleet_net_loopback = {
    "loopback", loopback_server_host, loopback_client_host, loopback_start,
    &io_fleet_dns_dnsmasq_ops, NULL, NULL, 0,
};

/* --- the runner's network --- */

static const fleet_net_ops *g_net = &io_fleet_net_loopback;

/* The hosts used: servers [0, MAX_SLOTS), clients after them. A client's
 * pid is its last process's (0: none yet), so a free index is found. */
#define MAX_SLOTS 256
#define MAX_CLIENT_HOSTS 1024
typedef struct host_entry {
  int named;   /* its address was asked for */
  int used;    /* a process started there */
  char address[FLEET_NET_HOST_LEN];
  pid_t pid; /* the last process started there */
} host_entry;
static host_entry g_servers[MAX_SLOTS];
static host_entry g_clients[MAX_CLIENT_HOSTS];

int io_fleet_net_use(const fleet_net_ops *ops) {
  if (ops == NULL) ops = &io_fleet_net_loopback;
  if (ops->name == NULL || ops->server_host == NULL || ops->client_host == NULL ||
      ops->start == NULL || ops->dns == NULL)
    return -1;
  g_net = ops;
  return 0;
}

const char *io_fleet_net_name(void) { return g_net->name; }

int io_fleet_net_server_host(int slot, int own_address, char *out, size_t len) {
  int rc = g_net->server_host(slot, own_address, out, len);
  if (rc == 0 && slot < MAX_SLOTS) {
    g_servers[slot].named = 1;
    snprintf(g_servers[slot].address, sizeof(g_servers[slot].address), "%s", out);
  }
  return rc;
}

int io_fleet_net_client_host(int index, char *out, size_t len) {
  int rc = g_net->client_host(index, out, len);
  if (rc == 0 && index < MAX_CLIENT_HOSTS) {
    g_clients[index].named = 1;
    snprintf(g_clients[index].address, sizeof(g_clients[index].address), "%s", out);
  }
  return rc;
}

static int running(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH); }

/* The entry of `host` (a server's or client's address), or NULL; where
 * several slots share an address (loopback servers on 127.0.0.1), the
 * first with no running process. */
static host_entry *entry_of(const char *host) {
  host_entry *busy = NULL;
  for (int i = 0; i < MAX_SLOTS; i++) {
    host_entry *e = &g_servers[i];
    if (!e->named || strcmp(e->address, host) != 0) continue;
    if (!e->used || !running(e->pid)) return e;
    if (busy == NULL) busy = e;
  }
  if (busy != NULL) return busy;
  for (int i = 0; i < MAX_CLIENT_HOSTS; i++) {
    if (g_clients[i].named && strcmp(g_clients[i].address, host) == 0) return &g_clients[i];
  }
  return NULL;
}

proc *io_fleet_net_start(const char *host, char *const argv[], const char *log) {
  char picked[FLEET_NET_HOST_LEN];
  if (host == NULL) { /* a client no one names: the lowest free index */
    int k = 0;
    while (k < MAX_CLIENT_HOSTS && g_clients[k].used && running(g_clients[k].pid)) k++;
    if (k == MAX_CLIENT_HOSTS || io_fleet_net_client_host(k, picked, sizeof(picked)) != 0) {
      fprintf(stderr, "fleet: no free client address on the %s network\n", g_net->name);
      return NULL;
    }
    host = picked;
  }
  proc *p = g_net->start(host, argv, log);
  host_entry *e = p ? entry_of(host) : NULL;
  if (e != NULL) {
    e->used = 1;
    e->pid = io_proc_pid(p);
  }
  return p;
}

const fleet_dns_ops *io_fleet_net_dns(void) { return g_net->dns; }

static int dial_here(const char *ip, int port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  if (ip == NULL || port <= 0 || port > 65535 || inet_pton(AF_INET, ip, &a.sin_addr) != 1) return -1;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int io_fleet_net_dial(const proc *p, const char *ip, int port) {
  pid_t pid = io_proc_pid(p);
  if (g_net->dial != NULL && pid > 0) {
    for (int i = 0; i < MAX_CLIENT_HOSTS; i++) {
      if (g_clients[i].used && g_clients[i].pid == pid) return g_net->dial(g_clients[i].address, ip, port);
    }
    for (int i = 0; i < MAX_SLOTS; i++) {
      if (g_servers[i].used && g_servers[i].pid == pid) return g_net->dial(g_servers[i].address, ip, port);
    }
  }
  return dial_here(ip, port);
}

int io_fleet_net_own_interfaces(void) { return g_net->own_interfaces; }

int io_fleet_net_direct(void) { return g_net->dial == NULL; }

size_t io_fleet_net_hosts(fleet_net_host *out, size_t max) {
  size_t n = 0;
  for (int pass = 0; pass < 2; pass++) {
    const host_entry *t = pass ? g_clients : g_servers;
    int count = pass ? MAX_CLIENT_HOSTS : MAX_SLOTS;
    for (int i = 0; i < count; i++) {
      if (!t[i].used) continue;
      if (out != NULL && n < max) {
        snprintf(out[n].name, sizeof(out[n].name), "%c%d", pass ? 'c' : 's', i);
        snprintf(out[n].address, sizeof(out[n].address), "%s", t[i].address);
      }
      n++;
    }
  }
  return n;
}

void io_fleet_net_close(void) {
  if (g_net->close != NULL) g_net->close();
}
