#include "interop/fleet/fleet_throughput.h"

/* Nothing happens during the run: the data is the scenario. */
const fleet_timeline io_fleet_throughput_timeline = {
    .name = "throughput",
    .servers = 6,
    .n_services = 1,
    .service_clients = {2},
    .rate = 0, /* unpaced: as fast as the concurrency allows */
    .duration_s = 3,
    .concurrency = 32,
    .default_modes = "continuous,round_robin",
    .min_aperture = 3,
};
