/*
 * sim_model: the simulator's shared model of a fleet, built on the core.
 * A service is `clients` clients with peer indices 0..clients-1 and peer
 * count `clients`; each client sends the same request rate and splits it
 * over its aperture in proportion to the members' pick weights (the
 * expected share under pick2 + P2C when servers are equally fast).
 * Random mode gets a fixed per-client seed so every run is identical.
 */
#ifndef APERTURE_INTEROP_SIM_MODEL_H
#define APERTURE_INTEROP_SIM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ap_error.h"
#include "policy/core/ring/ap_ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The seven modes in the order the tables print them (stable last, so the
 * older modes keep their places). */
#define SIM_NUM_MODES 7
extern const ap_mode io_sim_modes[SIM_NUM_MODES];

/* Seed of client `client` of service `service` in random mode. */
uint64_t io_sim_client_seed(uint32_t service, uint32_t client);

/* Computes the aperture of each of one service's clients on `ring` (one at
 * a time, so memory stays at one aperture) and adds, per member, one
 * connection to conns[index] and `rate` split over the members in
 * proportion to pick_weight to load[index]. Stable mode builds the
 * service's plan once (ordinal keys of the ring and peer indices, the
 * core's default) and reads every client's row from it. Either array may be NULL;
 * *members (when not NULL) gets the total number of members. */
int io_sim_service_accumulate(const ap_ring *ring, ap_mode mode, uint32_t clients,
                           uint32_t min_aperture, uint32_t service,
                           double rate, double *conns, double *load,
                           size_t *members, ap_error *err);

/* Summary of a per-server quantity. */
typedef struct sim_stats {
  double mean;
  double max_over_mean;
  double min_over_mean;
  double cv; /* population standard deviation / mean */
} sim_stats;

sim_stats io_sim_stats_of(const double *x, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_SIM_MODEL_H */
