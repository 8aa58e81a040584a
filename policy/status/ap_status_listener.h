/*
 * ap_status_listener: the admin server's listening socket, with a cap on
 * its connections. gRPC 1.51 has no such cap (a server accepts every
 * connection and keeps it until the client goes), so the admin server
 * accepts connections itself: at most `max_connections` at once, each
 * handed to its grpc_server (grpc_server_add_channel_from_fd, plaintext,
 * with the server's channel args: stream limit, idle time, maximum age); a
 * connection past the cap is closed as soon as it is accepted.
 *
 * gRPC owns a connection once it has it and closes it when the connection
 * ends (the client leaves, its idle time or age is up, the server stops).
 * The listener learns that a connection ended when its descriptor no
 * longer refers to the socket it accepted (fstat: device and inode), which
 * it checks for every connection when the next one arrives.
 */
#ifndef AP_STATUS_LISTENER_H
#define AP_STATUS_LISTENER_H

#include <stddef.h>

#include <grpc/grpc.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ap_status_listener ap_status_listener;

/* Binds and listens on `address` ("host:port", "[v6]:port"; port 0 picks
 * one; a host name listens on each of its addresses, with one port):
 * AP_OK with *out and *port set, AP_EINVAL for an address it cannot parse,
 * AP_EUNAVAIL when no address could be bound (busy port, unknown host),
 * each with a message naming the address. */
int ap_status_listener_open(const char *address, ap_status_listener **out, int *port,
                            ap_error *err);

/* Starts accepting on a thread of its own, handing at most
 * `max_connections` (>= 1) connections at once to `server`, which must be
 * started. AP_EINVAL for NULL arguments or a cap of 0, AP_EINTERNAL when
 * the thread cannot start. */
int ap_status_listener_start(ap_status_listener *listener, grpc_server *server,
                             unsigned max_connections, ap_error *err);

/* Stops accepting, joins the thread and closes the listening sockets; the
 * connections already handed over stay gRPC's. Frees the listener (NULL is
 * ignored). */
void ap_status_listener_close(ap_status_listener *listener);

/* Connections handed to gRPC and not yet closed, as of now; connections
 * refused at the cap so far. 0 for NULL. */
size_t ap_status_listener_open_connections(ap_status_listener *listener);
size_t ap_status_listener_refused(ap_status_listener *listener);

#ifdef __cplusplus
}
#endif

#endif /* AP_STATUS_LISTENER_H */
