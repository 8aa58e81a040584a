/*
 * Stable mode: the client's row of the stable plan (ap_stable.h). The plan
 * is the whole service's, so a caller computing many apertures on one ring
 * (the simulator) passes it prebuilt; otherwise it is built here from the
 * keys and freed. Widening walks the ring clockwise from the last member,
 * as the window modes do.
 */
#include <stdlib.h>

#include "policy/core/ap_aperture_internal.h"
#include "policy/core/ap_stable.h"

static int build_plan(const ap_ring *ring, const ap_subset_params *p,
                      ap_stable_plan **plan, ap_error *err) {
  const size_t n = ap_ring_size(ring);
  const size_t c = p->peer_count;
  uint64_t *endpoint_keys = NULL, *peer_keys = NULL;
  double *weights = malloc(n * sizeof(double));
  if (p->endpoint_keys == NULL) endpoint_keys = malloc(n * sizeof(uint64_t));
  if (p->peer_keys == NULL) peer_keys = malloc(c * sizeof(uint64_t));
  int rc = AP_OK;
  if (weights == NULL || (p->endpoint_keys == NULL && endpoint_keys == NULL) ||
      (p->peer_keys == NULL && peer_keys == NULL)) {
    rc = ap_error_set(err, AP_ENOMEM, "out of memory for the stable keys");
  } else {
    for (size_t s = 0; s < n; ++s) weights[s] = ap_ring_weight(ring, s);
    if (endpoint_keys != NULL)
      for (size_t s = 0; s < n; ++s) endpoint_keys[s] = ap_stable_ordinal_key(s);
    if (peer_keys != NULL)
      for (size_t i = 0; i < c; ++i) peer_keys[i] = ap_stable_ordinal_key(i);
    rc = ap_stable_plan_create(
        p->endpoint_keys ? p->endpoint_keys : endpoint_keys, weights, n,
        p->peer_keys ? p->peer_keys : peer_keys, c, p->min_aperture, plan,
        err);
  }
  free(weights);
  free(endpoint_keys);
  free(peer_keys);
  return rc;
}

int ap_mode_stable_compute(const ap_ring *ring, const ap_subset_params *p,
                           uint32_t logical, ap_aperture **out, ap_error *err) {
  (void)logical;
  const size_t n = ap_ring_size(ring);
  const ap_stable_plan *plan = p->stable_plan;
  ap_stable_plan *owned = NULL;
  if (plan != NULL) {
    if (ap_stable_plan_endpoints(plan) != n ||
        ap_stable_plan_clients(plan) != p->peer_count) {
      return ap_error_set(err, AP_EINVAL,
                          "params.stable_plan is for %zu endpoints and %zu "
                          "peers, not %zu and %u",
                          ap_stable_plan_endpoints(plan),
                          ap_stable_plan_clients(plan), n, p->peer_count);
    }
  } else {
    int rc = build_plan(ring, p, &owned, err);
    if (rc != AP_OK) return rc;
    plan = owned;
  }
  const size_t count = ap_stable_plan_row_size(plan, p->peer_index);
  const uint32_t *members = ap_stable_plan_row_endpoints(plan, p->peer_index);
  const double *shares = ap_stable_plan_row_shares(plan, p->peer_index);
  ap_aperture *ap = ap_aperture_alloc(count);
  if (ap == NULL) {
    ap_stable_plan_destroy(owned);
    return ap_error_set(err, AP_ENOMEM, "out of memory for an aperture");
  }
  for (size_t k = 0; k < count; ++k)
    ap_aperture_push(ap, members[k], 1.0, shares[k] * (double)count, 0);
  const uint64_t key = p->peer_keys ? p->peer_keys[p->peer_index]
                                    : ap_stable_ordinal_key(p->peer_index);
  ap->offset = (double)(ap_stable_client_point(key, 0) >> 11) * 0x1.0p-53;
  ap->width = (double)count / (double)n;
  ap_stable_plan_destroy(owned);
  *out = ap;
  return AP_OK;
}
