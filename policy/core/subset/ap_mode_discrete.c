/*
 * Discrete mode: the A endpoints clockwise from integer slot
 * floor(index * N / count), each a full member (intersection 1). The window
 * reported is the union of their arcs: offset = start of the first arc,
 * width = sum of the member arcs (1 when A = N).
 */
#include "policy/core/subset/ap_aperture_internal.h"

int ap_mode_discrete_compute(const ap_ring *ring, const ap_subset_params *p,
                             uint32_t logical, ap_aperture **out,
                             ap_error *err) {
  const size_t n = ap_ring_size(ring);
  const size_t slot =
      (size_t)(((uint64_t)p->peer_index * (uint64_t)n) / p->peer_count);
  ap_aperture *ap = ap_aperture_alloc(logical);
  if (ap == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory for %u members",
                        logical);
  }
  double width = 0.0;
  for (size_t k = 0; k < logical; ++k) {
    const size_t i = (slot + k) % n;
    ap_aperture_push(ap, (uint32_t)i, 1.0, ap_ring_weight(ring, i), 0);
    width += ap_ring_arc_width(ring, i);
  }
  ap->offset = ap_ring_arc_start(ring, slot);
  ap->width = (size_t)logical >= n || width > 1.0 ? 1.0 : width;
  *out = ap;
  return AP_OK;
}
