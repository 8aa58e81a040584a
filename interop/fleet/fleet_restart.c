#include "interop/fleet/fleet_restart.h"

#include "interop/fleet/fleet_bounce.h"

static const fleet_bounce kRestart = {.leave_at_s = 1.0, .back_s = 1.0, .comes_back = 1};

const fleet_timeline io_fleet_restart_timeline = {
    .name = "restart",
    .servers = 6,
    .n_services = 1,
    .service_clients = {5},
    .rate = 100,
    .duration_s = 4,
    .concurrency = 4,
    .max_backoff_ms = 500,
    .default_modes = "continuous,smooth",
    .min_aperture = 2,
    .grace_ms = 5000,
    .dns = 1,
    .hooks = &io_fleet_bounce_hooks,
    .params = &kRestart,
};
