/*
 * ap_aperture: the aperture's data structure (the members a mode computes,
 * the lookup index sealed over them), its accessors and its destruction.
 * Which members a client has is computed elsewhere: ap_subset.c dispatches
 * to the modes (ap_mode_*.c), which build apertures with the functions here.
 */
#include "policy/core/subset/ap_aperture.h"

#include <stdlib.h>

#include "policy/core/subset/ap_aperture_internal.h"

ap_aperture *ap_aperture_alloc(size_t capacity) {
  ap_aperture *ap = calloc(1, sizeof(*ap));
  if (ap == NULL) return NULL;
  ap->members = calloc(capacity > 0 ? capacity : 1, sizeof(ap_member));
  if (ap->members == NULL) {
    free(ap);
    return NULL;
  }
  return ap;
}

void ap_aperture_push(ap_aperture *ap, uint32_t ring_index,
                      double intersection, double pick_weight, int widened) {
  ap_member *m = &ap->members[ap->count++];
  m->index = ring_index;
  m->intersection = intersection;
  m->pick_weight = pick_weight;
  m->widened = widened;
  if (widened) ap->widened++;
}

static int compare_refs(const void *a, const void *b) {
  const ap_slot_ref *x = (const ap_slot_ref *)a, *y = (const ap_slot_ref *)b;
  return (x->ring_index > y->ring_index) - (x->ring_index < y->ring_index);
}

int ap_aperture_seal(ap_aperture **ap, ap_error *err) {
  ap_aperture *a = *ap;
  a->lookup = malloc((a->count > 0 ? a->count : 1) * sizeof(ap_slot_ref));
  if (a->lookup == NULL) {
    ap_aperture_destroy(a);
    *ap = NULL;
    return ap_error_set(err, AP_ENOMEM, "out of memory for the member index");
  }
  /* Window modes list members clockwise: ascending ring indices with at
   * most one wrap. Then the sorted index is a rotation, built in O(count);
   * anything else (vdc, widened members) is sorted. */
  const size_t n = a->count;
  size_t descents = 0, wrap = 0;
  for (size_t k = 1; k < n; ++k) {
    if (a->members[k].index < a->members[k - 1].index) {
      ++descents;
      wrap = k;
    }
  }
  const int rotation =
      descents == 0 ||
      (descents == 1 && a->members[n - 1].index < a->members[0].index);
  for (size_t k = 0; k < n; ++k) {
    const size_t src = rotation ? (wrap + k) % n : k;
    a->lookup[k].ring_index = a->members[src].index;
    a->lookup[k].slot = (uint32_t)src;
  }
  if (!rotation) qsort(a->lookup, n, sizeof(ap_slot_ref), compare_refs);
  return AP_OK;
}

void ap_aperture_destroy(ap_aperture *aperture) {
  if (aperture == NULL) return;
  free(aperture->members);
  free(aperture->lookup);
  free(aperture);
}

ap_mode ap_aperture_mode(const ap_aperture *aperture) {
  return aperture == NULL ? AP_MODE_CONTINUOUS : aperture->mode;
}

double ap_aperture_offset(const ap_aperture *aperture) {
  return aperture == NULL ? 0.0 : aperture->offset;
}

double ap_aperture_width(const ap_aperture *aperture) {
  return aperture == NULL ? 0.0 : aperture->width;
}

uint32_t ap_aperture_logical(const ap_aperture *aperture) {
  return aperture == NULL ? 0 : aperture->logical;
}

size_t ap_aperture_count(const ap_aperture *aperture) {
  return aperture == NULL ? 0 : aperture->count;
}

size_t ap_aperture_widened_count(const ap_aperture *aperture) {
  return aperture == NULL ? 0 : aperture->widened;
}

const ap_member *ap_aperture_member(const ap_aperture *aperture, size_t k) {
  if (aperture == NULL || k >= aperture->count) return NULL;
  return &aperture->members[k];
}

int ap_aperture_find(const ap_aperture *aperture, uint32_t ring_index,
                     size_t *slot) {
  if (aperture == NULL || aperture->lookup == NULL) return 0;
  size_t lo = 0, hi = aperture->count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint32_t v = aperture->lookup[mid].ring_index;
    if (v == ring_index) {
      if (slot != NULL) *slot = aperture->lookup[mid].slot;
      return 1;
    }
    if (v < ring_index) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return 0;
}
