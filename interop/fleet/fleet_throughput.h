/* The fleet's throughput scenario, a benchmark: 2 clients with 32 calls in
 * flight each, unpaced, on 6 servers for 3 s per mode, aperture at
 * minAperture 3. Reports calls/s, latency percentiles, connections and the
 * load spread (fleet_report.h). */
#ifndef APERTURE_INTEROP_FLEET_THROUGHPUT_H
#define APERTURE_INTEROP_FLEET_THROUGHPUT_H

#include "interop/fleet/fleet_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fleet_timeline io_fleet_throughput_timeline;

#ifdef __cplusplus
}
#endif

#endif
