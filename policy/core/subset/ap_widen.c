/*
 * ap_widen: health widening. When too few members are ready, add the next
 * endpoints after the aperture until enough are ready or all are members.
 * "Next" follows the mode's own order: along the ring clockwise from the
 * last member for the window modes (continuous, smooth, discrete, mesh),
 * the seeded random order for random, the position order from the client
 * for vdc.
 *
 * The window modes walk the ring from the last member and cost
 * O(members); random and vdc build their whole order, O(N).
 *
 * Added members have intersection 1 and widened = 1. Their pick weight is a
 * full member's at the base's scale: endpoint weight x R, where R = sum of
 * the base's pick weights / sum of its intersection x endpoint weight (1 in
 * every mode but smooth, where it keeps a widened member comparable to the
 * coverage-normalised ones).
 */
#include <stdlib.h>
#include <string.h>

#include "policy/core/subset/ap_aperture_internal.h"

static ap_aperture *copy_members(const ap_aperture *base, size_t capacity) {
  ap_aperture *ap = ap_aperture_alloc(capacity);
  if (ap == NULL) return NULL;
  memcpy(ap->members, base->members, base->count * sizeof(ap_member));
  ap->count = base->count;
  ap->widened = base->widened;
  ap->mode = base->mode;
  ap->offset = base->offset;
  ap->width = base->width;
  ap->logical = base->logical;
  ap->ring_size = base->ring_size;
  ap->random_seed = base->random_seed;
  ap->vdc_anchor = base->vdc_anchor;
  return ap;
}

/* Grows ap->members to hold at least `need` members; *capacity tracks the
 * allocation. */
static int reserve_members(ap_aperture *ap, size_t *capacity, size_t need) {
  if (need <= *capacity) return 1;
  size_t grown = *capacity * 2 > need ? *capacity * 2 : need;
  ap_member *members = realloc(ap->members, grown * sizeof(ap_member));
  if (members == NULL) return 0;
  ap->members = members;
  *capacity = grown;
  return 1;
}

/* Window modes: the candidates are the ring indices clockwise after the
 * last member, each visited once, so the base's own lookup is the only
 * membership test needed. Costs O(members added + base count), not O(N):
 * a member's failure on a ring of a million endpoints touches only the
 * few endpoints it brings in. */
static int widen_clockwise(const ap_ring *ring, const ap_aperture *base,
                           const uint8_t *ready, uint32_t min_ready,
                           size_t have, double scale, ap_aperture **out,
                           ap_error *err) {
  const size_t n = ap_ring_size(ring);
  size_t capacity = base->count + (min_ready - have) + 1;
  ap_aperture *ap = copy_members(base, capacity);
  if (ap == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  size_t first = ap_ring_index_at(ring, base->offset);
  if (base->count > 0) {
    /* Clockwise after the last (possibly already widened) member. */
    first = (base->members[base->count - 1].index + 1) % n;
  }
  for (size_t k = 0; k < n && have < min_ready; ++k) {
    const uint32_t i = (uint32_t)((first + k) % n);
    if (ap_aperture_find(base, i, NULL)) continue;
    if (!reserve_members(ap, &capacity, ap->count + 1)) {
      ap_aperture_destroy(ap);
      return ap_error_set(err, AP_ENOMEM, "out of memory widening over %zu",
                          n);
    }
    ap_aperture_push(ap, i, 1.0, scale * ap_ring_weight(ring, i), 1);
    if (ready[i]) ++have;
  }
  int rc = ap_aperture_seal(&ap, err);
  if (rc == AP_OK) *out = ap;
  return rc;
}

/* The widening order of random and vdc: candidate ring indices in the order they are added
 * (members included; they are skipped later). */
static int widening_order(const ap_ring *ring, const ap_aperture *base,
                          uint32_t *order, ap_error *err) {
  const size_t n = ap_ring_size(ring);
  switch (base->mode) {
    case AP_MODE_RANDOM:
      ap_random_order(base->random_seed, n, n, order);
      return AP_OK;
    case AP_MODE_VDC:
      return ap_vdc_order(base->vdc_anchor, n, order, err);
    default:
      return ap_error_set(err, AP_EINVAL, "mode %d widens clockwise",
                          (int)base->mode);
  }
}

int ap_aperture_widen(const ap_ring *ring, const ap_aperture *base,
                      const uint8_t *ready, uint32_t min_ready,
                      ap_aperture **out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  *out = NULL;
  if (ring == NULL) return ap_error_set(err, AP_EINVAL, "ring must not be NULL");
  if (base == NULL) return ap_error_set(err, AP_EINVAL, "base must not be NULL");
  if (ready == NULL) {
    return ap_error_set(err, AP_EINVAL, "ready must not be NULL");
  }
  const size_t n = ap_ring_size(ring);
  if (base->ring_size != n) {
    return ap_error_set(err, AP_EINVAL,
                        "base was computed on a ring of %zu endpoints, ring "
                        "has %zu",
                        base->ring_size, n);
  }
  size_t have = 0;
  double scaled = 0.0, plain = 0.0;
  for (size_t k = 0; k < base->count; ++k) {
    const ap_member *m = &base->members[k];
    if (ready[m->index]) ++have;
    if (!m->widened) {
      scaled += m->pick_weight;
      plain += m->intersection * ap_ring_weight(ring, m->index);
    }
  }
  const double scale = plain > 0.0 && scaled > 0.0 ? scaled / plain : 1.0;

  if (have >= min_ready || base->count >= n) {
    ap_aperture *copy = copy_members(base, base->count);
    if (copy == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
    int rc = ap_aperture_seal(&copy, err);
    if (rc == AP_OK) *out = copy;
    return rc;
  }

  if (base->mode != AP_MODE_RANDOM && base->mode != AP_MODE_VDC) {
    return widen_clockwise(ring, base, ready, min_ready, have, scale, out,
                           err);
  }
  /* Random and vdc orders are permutations of the whole ring: O(N). */
  uint32_t *order = malloc(n * sizeof(uint32_t));
  uint8_t *member = calloc(n, 1);
  ap_aperture *ap = copy_members(base, n);
  if (order == NULL || member == NULL || ap == NULL) {
    free(order);
    free(member);
    ap_aperture_destroy(ap);
    return ap_error_set(err, AP_ENOMEM, "out of memory widening over %zu", n);
  }
  int rc = widening_order(ring, base, order, err);
  if (rc == AP_OK) {
    for (size_t k = 0; k < base->count; ++k) member[base->members[k].index] = 1;
    for (size_t k = 0; k < n && have < min_ready; ++k) {
      const uint32_t i = order[k];
      if (member[i]) continue;
      member[i] = 1;
      ap_aperture_push(ap, i, 1.0, scale * ap_ring_weight(ring, i), 1);
      if (ready[i]) ++have;
    }
    rc = ap_aperture_seal(&ap, err);
  } else {
    ap_aperture_destroy(ap);
  }
  free(order);
  free(member);
  if (rc == AP_OK) *out = ap;
  return rc;
}
