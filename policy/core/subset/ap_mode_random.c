/*
 * Random mode: A endpoints taken from a seeded random order of the ring
 * (per-process seed), as random subsetting does. Members are listed in ring
 * order; the reported window is offset 0 and width = the share of the ring
 * the members' arcs cover. Widening continues in the same random order.
 */
#include <stdlib.h>

#include "policy/core/subset/ap_aperture_internal.h"
#include "policy/core/ap_rng.h"

void ap_random_order(uint64_t seed, size_t n, size_t prefix, uint32_t *order) {
  ap_rng rng;
  ap_rng_seed(&rng, seed);
  for (size_t i = 0; i < n; ++i) order[i] = (uint32_t)i;
  if (prefix > n) prefix = n;
  /* Fisher-Yates, stopped after `prefix` steps: step k only consumes the
   * k-th draw, so a longer prefix extends a shorter one. */
  for (size_t k = 0; k < prefix && k + 1 < n; ++k) {
    const size_t j = k + (size_t)ap_rng_below(&rng, n - k);
    const uint32_t t = order[k];
    order[k] = order[j];
    order[j] = t;
  }
}

static int compare_u32(const void *a, const void *b) {
  const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

int ap_mode_random_compute(const ap_ring *ring, const ap_subset_params *p,
                           uint32_t logical, ap_aperture **out,
                           ap_error *err) {
  const size_t n = ap_ring_size(ring);
  uint32_t *order = malloc(n * sizeof(uint32_t));
  ap_aperture *ap = ap_aperture_alloc(logical);
  if (order == NULL || ap == NULL) {
    free(order);
    ap_aperture_destroy(ap);
    return ap_error_set(err, AP_ENOMEM, "out of memory for a random order");
  }
  ap_random_order(p->random_seed, n, logical, order);
  qsort(order, logical, sizeof(uint32_t), compare_u32);
  double width = 0.0;
  for (size_t k = 0; k < logical; ++k) {
    const uint32_t i = order[k];
    ap_aperture_push(ap, i, 1.0, ap_ring_weight(ring, i), 0);
    width += ap_ring_arc_width(ring, i);
  }
  free(order);
  ap->offset = 0.0;
  ap->width = (size_t)logical >= n || width > 1.0 ? 1.0 : width;
  ap->random_seed = p->random_seed;
  *out = ap;
  return AP_OK;
}
