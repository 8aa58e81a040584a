/*
 * ap_ring_internal: the ring's representation, shared with the aperture
 * modes of this library only (not part of the public contract).
 */
#ifndef AP_RING_INTERNAL_H
#define AP_RING_INTERNAL_H

#include <stddef.h>

#include "policy/core/ring/ap_ring.h"

struct ap_ring {
  size_t n;
  double *bounds;      /* n + 1 arc boundaries, bounds[0] = 0, bounds[n] = 1 */
  double *weights;     /* n weights, or NULL when all are 1 */
  double total_weight; /* sum of weights (n when unweighted) */
};

/* x modulo 1 in [0, 1); non-finite x maps to 0. */
double ap_ring_wrap(double x);

#endif /* AP_RING_INTERNAL_H */
