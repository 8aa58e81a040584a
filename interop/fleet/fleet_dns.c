#include "interop/fleet/fleet_dns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/fleet/dns_stub.h"
#include "interop/fleet/fleet_dnsmasq.h"
#include "interop/fleet/fleet_net.h"

struct fleet_dns {
  const fleet_dns_ops *ops;
  void *impl;
  char name[256];
  char server[64]; /* HOST:PORT */
};

/* --- the runner's own responder --- */

static void *stub_start(const char *name, char *server, size_t len) {
  int port = 0;
  dns_stub *d = io_dns_stub_start(name, &port);
  if (d != NULL) snprintf(server, len, "127.0.0.1:%d", port);
  return d;
}

static int stub_set(void *impl, const char *const *hosts, size_t n) {
  return io_dns_stub_set(impl, hosts, n);
}

static long stub_queries(const void *impl) { return io_dns_stub_queries(impl); }

static void stub_stop(void *impl) { io_dns_stub_stop(impl); }

const fleet_dns_ops io_fleet_dns_stub_ops = {"stub", stub_start, stub_set, stub_queries, stub_stop};

/* --- dnsmasq on 127.0.0.1 --- */

static void *dnsmasq_start(const char *name, char *server, size_t len) {
  return io_fleet_dnsmasq_start(name, "127.0.0.1", 0, NULL, server, len);
}

static int dnsmasq_set(void *impl, const char *const *hosts, size_t n) {
  return io_fleet_dnsmasq_set(impl, hosts, n);
}

static long dnsmasq_queries(const void *impl) { return io_fleet_dnsmasq_queries(impl); }

static void dnsmasq_stop(void *impl) { io_fleet_dnsmasq_stop(impl); }

const fleet_dns_ops io_fleet_dns_dnsmasq_ops = {"dnsmasq", dnsmasq_start, dnsmasq_set,
                                                dnsmasq_queries, dnsmasq_stop};

/* --- what the runner used --- */

static const char *g_used_kind;
static long g_used_queries;

const char *io_fleet_dns_used(long *queries) {
  if (queries) *queries = g_used_queries;
  return g_used_kind;
}

/* --- the fleet's DNS, whichever server answers --- */

fleet_dns *io_fleet_dns_start(const char *name) {
  const fleet_dns_ops *ops = io_fleet_net_dns();
  if (name == NULL || name[0] == '\0' || strlen(name) > 200 || ops == NULL) return NULL;
  fleet_dns *d = calloc(1, sizeof(*d));
  if (d == NULL) return NULL;
  d->ops = ops;
  snprintf(d->name, sizeof(d->name), "%s", name);
  d->impl = ops->start(name, d->server, sizeof(d->server));
  if (d->impl == NULL) {
    free(d);
    return NULL;
  }
  g_used_kind = ops->kind;
  return d;
}

int io_fleet_dns_set(fleet_dns *d, const char *const *hosts, size_t n) {
  if (d == NULL || (hosts == NULL && n > 0) || n > FLEET_DNS_MAX_HOSTS) return -1;
  return d->ops->set(d->impl, hosts, n);
}

long io_fleet_dns_queries(const fleet_dns *d) { return d ? d->ops->queries(d->impl) : 0; }

int io_fleet_dns_target(const fleet_dns *d, int port, char *out, size_t len) {
  if (d == NULL || out == NULL || len == 0) return -1;
  int n = snprintf(out, len, "dns://%s/%s:%d", d->server, d->name, port);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

void io_fleet_dns_stop(fleet_dns *d) {
  if (d == NULL) return;
  g_used_queries += d->ops->queries(d->impl);
  d->ops->stop(d->impl);
  free(d);
}
