/* The fleet's DNS answer: the name its clients resolve (a dns:// target)
 * and the addresses the runner puts behind it, changed while they run.
 * Which server answers comes from the fleet's network (fleet_net.h): on
 * both networks a dnsmasq process (fleet_dnsmasq.h), on 127.0.0.1 or in
 * the netns network's bridge namespace. Scenarios use the functions below
 * and never the server itself, so another server is one more
 * fleet_dns_ops; the runner's own responder (dns_stub.h) is one. */
#ifndef APERTURE_INTEROP_FLEET_DNS_H
#define APERTURE_INTEROP_FLEET_DNS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_DNS_MAX_HOSTS 64

/* A DNS server of one kind. Each function gets what start returned. */
typedef struct fleet_dns_ops {
  const char *kind; /* what the report names: "dnsmasq", "stub" */
  /* Starts answering A queries for `name` with no address yet; writes
   * "HOST:PORT", where the clients ask, to server[len]. NULL on failure. */
  void *(*start)(const char *name, char *server, size_t len);
  /* Replaces the answer with n dotted-quad addresses; 0, or -1 (unchanged). */
  int (*set)(void *impl, const char *const *hosts, size_t n);
  /* A queries answered so far. */
  long (*queries)(const void *impl);
  /* Stops the server and frees impl. */
  void (*stop)(void *impl);
} fleet_dns_ops;

/* The runner's own responder (dns_stub.h) on 127.0.0.1, TTL 0. */
extern const fleet_dns_ops io_fleet_dns_stub_ops;

/* dnsmasq (fleet_dnsmasq.h) on 127.0.0.1 at a free port: the loopback
 * network's DNS server. */
extern const fleet_dns_ops io_fleet_dns_dnsmasq_ops;

typedef struct fleet_dns fleet_dns;

/* Starts the fleet network's DNS server answering for `name` (at most 200
 * chars), with an empty answer. NULL on bad arguments or failure. Stop
 * with io_fleet_dns_stop. */
fleet_dns *io_fleet_dns_start(const char *name);

/* Replaces the answer: n (<= FLEET_DNS_MAX_HOSTS) addresses, as
 * io_fleet_net_server_host or io_fleet_net_client_host wrote them.
 * Returns 0, or -1 on bad arguments (answer unchanged). */
int io_fleet_dns_set(fleet_dns *d, const char *const *hosts, size_t n);

/* A queries answered so far (the clients' resolutions); 0 for NULL. */
long io_fleet_dns_queries(const fleet_dns *d);

/* Writes the gRPC target that resolves the name through this server to
 * `port`: "dns://SERVER/NAME:PORT". Returns 0, or -1 on bad arguments or
 * when it does not fit. */
int io_fleet_dns_target(const fleet_dns *d, int port, char *out, size_t len);

/* Stops the server and frees d, adding its queries to the runner's
 * tally (io_fleet_dns_used). NULL is ignored. */
void io_fleet_dns_stop(fleet_dns *d);

/* The kind of the DNS server the runner started (the last one's kind), or
 * NULL when none started; *queries (if not NULL) gets the A queries of
 * every stopped server added up. */
const char *io_fleet_dns_used(long *queries);

#ifdef __cplusplus
}
#endif

#endif
