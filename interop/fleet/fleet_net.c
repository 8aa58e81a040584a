#include "interop/fleet/fleet_net.h"

#include <stdio.h>

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
    &io_fleet_dns_stub_ops, NULL,
};

/* --- the runner's network --- */

static const fleet_net_ops *g_net = &io_fleet_net_loopback;

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
  return g_net->server_host(slot, own_address, out, len);
}

int io_fleet_net_client_host(int index, char *out, size_t len) {
  return g_net->client_host(index, out, len);
}

proc *io_fleet_net_start(const char *host, char *const argv[], const char *log) {
  return g_net->start(host, argv, log);
}

const fleet_dns_ops *io_fleet_net_dns(void) { return g_net->dns; }

void io_fleet_net_close(void) {
  if (g_net->close != NULL) g_net->close();
}
