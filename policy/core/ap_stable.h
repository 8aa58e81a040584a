/*
 * ap_stable: the stable mode's plan, which endpoints every client of a
 * service connects to and with what share, computed identically by every
 * client from the endpoints' keys and the clients' keys alone.
 *
 * Membership (who connects to whom) depends on keys, never on positions in
 * a list, so one membership change moves only the sessions it must:
 *   - coverage: each endpoint takes the first 1 or 2 distinct clients met
 *     clockwise from its point on a ring of client points (AP_STABLE_POINTS
 *     points per client); a coin from the endpoint's key decides 1 or 2, so
 *     coverage is 1.5 on average and never 0;
 *   - fill: a client with fewer than A = min(min_aperture, N) members adds
 *     the endpoints met first clockwise from its own point on a ring of
 *     endpoint points, until it has A.
 * An endpoint leaving closes its sessions and each client that falls below
 * A opens one; an endpoint joining opens its sessions and a client above A
 * closes at most one fill per session opened; a client leaving moves its
 * coverage to the next client on the ring.
 *
 * Shares (the load each client sends each member) come from matrix scaling
 * (Sinkhorn) of the membership matrix: every client sends the same total
 * and every endpoint's expected load is proportional to its weight, so
 * membership alone never unbalances load. The scaling runs until every
 * endpoint's load is within AP_STABLE_TOLERANCE of its target or
 * AP_STABLE_MAX_ROUNDS rounds have run; ap_stable_plan_load_max() reports
 * what was reached.
 *
 * A plan is immutable after creation and safe to read from any thread.
 */
#ifndef AP_STABLE_H
#define AP_STABLE_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Points per client on the coverage ring: more points even out how many
 * endpoints each client covers (spread about 1/sqrt(points)). */
#define AP_STABLE_POINTS 32u
/* Largest relative error of an endpoint's load the scaling stops at. */
#define AP_STABLE_TOLERANCE 1e-3
/* Upper bound on scaling rounds (each is O(sessions)). */
#define AP_STABLE_MAX_ROUNDS 500u

typedef struct ap_stable_plan ap_stable_plan;

/* Computes the plan for n endpoints and c clients.
 *   endpoint_keys  n distinct keys (AP_EINVAL names a duplicate pair);
 *   weights        n finite weights > 0, or NULL for equal weights;
 *   client_keys    c distinct keys;
 *   min_aperture   in [1, 1000000].
 * n in [1, 1000000], c in [1, 1000000] (AP_ERANGE). Keys are opaque: use a
 * hash of an endpoint's address and of a client's identity (ap_hash_str),
 * or ap_stable_ordinal_key() for ordinals. On success *out owns a new plan
 * (free with ap_stable_plan_destroy()). */
int ap_stable_plan_create(const uint64_t *endpoint_keys, const double *weights,
                          size_t n, const uint64_t *client_keys, size_t c,
                          uint32_t min_aperture, ap_stable_plan **out,
                          ap_error *err);

/* Frees a plan (NULL is ignored). */
void ap_stable_plan_destroy(ap_stable_plan *plan);

/* The key of an identity string: an endpoint's address as the resolver
 * gave it ("127.0.0.1:5001"), a peer's address from coordinate discovery.
 * Every client must use the same strings; NULL gives the key of "". */
uint64_t ap_stable_key(const char *identity);

/* The key of ordinal k (client k of a fleet without identities, or
 * endpoint k of a simulated ring). */
uint64_t ap_stable_ordinal_key(uint64_t k);

/* Sizes the plan was built for; 0 for NULL. */
size_t ap_stable_plan_endpoints(const ap_stable_plan *plan);
size_t ap_stable_plan_clients(const ap_stable_plan *plan);

/* Number of members of client `client`; 0 when plan is NULL or client is
 * out of range. */
size_t ap_stable_plan_row_size(const ap_stable_plan *plan, size_t client);

/* Members of `client`: endpoint indices ascending, and each one's share of
 * the client's load (the shares sum to 1). NULL when plan is NULL or client
 * is out of range. Valid while the plan lives. */
const uint32_t *ap_stable_plan_row_endpoints(const ap_stable_plan *plan,
                                             size_t client);
const double *ap_stable_plan_row_shares(const ap_stable_plan *plan,
                                        size_t client);

/* Largest expected load over target among endpoints (1 = exact balance),
 * where every client sends load 1 and an endpoint's target is
 * c x weight / sum of weights. 0 for NULL. */
double ap_stable_plan_load_max(const ap_stable_plan *plan);

/* Scaling rounds the plan took (diagnostics and benchmarks). */
uint32_t ap_stable_plan_rounds(const ap_stable_plan *plan);

/* Position in [0, 1) of a key on either ring (the client's own point is
 * the first of its points). */
double ap_stable_position(uint64_t key);

#ifdef __cplusplus
}
#endif

#endif /* AP_STABLE_H */
