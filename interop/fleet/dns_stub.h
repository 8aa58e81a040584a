/* A tiny DNS responder on 127.0.0.1 (UDP) for one name, so fleets can change
 * a client's backend list through gRPC's real resolver path: a client with
 * target `dns://127.0.0.1:PORT/NAME:SERVICE_PORT` (c-ares resolver) asks this
 * responder, and gets the current member list on every re-resolution.
 * Answers A queries for NAME with the current IPv4 addresses (TTL 0),
 * other types for NAME with no records, other names with NXDOMAIN. */
#ifndef APERTURE_INTEROP_DNS_STUB_H
#define APERTURE_INTEROP_DNS_STUB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DNS_STUB_MAX_ADDRS 64

typedef struct dns_stub dns_stub;

/* Starts answering for `name` (e.g. "fleet.test", at most 200 chars) on
 * 127.0.0.1:0; stores the UDP port in *port. Returns NULL on bad arguments
 * or when the socket or thread cannot be created. Stop with io_dns_stub_stop. */
dns_stub *io_dns_stub_start(const char *name, int *port);

/* Replaces the member list: `n` (<= DNS_STUB_MAX_ADDRS) addresses given as
 * dotted quads. Returns 0, or -1 on bad arguments (list unchanged). */
int io_dns_stub_set(dns_stub *d, const char *const *addrs, size_t n);

/* Number of A queries answered so far. */
long io_dns_stub_queries(const dns_stub *d);

/* Stops the thread, closes the socket, frees d. NULL is ignored. */
void io_dns_stub_stop(dns_stub *d);

#ifdef __cplusplus
}
#endif

#endif
