/*
 * sim_skew: one service whose clients send at unequal rates, with and
 * without the mechanism that evens their load (policy/core/skew/ap_skew.h).
 *
 * Rates: a SPEC is a comma list of relative rates cycled over the clients
 * ("8,1,1,1"), "lognormal:CV" (each client's rate drawn from a lognormal
 * of mean 1 and coefficient of variation CV, from a fixed seed) or
 * "one:X" (client 0 at X, the others at 1).
 *
 * Without the mechanism each client splits its rate over its aperture by
 * pick weight (sim_model.h's model). With it, the core's own controller
 * runs for every client at once in virtual time: every AP_SKEW_TICK_NS
 * each client sends its rate split by pick weight x its factors, every
 * server reports the rate it serves (rps_fractional) and a utilization of
 * that rate over twice the fleet's mean, and each client's ap_skew_tick()
 * sees its members' cumulative calls and those reports, as the policy
 * does; a width it decides is applied by recomputing its aperture with
 * the core (ap_aperture_compute at the logical aperture it asks for).
 * The figures are those of the last tick: the mechanism's steady state.
 */
#ifndef APERTURE_INTEROP_SIM_SKEW_H
#define APERTURE_INTEROP_SIM_SKEW_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"
#include "policy/core/subset/ap_aperture.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_SKEW_TICKS 240       /* 60 s of virtual time */
#define SIM_SKEW_MAX_FLEET 250000 /* servers x clients */

/* Fills rates[0..clients) from `spec` (seed: lognormal's generator).
 * Returns 0, or -1 with what is wrong in err (a list item not a finite
 * number > 0, more than 1000 items, CV not in (0, 10], X not in
 * (0, 1e6], an unknown form). */
int io_sim_rates_parse(const char *spec, uint32_t clients, uint64_t seed,
                       double *rates, char *err, size_t err_len);

/* One mode's figures without and with the mechanism. */
typedef struct sim_skew_result {
  double without_max_mean;   /* expected load: busiest server / mean */
  double with_max_mean;      /* the same at the mechanism's last tick */
  double without_connections; /* mean connections per client */
  double with_connections;
  double with_connections_max; /* the most any client holds */
  uint32_t widened;          /* clients wider than their base at the end */
  double settle_s;           /* virtual seconds until the busiest server's
                                load stayed within 1% of its final value */
} sim_skew_result;

/* Runs one service of `clients` clients at `rates` on `servers` equal
 * servers in `mode` for `ticks` ticks. Random mode seeds client c with
 * io_sim_client_seed(0, c); stable mode uses the ordinal-key plan.
 * Errors: AP_EINVAL (NULL, ticks 0), AP_ERANGE (servers x clients above
 * SIM_SKEW_MAX_FLEET), the core's. */
int io_sim_skew_run(ap_mode mode, uint32_t servers, uint32_t clients,
                    uint32_t min_aperture, const double *rates, uint32_t ticks,
                    sim_skew_result *out, ap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_SIM_SKEW_H */
