/* The fleet's slow-backend scenario: server s0 of 6 answers 40 ms late
 * (--extra-latency-ms); 3 clients, 16 calls in flight each, 150 calls/s
 * per client for 3 s per mode. Aperture's minAperture is 12, more than the
 * servers, so every client uses every server and pick-of-two alone
 * decides the slow server's share. Reports p50/p99/p999 and the slow
 * server's share of the calls beside the fair share (fleet_report.h). */
#ifndef APERTURE_INTEROP_FLEET_SLOW_BACKEND_H
#define APERTURE_INTEROP_FLEET_SLOW_BACKEND_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fleet_timeline io_fleet_slow_backend_timeline;

#ifdef __cplusplus
}
#endif

#endif
