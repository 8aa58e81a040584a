/*
 * ap_metrics: a GetRingStateResponse as Prometheus / OpenMetrics text, for
 * scrapers (`aperturectl metrics ADDRESS`). Metric names and labels are
 * listed in docs/metrics.md. No gRPC calls: pure formatting.
 */
#ifndef AP_METRICS_H
#define AP_METRICS_H

#include <stdio.h>

#include "aperture/v1/status.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes every metric family of `r` to `out`, ending with "# EOF".
 * Returns 0, or -1 when out or r is NULL or a write fails. */
int ap_metrics_write(FILE *out, const Aperture__V1__GetRingStateResponse *r);

#ifdef __cplusplus
}
#endif

#endif /* AP_METRICS_H */
