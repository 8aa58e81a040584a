/*
 * ap_pick: per-call endpoint choice. The picker draws two slots with
 * probability proportional to their weights (ap_pick1 twice, independently)
 * and ap_p2c_choose_fair() keeps the less loaded one, health first, in a way
 * that leaves each slot's share of calls equal to its share of the weight
 * when every endpoint answers equally fast (see below).
 *
 * A pick table is immutable after creation: any number of threads may pick
 * from it at once, each with its own ap_rng. Picking takes no locks and
 * allocates nothing.
 */
#ifndef AP_PICK_H
#define AP_PICK_H

#include <stddef.h>

#include "policy/core/ap_error.h"
#include "policy/core/ap_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ap_pick_table ap_pick_table;

/* Builds a table over n slots with the given weights (each finite and > 0,
 * n in [1, AP_MAX_ENDPOINTS] (see ap_order.h), sum finite). *out owns it;
 * free with ap_pick_table_destroy(). Errors: AP_EINVAL (NULL, a bad weight
 * by index), AP_ERANGE (n, overflowing sum), AP_ENOMEM. The table holds
 * cumulative weights; a draw is a search over them (linear for up to 32
 * slots, branch-free binary search beyond). */
int ap_pick_table_create(const double *weights, size_t n, ap_pick_table **out,
                         ap_error *err);

/* Frees a table (NULL is ignored). */
void ap_pick_table_destroy(ap_pick_table *table);

/* Draws one slot with probability proportional to its weight (0 when table
 * or rng is NULL). */
size_t ap_pick1(const ap_pick_table *table, ap_rng *rng);

/* What P2C knows of a candidate. */
typedef struct ap_candidate {
  double load;   /* outstanding requests (or another load measure) */
  double weight; /* the slot's pick weight, > 0 */
  int healthy;   /* nonzero when usable */
} ap_candidate;

/* Returns 0 to choose a, 1 to choose b: a healthy candidate beats an
 * unhealthy one, then the less loaded one, in a way fair to fractional
 * weights. Comparing load / weight favours a lightly weighted
 * slot: its outstanding count is small and often 0, and 0 beats any other
 * load whatever the weights, so a slot of weight 0.5 beside slots of
 * weight 1 gets about 13% more than its share at one call in flight per
 * slot. Here the heavier candidate's load (an outstanding count) is thinned
 * to the lighter weight instead: each of its calls is kept with probability
 * w_light / w_heavy (a binomial draw from rng), so both loads are counts
 * from the same distribution when each endpoint's calls are proportional to
 * its weight, and neither side wins more often than the other. With a and
 * b drawn independently by weight (ap_pick1 twice), every slot's share of
 * picks is then its weight share, while a slow endpoint (more calls in
 * flight than its weight explains) still loses. Equal weights (within 1e-4)
 * compare raw loads; ties go to a. Loads above 64 or not whole numbers use
 * a normal approximation of the binomial. No allocation, no lock.
 *
 * Without a generator (rng NULL) the comparison is deterministic: the lower
 * load / weight wins (raw loads when |wa - wb| <= 1e-4), health first, ties
 * to a. Defensive rules (never abort): a NULL candidate loses (both NULL:
 * 0), a NaN load counts as +infinity, a weight that is not finite and > 0
 * counts as 1. */
int ap_p2c_choose_fair(const ap_candidate *a, const ap_candidate *b,
                       ap_rng *rng);

/* ap_p2c_choose_fair() for costs of the form (load + 1) * scale: `load`
 * is the candidate's outstanding count, `scale` its metric multiplier (the
 * latency EWMA or the utilization factor of ap_load.h; 1 for both when
 * either has no data). The heavier candidate's count is thinned to the
 * lighter weight exactly as ap_p2c_choose_fair() does, and only then
 * scaled, so configured and coverage weights keep their meaning: with
 * equal scales the result is ap_p2c_choose_fair()'s (same draws), and a
 * candidate whose scale is higher loses more often. Lower cost wins,
 * health first, ties to a. Without a generator the heavier count is
 * multiplied by w_light / w_heavy instead of drawn. Defensive rules as
 * ap_p2c_choose_fair(); a NaN or negative scale counts as +infinity. No
 * allocation, no lock. */
int ap_p2c_choose_fair_scaled(const ap_candidate *a, double scale_a,
                              const ap_candidate *b, double scale_b,
                              ap_rng *rng);

#ifdef __cplusplus
}
#endif

#endif /* AP_PICK_H */
