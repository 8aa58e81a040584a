/*
 * ap_hash_ring: a consistent-hash ring with virtual nodes and weights.
 * Member m gets max(1, round(weight_m * vnodes_per_weight)) points at
 * ap_hash_str("<name>#<v>"); a key hash belongs to the first point at or
 * after it (wrapping). Adding or removing one of N members moves about 1/N
 * of the keys. Immutable after creation; safe to read from any thread.
 */
#ifndef AP_HASH_RING_H
#define AP_HASH_RING_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bound on vnodes_per_weight and on the total number of points. */
#define AP_HASH_RING_MAX_VNODES 65536u
#define AP_HASH_RING_MAX_POINTS ((size_t)16000000)
/* Points a usable-member lookup walks before it falls back to member
 * order (see ap_hash_ring_lookup_usable). With a fraction p of the points
 * usable, the walk misses with probability (1-p)^256: 2e-12 at p = 0.1. */
#define AP_HASH_RING_MAX_WALK ((size_t)256)

typedef struct ap_hash_ring ap_hash_ring;

/* Builds a ring over n members named `names` (non-empty, distinct) with
 * `weights` (NULL = all 1; else finite and > 0). vnodes_per_weight in
 * [1, AP_HASH_RING_MAX_VNODES]. *out owns it; free with
 * ap_hash_ring_destroy(). */
int ap_hash_ring_create(const char *const *names, const double *weights,
                        size_t n, uint32_t vnodes_per_weight,
                        ap_hash_ring **out, ap_error *err);

/* The vnodes_per_weight to build with so the ring fits the point cap:
 * `vnodes` itself when n members of `weights` (NULL = all 1) give at most
 * AP_HASH_RING_MAX_POINTS points with it, else the largest smaller value
 * that does (fewer points per member, the same shares on average).
 * AP_ERANGE when even 1 point per unit weight is over the cap; AP_EINVAL
 * for a NULL `fitted`, n == 0, vnodes out of [1, AP_HASH_RING_MAX_VNODES]
 * or a weight that is not finite and > 0. Costs O(n log vnodes). */
int ap_hash_ring_fit_vnodes(const double *weights, size_t n, uint32_t vnodes,
                            uint32_t *fitted, ap_error *err);

/* Frees a ring (NULL is ignored). */
void ap_hash_ring_destroy(ap_hash_ring *ring);

/* Number of members (the points: ap_hash_ring_testing.h). */
size_t ap_hash_ring_members(const ap_hash_ring *ring);

/* Member that owns key hash h. */
size_t ap_hash_ring_lookup(const ap_hash_ring *ring, uint64_t h);

/* Like ap_hash_ring_lookup() but walks on past members with usable[m] == 0
 * (usable has ap_hash_ring_members() entries). AP_EUNAVAIL when none is
 * usable. Bounded: it visits at most AP_HASH_RING_MAX_WALK points; when no
 * usable member owns one of them (few usable members), it takes the first
 * usable member after the key's owner in member order. So a lookup costs
 * at most AP_HASH_RING_MAX_WALK + members steps, never the point count. */
int ap_hash_ring_lookup_usable(const ap_hash_ring *ring, uint64_t h,
                               const uint8_t *usable, size_t *member,
                               ap_error *err);

/* As ap_hash_ring_lookup_usable(); *steps (may be NULL) receives how many
 * points and members it inspected, for tests and benchmarks. */
int ap_hash_ring_lookup_usable_steps(const ap_hash_ring *ring, uint64_t h,
                                     const uint8_t *usable, size_t *member,
                                     size_t *steps, ap_error *err);

/* Fraction of the 64-bit hash space that member m owns. */
double ap_hash_ring_share(const ap_hash_ring *ring, size_t m);

#ifdef __cplusplus
}
#endif

#endif /* AP_HASH_RING_H */
