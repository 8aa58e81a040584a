/* Figures of the interop client: calls started and finished per method,
 * results by status code, calls per peer (server hostname), latency
 * histogram, and the "next N calls" watchers behind
 * LoadBalancerStatsService.GetClientStats. Thread-safe (one mutex: the
 * client is a load generator, not the balancer's hot path). */
#ifndef APERTURE_INTEROP_CLIENT_STATS_H
#define APERTURE_INTEROP_CLIENT_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "grpc/testing/messages.pb-c.h"

typedef enum client_method { CLIENT_UNARY = 0, CLIENT_EMPTY = 1, CLIENT_METHODS = 2 } client_method;

/* "UNARY_CALL" / "EMPTY_CALL" (the names LoadBalancerStatsService uses). */
const char *io_client_method_name(client_method m);

typedef struct client_stats client_stats;
typedef struct stats_watcher stats_watcher;

/* NULL when out of memory. Destroy frees remaining watchers too. */
client_stats *io_client_stats_create(void);
void io_client_stats_destroy(client_stats *s);

void io_client_stats_started(client_stats *s, client_method m);

/* Records a finished call: status `code` (0..16), `peer` (server hostname;
 * NULL or "" when unknown, which counts as a failure to record a peer for
 * watchers), and its latency. Latency enters the histogram for OK calls. */
void io_client_stats_finished(client_stats *s, client_method m, int code, const char *peer,
                           uint64_t latency_us);

/* Records the address (grpc_call_get_peer) a failed call went to, so a
 * runner can tell failures on a killed backend from the others. */
void io_client_stats_failed_address(client_stats *s, const char *address);

/* Starts watching the next `num_rpcs` (> 0) finished calls. NULL on bad
 * arguments or out of memory. The watcher belongs to `s` until
 * io_client_stats_unwatch. */
stats_watcher *io_client_stats_watch(client_stats *s, int num_rpcs);

/* 1 when the watcher has seen its num_rpcs calls. */
int io_client_stats_watch_done(client_stats *s, stats_watcher *w);

/* Removes the watcher and fills `out` (a zero-initialised response) with
 * its per-peer counts and failures; release out with
 * io_client_stats_free_response. */
void io_client_stats_unwatch(client_stats *s, stats_watcher *w,
                          Grpc__Testing__LoadBalancerStatsResponse *out);
void io_client_stats_free_response(Grpc__Testing__LoadBalancerStatsResponse *out);

/* Fills the accumulated stats; release with io_client_stats_free_accumulated. */
void io_client_stats_accumulated(client_stats *s,
                              Grpc__Testing__LoadBalancerAccumulatedStatsResponse *out);
void io_client_stats_free_accumulated(Grpc__Testing__LoadBalancerAccumulatedStatsResponse *out);

/* Totals for the summary. */
typedef struct client_totals {
  long started, ok, failed;
  long by_code[17];
  uint64_t p50_us, p90_us, p99_us, p999_us, max_us;
  double mean_us;
} client_totals;
void io_client_stats_totals(client_stats *s, client_totals *out);

/* Writes `"peers":{"host":count,...}` (the member, without braces around). */
void io_client_stats_write_peers(client_stats *s, FILE *f);

/* Writes `"failed_addresses":{...}` and `"latency_hist":[[us,count],...]`
 * (non-empty buckets of the OK-call histogram), comma separated. */
void io_client_stats_write_details(client_stats *s, FILE *f);

#endif
