/*
 * ap_status_limits: how many GetRingState calls a status service computes
 * at once. Calls past the bound are answered RESOURCE_EXHAUSTED at once,
 * without touching the registry, so a flood of queries costs the process
 * at most this many snapshots in parallel.
 */
#ifndef AP_STATUS_LIMITS_H
#define AP_STATUS_LIMITS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable that sets the bound, read when a status
 * service starts (aperture_status_server_start, aperture_status_register). */
#define AP_STATUS_MAX_CALLS_ENV "APERTURE_STATUS_MAX_CALLS"
/* The bound when the variable is unset or empty, and its largest value. */
#define AP_STATUS_DEFAULT_MAX_CALLS 8u
#define AP_STATUS_MAX_CALLS_LIMIT 1024u

/* The bytes a status service's GetRingState answers may hold at once,
 * being built or waiting for their clients to read them (ap_status_budget.h):
 * what the largest answer, 20,000 endpoints, takes to build (about
 * 9.1 MiB since the endpoints carry the skew balance's fields). A call reserves its estimate (at most the budget) before it
 * copies anything and is refused with RESOURCE_EXHAUSTED when that does
 * not fit beside what other calls hold; an answer that would need more
 * than the budget is refused ("ask for fewer endpoints"), so no answer
 * sent is larger. */
#define AP_STATUS_ANSWER_BUDGET_BYTES ((size_t)10 << 20)

/* What a call's own memory in gRPC (the call, its stream, their buffers)
 * counts against the budget from its admission until its answer is sent,
 * on top of the answer: so calls whose clients do not read cannot pile up
 * even when their answers are small. */
#define AP_STATUS_HELD_CALL_BYTES ((size_t)16 << 10)

/* The admin server's connections: at most this many at once (one past it
 * is closed as soon as it is accepted), each closed after this long
 * without a call, and after its maximum age plus the grace even when it
 * has calls (a client that never reads keeps its calls open). */
#define AP_STATUS_MAX_CONNECTIONS 32u
#define AP_STATUS_CONNECTION_IDLE_MS 10000
#define AP_STATUS_CONNECTION_AGE_MS 60000
#define AP_STATUS_CONNECTION_GRACE_MS 10000

/* What a status client accepts: a response up to the largest answer plus a
 * margin, and at most this much memory for protobuf-c to decode it (a
 * 20,000-endpoint answer of 1.3 MB takes under 7 MiB; ap_decode_limit.h). */
#define AP_STATUS_CLIENT_MAX_RESPONSE_BYTES (AP_STATUS_ANSWER_BUDGET_BYTES + ((size_t)1 << 20))
#define AP_STATUS_CLIENT_MAX_DECODE_BYTES ((size_t)64 << 20)

/* Concurrent streams one client connection may open on the admin server:
 * more than the default call bound (gRPC's channels to one address share a
 * connection, so a client's concurrent calls meet on it), few enough that
 * what a client that never reads keeps open stays small: every open call
 * holds gRPC's memory until it ends (32 connections x 16 streams at
 * most). */
#define AP_STATUS_MAX_STREAMS_PER_CONNECTION 16

/* Parses the variable's value `text` (NULL or "" = the default) into *out:
 * a decimal integer in 1..AP_STATUS_MAX_CALLS_LIMIT. Returns 0, or -1 with
 * a message naming the variable in `msg` (`msg_size` bytes, may be 0).
 * `out` must not be NULL (-1 otherwise). */
int ap_status_parse_max_calls(const char *text, unsigned *out, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif /* AP_STATUS_LIMITS_H */
