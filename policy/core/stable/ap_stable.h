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
 * membership never unbalances load. The scaling stops when no endpoint's
 * load exceeds its target by more than AP_STABLE_TOLERANCE (endpoints
 * below their targets are not waited for), when that excess stops
 * falling, or after AP_STABLE_MAX_ROUNDS rounds;
 * ap_stable_plan_load_max() reports the balance reached.
 *
 * A plan is immutable after creation and safe to read from any thread.
 *
 * The definition, exactly (what an independent implementation must compute;
 * tests/oracle/stable_oracle.h is one). Arithmetic on keys and points is
 * mod 2^64; ap_mix64 and ap_hash_str are defined in ap_hash.h.
 *   Constants: SALT_ENDPOINT = 0x5DEECE66DA3B1F27, SALT_COIN =
 *   0xC2B2AE3D27D4EB4F, STEP = 0x9E3779B97F4A7C15, P = AP_STABLE_POINTS.
 *   Canonical order: endpoints and clients are each taken in ascending
 *   order of their keys (the keys of each side must be distinct); every
 *   rule and every sum below runs in that order, and the result is then
 *   reported in the caller's order. So the plan, bit for bit, depends on
 *   the key sets (and each endpoint's weight) alone, never on input order.
 *   Points: endpoint e is at ap_stable_endpoint_point(e); client k has the
 *   P points ap_stable_client_point(k, v), v = 0..P-1.
 *   Coverage: the client ring is the C x P client points ordered by
 *   position, equal positions by ascending client key. Endpoint e is
 *   covered by the first m = min(ap_stable_cover_count(e), C) distinct
 *   clients met reading that ring from the first point whose position is
 *   >= the endpoint's point (after the last point, reading wraps to the
 *   first).
 *   Walk: the endpoint ring is the N endpoint points ordered by position
 *   (distinct keys give distinct points). Client k walks the A = min(
 *   min_aperture, N) consecutive endpoints starting at the first one whose
 *   position is >= ap_stable_client_point(k, 0) (wrapping likewise).
 *   Members of client k: the endpoints it covers and the ones it walks.
 *   Scaling: target_s = C * w_s / W, W = w_0 + ... + w_{N-1} summed left to
 *   right (w = 1 when weights is NULL); u_k = 1 / (members of k), v_s = 1;
 *   mark = +infinity. For round r = 0, 1, ...:
 *     col_s = sum of u_k over the clients k having s as a member;
 *     err = max(0, max over s of (col_s * v_s / target_s - 1));
 *     rounds = r;
 *     stop if err <= AP_STABLE_TOLERANCE or r >= AP_STABLE_MAX_ROUNDS;
 *     if r is a multiple of 16: stop if mark - err < 0.01 * mark, and then
 *       mark = err;
 *     v_s = target_s / col_s for every s; then for every k,
 *       u_k = 1 / (sum of v_s over its members, ascending by key).
 *   Shares: with top = the largest v_s among k's members, x_s = v_s when
 *   v_s > top * 1e-12 and top * 1e-12 otherwise; share = x_s / (sum of x
 *   over the members, ascending by key). load_max = the largest, over s, of
 *   (sum of the final shares of s over clients) / target_s.
 *   Every operation is one IEEE double operation (no fused multiply-add:
 *   the core is built with -ffp-contract=off), so every client computes
 *   the same doubles.
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
/* Largest relative excess of an endpoint's load over its target the
 * scaling stops at. */
#define AP_STABLE_TOLERANCE 1e-3
/* Upper bound on scaling rounds (each is O(sessions)). */
#define AP_STABLE_MAX_ROUNDS 500u
/* Most clients a plan is built for. A build's time and memory are linear
 * in the service's sessions (C x min(A, N) walks plus about 1.5 N covers)
 * and its endpoints and clients: one radix sort of the N endpoint points;
 * each of the C x AP_STABLE_POINTS client points goes to its gap of the
 * endpoint ring in O(1) (a table of at most 2^20 position prefixes) and is
 * not stored; each scaling round (at most AP_STABLE_MAX_ROUNDS) is one
 * pass over the sessions. Peak memory is about 24 bytes per session (held
 * twice while the plan is mapped back to the caller's order) plus about 50
 * bytes per client and 60 per endpoint: measured peaks (min_aperture 12)
 * are 66 MiB at 1,000 x 200,000, 77 MiB at 100,000 x 200,000 and 121 MiB
 * at 1,000,000 x 200,000; 1,000,000 clients would need about 340 MiB, past
 * 256 MiB, so the bound stays (docs/modes.md, "Stable fleet size"). */
#define AP_STABLE_MAX_CLIENTS 200000u

typedef struct ap_stable_plan ap_stable_plan;

/* Computes the plan for n endpoints and c clients.
 *   endpoint_keys  n distinct keys (AP_EINVAL names a duplicate pair);
 *   weights        n finite weights > 0, or NULL for equal weights;
 *   client_keys    c distinct keys;
 *   min_aperture   in [1, 1000000].
 * n in [1, 1000000], c in [1, AP_STABLE_MAX_CLIENTS] (AP_ERANGE). Keys are opaque: use a
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
 * gave it ("127.0.0.1:5001"), a peer's address from coordinate discovery:
 * ap_hash_str(identity, SALT_ENDPOINT). Every client must use the same
 * strings; NULL gives the key of "". */
uint64_t ap_stable_key(const char *identity);

/* The key of ordinal k (client k of a fleet without identities, or
 * endpoint k of a simulated ring): ap_mix64(k xor STEP). */
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

/* The placement, for callers that show or check it. Positions are 64-bit
 * points on a ring read clockwise (0 follows 2^64 - 1); equal positions of
 * client points order by ascending client key (see the definition above). */
/* Point v (< AP_STABLE_POINTS) of the client with key `key`:
 * ap_mix64(key + v * STEP). Point 0 is where its walk starts. */
uint64_t ap_stable_client_point(uint64_t key, uint32_t v);
/* Point of the endpoint with key `key`, on both rings:
 * ap_mix64(key xor SALT_ENDPOINT). */
uint64_t ap_stable_endpoint_point(uint64_t key);
/* Clients (1 or 2) covering the endpoint with key `key`, before capping at
 * the number of clients: 2 when (ap_mix64(key xor SALT_COIN) >> 11) *
 * 2^-53 < 0.5, that is when the top bit of that mix is 0, else 1. */
uint32_t ap_stable_cover_count(uint64_t key);

#ifdef __cplusplus
}
#endif

#endif /* AP_STABLE_H */
