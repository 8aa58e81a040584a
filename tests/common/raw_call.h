/* One raw unary call on the public C-core API, as the tests write it: the
 * six ops (send metadata, message and close; receive metadata, message and
 * status) in one batch, over raw bytes. Plain C11 with no other
 * dependency than <grpc/grpc.h>, so that a program built outside Bazel
 * against the installed package can compile it beside its own file. */
#ifndef APERTURE_TESTS_COMMON_RAW_CALL_H
#define APERTURE_TESTS_COMMON_RAW_CALL_H

#include <stddef.h>

#include <grpc/grpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One call in flight and everything its batch writes into. Zero it, or
 * let raw_call_start do so. */
typedef struct raw_call {
  grpc_call *call;
  grpc_byte_buffer *request;
  grpc_byte_buffer *response; /* NULL unless a message came back */
  grpc_metadata md;           /* the optional metadata entry */
  int has_md;
  grpc_metadata_array initial, trailing;
  grpc_status_code status; /* GRPC_STATUS_UNKNOWN until the batch ends */
  grpc_slice details;
  int started; /* 1 once the batch was accepted */
} raw_call;

/* What to call and how. */
typedef struct raw_call_opts {
  const char *method;     /* "/pkg.Service/Method" (required) */
  const char *body;       /* request bytes; NULL with body_len 0: empty */
  size_t body_len;
  const char *md_key;     /* one metadata entry: both or neither */
  const char *md_value;
  int wait_for_ready;     /* 1: GRPC_INITIAL_METADATA_WAIT_FOR_READY */
  int timeout_ms;         /* deadline from now; > 0 */
} raw_call_opts;

/* Starts the batch on `ch` with its completion reported on `cq` under the
 * tag `c` (the struct's address). Returns 0; -1 on bad arguments or when
 * the batch was refused (then *c is already released). Whatever the
 * completion, release with raw_call_release once the tag came back. */
int raw_call_start(raw_call *c, grpc_channel *ch, grpc_completion_queue *cq,
                   const raw_call_opts *o);

/* Frees the call and its buffers; *c is zeroed. NULL is ignored. */
void raw_call_release(raw_call *c);

/* A blocking call on a completion queue of its own: starts, waits for the
 * batch, copies the peer (when `peer` is not NULL; "" if unknown) and
 * releases. Returns the call's status, or GRPC_STATUS_UNKNOWN on bad
 * arguments or when the batch could not start. */
grpc_status_code raw_call_unary(grpc_channel *ch, const raw_call_opts *o, char *peer,
                                size_t peer_len);

#ifdef __cplusplus
}
#endif

#endif
