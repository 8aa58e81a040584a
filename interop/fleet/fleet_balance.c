#include "interop/fleet/fleet_balance.h"

/* Nothing happens during the run: the data is the scenario. */
const fleet_timeline io_fleet_balance_timeline = {
    .name = "balance",
    .servers = 10,
    .n_services = 1,
    .service_clients = {4},
    .rate = 100,
    .duration_s = 3,
    .concurrency = 4,
    .default_modes = "smooth,continuous,discrete,random,vdc,mesh,round_robin,pick_first",
    .min_aperture = 2,
};
