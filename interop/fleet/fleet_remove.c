#include "interop/fleet/fleet_remove.h"

#include "interop/fleet/fleet_bounce.h"

static const fleet_bounce kRemove = {.leave_at_s = 1.0, .back_s = 0, .comes_back = 0};

const fleet_timeline io_fleet_remove_timeline = {
    .name = "remove",
    .servers = 13,
    .n_services = 1,
    .service_clients = {7},
    .rate = 60,
    .duration_s = 4,
    .concurrency = 4,
    .max_backoff_ms = 500,
    .default_modes = "continuous,smooth,discrete,random,vdc,round_robin",
    .min_aperture = 3,
    .dns = 1,
    .hooks = &io_fleet_bounce_hooks,
    .params = &kRemove,
};
