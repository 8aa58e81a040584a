/* The interop client's per-call log (--call-log PATH): one text line per
 * finished call,
 *
 *   START_US LATENCY_US CODE SERVER
 *
 * START_US is when the call started on CLOCK_MONOTONIC in microseconds
 * (the clock every process of one machine shares, so a runner can lay the
 * calls of several clients on its own timeline); LATENCY_US is how long it
 * took; CODE its status code; SERVER who answered or was tried: the
 * answer's hostname for a call that got one, else the connection it was
 * sent on ("ipv4:HOST:PORT"): gRPC's peer of the call, or, since gRPC 1.51
 * forgets that peer when a call is cancelled (at its deadline too) and
 * reports the channel's target instead, the peer the client saw while the
 * call was in flight (it looks every 10 ms at calls older than 10 ms). A
 * call that never reached a connection (it waited for a pick until its
 * deadline) has the channel's target, "ipv4:A,B,..."; "-" when nothing is
 * known. Whitespace in SERVER is written as '_'.
 * Lines go through one stdio buffer of the client's single driver thread:
 * no locks and no allocation per call. */
#ifndef APERTURE_INTEROP_CALL_LOG_H
#define APERTURE_INTEROP_CALL_LOG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct call_log call_log;

/* Opens (truncates) `path` for the log. NULL on a NULL path or when it
 * cannot be opened (message naming the flag on stderr). */
call_log *io_call_log_open(const char *path);

/* Appends one call. `server` NULL or "" is written as "-". Nothing for a
 * NULL log. */
void io_call_log_record(call_log *l, int64_t start_ns, int64_t latency_ns, int code,
                        const char *server);

/* Flushes and closes the log; returns 0, or -1 when a write failed
 * (message on stderr). NULL returns 0. */
int io_call_log_close(call_log *l);

#ifdef __cplusplus
}
#endif

#endif
