/*
 * ap_stable: the stable mode's plan, which endpoints every client of a
 * service connects to and with what share, computed identically by every
 * client from the endpoints' keys and the clients' keys alone.
 *
 * Membership (who connects to whom) depends on keys, never on positions in
 * a list, so one membership change moves only the sessions it must:
 *   - coverage: each endpoint is covered by the first 1 or 2 distinct
 *     clients met clockwise from its point on a ring of client points
 *     (AP_STABLE_POINTS points per client); a coin from the endpoint's key
 *     decides 1 or 2 (2 for half of them), so no endpoint is left out;
 *   - walk: each client also takes the first A = min(min_aperture, N)
 *     endpoints clockwise from its own point on the ring of endpoint
 *     points, whatever it covers, so it has at least A members and spare
 *     room for load.
 * A client's members are the union. An endpoint leaving closes its
 * sessions and each walk that held it opens the next endpoint (at most 2x
 * the sessions that had to close); an endpoint joining opens its sessions
 * and each walk it enters closes its last endpoint; a client joining or
 * leaving changes its own sessions and takes or gives up the coverage of
 * the endpoints just before its points. Nothing depends on the number of
 * endpoints or clients, so no change moves sessions fleet-wide.
 *
 * Shares (the load each client sends each member) come from matrix scaling
 * (Sinkhorn) of the membership matrix: every client sends the same total
 * and every endpoint's expected load is proportional to its weight, so
 * membership never unbalances load. The scaling stops when every endpoint's
 * load is within AP_STABLE_TOLERANCE of its target, when the error stops
 * falling, or after AP_STABLE_MAX_ROUNDS rounds; ap_stable_plan_load_max()
 * reports the balance reached.
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

/* Where client `client`'s walk starts on the endpoint ring: point 0 of its
 * key (ap_stable_client_point(key, 0)); 0 when plan is NULL or client is
 * out of range. Lets a client place itself from the plan alone. */
uint64_t ap_stable_plan_client_start(const ap_stable_plan *plan, size_t client);

/* Largest expected load over target among endpoints (1 = exact balance),
 * where every client sends load 1 and an endpoint's target is
 * c x weight / sum of weights. 0 for NULL. */
double ap_stable_plan_load_max(const ap_stable_plan *plan);

/* Scaling rounds the plan took (diagnostics and benchmarks). */
uint32_t ap_stable_plan_rounds(const ap_stable_plan *plan);

/* The placement, for callers that show or check it. Positions are 64-bit
 * points on a ring read clockwise (0 follows 2^64 - 1); ties break by the
 * lower endpoint or client index. */
/* Point v (< AP_STABLE_POINTS) of the client with key `key`; point 0 is
 * where its walk starts. */
uint64_t ap_stable_client_point(uint64_t key, uint32_t v);
/* Point of the endpoint with key `key`, on both rings. */
uint64_t ap_stable_endpoint_point(uint64_t key);
/* Clients (1 or 2) covering the endpoint with key `key`, before capping at
 * the number of clients. */
uint32_t ap_stable_cover_count(uint64_t key);

#ifdef __cplusplus
}
#endif

#endif /* AP_STABLE_H */
