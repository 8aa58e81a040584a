/*
 * Continuous mode: Finagle's deterministic aperture.
 *   offset = index / count
 *   width  = min(1, ceil(A * count / N) / count)
 * The ceiling is taken in integers (A, count <= 10^6, so A * count < 2^53)
 * and the window's ends are (index + m) / count with one rounding each, so
 * boundaries that coincide with arc boundaries i / N coincide exactly.
 */
#include "policy/core/subset/ap_aperture_internal.h"

int ap_mode_continuous_compute(const ap_ring *ring, const ap_subset_params *p,
                               uint32_t logical, ap_aperture **out,
                               ap_error *err) {
  const uint64_t n = ap_ring_size(ring);
  const uint64_t count = p->peer_count;
  const uint64_t m = ((uint64_t)logical * count + n - 1) / n; /* ceil */
  const ap_window w = ap_window_rational(p->peer_index, m, count);
  int rc = ap_window_members(ring, &w, out, err);
  if (rc != AP_OK) return rc;
  (*out)->offset = (double)p->peer_index / (double)count;
  (*out)->width = m >= count ? 1.0 : (double)m / (double)count;
  return AP_OK;
}
