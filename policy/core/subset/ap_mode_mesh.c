/* Mesh mode: every endpoint, full intersection, window [0, 1). */
#include "policy/core/subset/ap_aperture_internal.h"

int ap_mode_mesh_compute(const ap_ring *ring, const ap_subset_params *p,
                         uint32_t logical, ap_aperture **out, ap_error *err) {
  (void)p;
  (void)logical;
  const size_t n = ap_ring_size(ring);
  ap_aperture *ap = ap_aperture_alloc(n);
  if (ap == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory for %zu members", n);
  }
  for (size_t i = 0; i < n; ++i) {
    ap_aperture_push(ap, (uint32_t)i, 1.0, ap_ring_weight(ring, i), 0);
  }
  ap->offset = 0.0;
  ap->width = 1.0;
  *out = ap;
  return AP_OK;
}
