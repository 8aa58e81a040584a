/*
 * ap_hash_ring_testing: the ring's size, for tests of its layout. Only tests
 * include this header; no product code calls these.
 */
#ifndef AP_TESTING_HASH_RING_TESTING_H
#define AP_TESTING_HASH_RING_TESTING_H

#include "policy/affinity/ap_hash_ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of points (virtual nodes); tests check the vnode budget with it. */
size_t ap_hash_ring_points(const ap_hash_ring *ring);

#ifdef __cplusplus
}
#endif

#endif /* AP_TESTING_HASH_RING_TESTING_H */
