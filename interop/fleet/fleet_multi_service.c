#include "interop/fleet/fleet_multi_service.h"

/* Nothing happens during the run: the data is the scenario. */
const fleet_timeline io_fleet_multi_service_timeline = {
    .name = "multi-service",
    .servers = 10,
    .n_services = 3,
    .service_clients = {2, 3, 5},
    .rate = 60,
    .duration_s = 3,
    .concurrency = 4,
    .default_modes = "smooth,continuous,discrete,random,vdc,mesh,round_robin",
    .min_aperture = 2,
};
