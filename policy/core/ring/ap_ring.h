/*
 * ap_ring: N endpoints laid end to end on the unit ring [0, 1), endpoint i
 * owning the arc [start_i, start_i + width_i) with width proportional to its
 * weight (1/N each when unweighted). Endpoints are indexed in ring order
 * (see ap_order.h). Immutable after creation; safe to read from any thread.
 */
#ifndef AP_RING_H
#define AP_RING_H

#include <stddef.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ap_ring ap_ring;

/* Builds a ring of `n` endpoints. `weights` may be NULL (all equal); else
 * every weight must be finite and > 0 (AP_EINVAL names the bad index).
 * n must be in [1, AP_MAX_ENDPOINTS] (AP_ERANGE). On success *out owns a
 * new ring; free it with ap_ring_destroy(). */
int ap_ring_create(const double *weights, size_t n, ap_ring **out,
                   ap_error *err);

/* Frees a ring (NULL is ignored). */
void ap_ring_destroy(ap_ring *ring);

/* Number of endpoints. */
size_t ap_ring_size(const ap_ring *ring);

/* Start and width of endpoint i's arc; 0 for an out-of-range i. */
double ap_ring_arc_start(const ap_ring *ring, size_t i);
double ap_ring_arc_width(const ap_ring *ring, size_t i);

/* Weight endpoint i was created with (1.0 when unweighted); 0 if out of range. */
double ap_ring_weight(const ap_ring *ring, size_t i);

/* Index of the endpoint whose arc contains point x (taken modulo 1). */
size_t ap_ring_index_at(const ap_ring *ring, double x);

#ifdef __cplusplus
}
#endif

#endif /* AP_RING_H */
