/* The interop client's per-call log (--call-log PATH): one text line per
 * finished call,
 *
 *   START_US LATENCY_US CODE SERVER
 *
 * START_US is when the call started on CLOCK_MONOTONIC in microseconds
 * (the clock every process of one machine shares, so a runner can lay the
 * calls of several clients on its own timeline); LATENCY_US is how long it
 * took; CODE its status code; SERVER who answered or was tried: the
 * answer's hostname for a call that got one, else gRPC's peer of the call
 * ("ipv4:HOST:PORT" once the call reached a connection; gRPC 1.51 reports
 * the channel's target instead for a call that never reached one, e.g.
 * one that waited for a pick until its deadline), "-" when neither is
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
