/* Reading the figures the connection tracker needs from gRPC's channelz
 * JSON (grpc_channelz_get_servers / grpc_channelz_get_server_sockets), with
 * the common JSON reader. Separate from the tracker so that it can be tested
 * on captured documents. */
#ifndef APERTURE_INTEROP_CHANNELZ_JSON_H
#define APERTURE_INTEROP_CHANNELZ_JSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The id of the first server in a get_servers document
 * (server[0].ref.serverId; channelz renders int64 as a string). Returns 0,
 * or -1 when json is NULL, malformed or lists no server. */
int io_channelz_server_id(const char *json, int64_t *out);

/* Appends the socket ids of a get_server_sockets page
 * (socketRef[].socketId) to the growable array *ids (n used, cap
 * allocated; the caller frees *ids) and sets *end when the page is the
 * last. Returns 0, or -1 when an argument is NULL, json is malformed or
 * memory runs out. */
int io_channelz_socket_ids(const char *json, int64_t **ids, size_t *n, size_t *cap, int *end);

#ifdef __cplusplus
}
#endif

#endif
