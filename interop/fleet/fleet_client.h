/* One interop client process of a fleet: the argument list every scenario
 * shares (target, service config, pacing, summary file) plus the optional
 * coordinate, backoff, DNS, status-server and unique-key flags. */
#ifndef APERTURE_INTEROP_FLEET_CLIENT_H
#define APERTURE_INTEROP_FLEET_CLIENT_H

#include <grpc/grpc.h>

#include "aperture/v1/status.pb-c.h"
#include "interop/common/proc.h"
#include "interop/common/unary_call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every string is the flag's value as text; NULL leaves an optional flag
 * out. */
typedef struct fleet_client_opts {
  const char *bin;            /* the client binary */
  const char *target;         /* --target */
  const char *service_config; /* --service-config */
  const char *rate;           /* --rate (calls/s; "0": unpaced) */
  const char *duration_s;     /* --duration-s */
  const char *concurrency;    /* --concurrency */
  const char *linger_s;       /* --linger-s */
  const char *summary_file;   /* --summary-file */
  const char *peer_index;     /* --peer-index / --peer-count (both or NULL) */
  const char *peer_count;
  const char *max_backoff_ms;      /* --max-backoff-ms, optional */
  const char *dns_min_interval_ms; /* --dns-min-interval-ms, optional */
  int status_server;               /* 1: --status-port 0 */
  const char *const *extra;        /* more arguments (NULL terminated, at most 24); NULL: none */
  const char *unique_metadata;     /* --unique-metadata KEY:PREFIX, optional */
  const char *host;                /* the client's own address, for a scenario that
                                      names it (io_fleet_net_client_host: where it
                                      runs); NULL: the network places it */
} fleet_client_opts;

/* The options of a client that runs until the runner stops it (an upper
 * bound of 3600 s), two calls in flight and no linger; the optional
 * fields are left out for the caller to set. */
fleet_client_opts io_fleet_client_until_stopped(const char *bin, const char *target,
                                                const char *service_config, const char *rate,
                                                const char *summary_file);

/* Starts the client with --calls 0 (run until --duration-s) and
 * --timeout-ms 5000, stderr to `log`, at o->host of the fleet's network. NULL when `o` lacks a required field,
 * has more than 24 extra arguments, or the process did not start. */
proc *io_fleet_client_start(const fleet_client_opts *o, const char *log);

/* A channel to a listener of process p's ("HOST:PORT", as it printed it;
 * 127.0.0.1 is p's own loopback): a plain ipv4: channel where the runner
 * reaches p's addresses (io_fleet_net_direct), else one over a connection
 * made where p runs (io_fleet_net_dial), which does not reconnect. The
 * caller destroys it; NULL on bad arguments or when it cannot connect. */
grpc_channel *io_fleet_client_channel_to(proc *p, const char *hostport);

/* For a client started with status_server = 1: waits up to 20 s for it to
 * print its status address, then opens a channel to that status server
 * (the caller destroys it). NULL on failure, with *why (if not NULL) set to
 * what went wrong: "printed no status address" or "no channel to its status
 * server". */
grpc_channel *io_fleet_client_status_channel(proc *p, const char **why);

/* Asks a client's status server (`status`, from
 * io_fleet_client_status_channel) for its ring state, waiting up to 3 s.
 * Returns the client's one ring, or NULL when an argument is NULL, the call
 * failed or did not end OK, or the client reports other than exactly one
 * ring. The ring lives in *r: release it with io_unary_result_free(r)
 * whatever this returns. */
const Aperture__V1__RingState *io_fleet_client_ring_state(grpc_channel *status, unary_result *r);

/* Reads a stopped client's summary file and adds its "ok" and "failed"
 * call counts to *ok and *failed. 0 on success; -1 (counts untouched) when
 * an argument is NULL or the file is missing or not JSON, i.e. the client
 * wrote no summary. */
int io_fleet_client_read_summary(const char *summary_file, long *ok, long *failed);

#ifdef __cplusplus
}
#endif

#endif
