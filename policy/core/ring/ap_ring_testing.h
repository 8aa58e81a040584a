/*
 * ap_ring_testing: arc overlaps, for tests of the ring's geometry. Only
 * tests include this header; no product code calls these.
 */
#ifndef AP_RING_TESTING_H
#define AP_RING_TESTING_H

#include "policy/core/ring/ap_ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Length of the overlap of endpoint i's arc with the window
 * [offset, offset + width) taken modulo 1 (width in [0, 1]).
 * Not used by the policy: the modes compute their windows
 * in exact rational arithmetic (ap_window.c); this lets tests and tools
 * measure an aperture against the ring's arcs without re-deriving them. */
double ap_ring_overlap(const ap_ring *ring, size_t i, double offset,
                       double width);

#ifdef __cplusplus
}
#endif

#endif /* AP_RING_TESTING_H */
