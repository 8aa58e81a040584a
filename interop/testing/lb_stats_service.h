/* grpc.testing.LoadBalancerStatsService (GetClientStats,
 * GetClientAccumulatedStats) served from a client_stats, on its own gRPC
 * server, completion queue and thread. */
#ifndef APERTURE_INTEROP_LB_STATS_SERVICE_H
#define APERTURE_INTEROP_LB_STATS_SERVICE_H

#include "interop/testing/client_stats.h"

typedef struct lb_stats_service lb_stats_service;

/* Serves `stats` (not owned; must outlive the service) on host:port (port
 * 0 = ephemeral). Stores the bound port in *bound_port. Returns NULL when
 * arguments are invalid or the port cannot be bound (message on stderr).
 * GetClientStats waits for its num_rpcs calls or timeout_sec (capped at
 * 60 s), whichever comes first, without blocking other requests. */
lb_stats_service *io_lb_stats_service_start(const char *host, int port, client_stats *stats,
                                         int *bound_port);

/* Stops serving, answers pending requests with what they have, frees the
 * service. NULL is ignored. */
void io_lb_stats_service_stop(lb_stats_service *svc);

#endif
