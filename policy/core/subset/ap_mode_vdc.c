/*
 * Van der Corput mode (seed 001): the endpoint with ring index k sits at
 * vdc(k), the client at vdc(peer_index); the members are the A endpoints
 * met first walking clockwise from the client's position (a point at the
 * client's own position counts), each a full member. offset = the client's
 * position; width = the distance from it to the position of the first
 * endpoint after the last member, i.e. the half-open window that holds
 * exactly the members' points (1 when A = N).
 *
 * Positions are compared as 32-bit reversed integers, so the order is exact.
 */
#include <stdlib.h>
#include <string.h>

#include "policy/core/subset/ap_aperture_internal.h"
#include "policy/core/ring/ap_vdc.h"

static int compare_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int ap_vdc_order(uint32_t anchor, size_t n, uint32_t *order, ap_error *err) {
  uint64_t *keys = malloc(n * sizeof(uint64_t));
  if (keys == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory for %zu positions", n);
  }
  for (size_t k = 0; k < n; ++k) {
    /* Clockwise distance from the anchor, modulo 2^32, then the index. */
    const uint32_t distance = ap_vdc_bits((uint32_t)k) - anchor;
    keys[k] = ((uint64_t)distance << 32) | (uint64_t)k;
  }
  qsort(keys, n, sizeof(uint64_t), compare_u64);
  for (size_t k = 0; k < n; ++k) order[k] = (uint32_t)(keys[k] & 0xFFFFFFFFu);
  free(keys);
  return AP_OK;
}

/* The first m entries of ap_vdc_order() (m <= n). Small m: one pass keeping
 * the m smallest keys in a sorted buffer (O(N) expected: after the first few
 * thousand keys almost none enters the buffer); large m: the full sort. */
#define AP_VDC_SELECT_MAX 64

static int vdc_first(uint32_t anchor, size_t n, size_t m, uint32_t *out,
                     ap_error *err) {
  if (m > AP_VDC_SELECT_MAX) {
    uint32_t *order = malloc(n * sizeof(uint32_t));
    if (order == NULL) {
      return ap_error_set(err, AP_ENOMEM, "out of memory for a vdc order");
    }
    int rc = ap_vdc_order(anchor, n, order, err);
    if (rc == AP_OK) memcpy(out, order, m * sizeof(uint32_t));
    free(order);
    return rc;
  }
  uint64_t best[AP_VDC_SELECT_MAX];
  size_t have = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t distance = ap_vdc_bits((uint32_t)k) - anchor;
    const uint64_t key = ((uint64_t)distance << 32) | (uint64_t)k;
    if (have == m && key >= best[m - 1]) continue;
    size_t pos = have < m ? have++ : m - 1;
    while (pos > 0 && best[pos - 1] > key) {
      best[pos] = best[pos - 1];
      --pos;
    }
    best[pos] = key;
  }
  for (size_t k = 0; k < m; ++k) out[k] = (uint32_t)(best[k] & 0xFFFFFFFFu);
  return AP_OK;
}

int ap_mode_vdc_compute(const ap_ring *ring, const ap_subset_params *p,
                        uint32_t logical, ap_aperture **out, ap_error *err) {
  const size_t n = ap_ring_size(ring);
  const uint32_t anchor = ap_vdc_bits(p->peer_index);
  /* The members and, for the width, the endpoint after them. */
  const size_t m = (size_t)logical < n ? (size_t)logical + 1 : n;
  uint32_t *order = malloc(m * sizeof(uint32_t));
  ap_aperture *ap = ap_aperture_alloc(logical);
  if (order == NULL || ap == NULL) {
    free(order);
    ap_aperture_destroy(ap);
    return ap_error_set(err, AP_ENOMEM, "out of memory for a vdc order");
  }
  int rc = vdc_first(anchor, n, m, order, err);
  if (rc != AP_OK) {
    free(order);
    ap_aperture_destroy(ap);
    return rc;
  }
  for (size_t k = 0; k < logical; ++k) {
    ap_aperture_push(ap, order[k], 1.0, ap_ring_weight(ring, order[k]), 0);
  }
  ap->offset = ap_vdc(p->peer_index);
  if ((size_t)logical >= n) {
    ap->width = 1.0;
  } else {
    const uint32_t next = ap_vdc_bits(order[logical]) - anchor;
    ap->width = next == 0 ? 1.0 : (double)next * 0x1.0p-32;
  }
  ap->vdc_anchor = anchor;
  free(order);
  *out = ap;
  return AP_OK;
}
