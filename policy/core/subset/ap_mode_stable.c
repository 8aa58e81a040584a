/*
 * Stable mode: the client's row of the service's stable plan (ap_stable.h),
 * which the caller builds from the keys and passes in params.stable_plan,
 * once per ring, as every client of the service does. Widening walks the
 * ring clockwise from the last member, as the window modes do.
 */
#include "policy/core/subset/ap_aperture_internal.h"
#include "policy/core/stable/ap_stable.h"

int ap_mode_stable_compute(const ap_ring *ring, const ap_subset_params *p,
                           uint32_t logical, ap_aperture **out, ap_error *err) {
  (void)logical;
  const size_t n = ap_ring_size(ring);
  const ap_stable_plan *plan = p->stable_plan;
  if (plan == NULL) {
    return ap_error_set(err, AP_EINVAL,
                        "params.stable_plan is required in stable mode (build "
                        "it with ap_stable_plan_create from the keys)");
  }
  if (ap_stable_plan_endpoints(plan) != n ||
      ap_stable_plan_clients(plan) != p->peer_count) {
    return ap_error_set(err, AP_EINVAL,
                        "params.stable_plan is for %zu endpoints and %zu "
                        "peers, not %zu and %u",
                        ap_stable_plan_endpoints(plan),
                        ap_stable_plan_clients(plan), n, p->peer_count);
  }
  const size_t count = ap_stable_plan_row_size(plan, p->peer_index);
  const uint32_t *members = ap_stable_plan_row_endpoints(plan, p->peer_index);
  const double *shares = ap_stable_plan_row_shares(plan, p->peer_index);
  ap_aperture *ap = ap_aperture_alloc(count);
  if (ap == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory for an aperture");
  for (size_t k = 0; k < count; ++k)
    ap_aperture_push(ap, members[k], 1.0, shares[k] * (double)count, 0);
  const uint64_t start = ap_stable_plan_client_start(plan, p->peer_index);
  ap->offset = (double)(start >> 11) * 0x1.0p-53;
  ap->width = (double)count / (double)n;
  *out = ap;
  return AP_OK;
}
