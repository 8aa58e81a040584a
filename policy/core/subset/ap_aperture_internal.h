/*
 * ap_aperture_internal: the aperture's representation and the per-mode
 * entry points, shared by ap_aperture.c, ap_widen.c and ap_mode_*.c only
 * (not part of the public contract).
 */
#ifndef AP_APERTURE_INTERNAL_H
#define AP_APERTURE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ring/ap_ring.h"

/* An arc whose overlap with a window is at most this fraction of the arc's
 * width is not a member: such slivers come from rounding at boundaries that
 * coincide mathematically (e.g. a window ending at 3/10 and an arc starting
 * at 3/10 computed along different paths). */
#define AP_SLIVER_TOLERANCE 1e-12

typedef struct ap_slot_ref {
  uint32_t ring_index;
  uint32_t slot;
} ap_slot_ref;

struct ap_aperture {
  ap_mode mode;
  double offset;
  double width;
  uint32_t logical;     /* A = min(min_aperture, N) */
  size_t ring_size;     /* N of the ring it was computed on */
  uint64_t random_seed; /* random mode: seed of the order, for widening */
  uint32_t vdc_anchor;  /* vdc mode: client position bits, for widening */
  size_t count;         /* members, widened included */
  size_t widened;       /* members added by widening (the last ones) */
  ap_member *members;
  ap_slot_ref *lookup;  /* count entries sorted by ring index */
};

/* Allocates an aperture with room for `capacity` members (count = 0).
 * NULL on allocation failure. */
ap_aperture *ap_aperture_alloc(size_t capacity);

/* Appends a member (capacity must allow it). */
void ap_aperture_push(ap_aperture *ap, uint32_t ring_index,
                      double intersection, double pick_weight, int widened);

/* Builds the lookup index once the members are final. AP_ENOMEM on failure
 * (the aperture is then freed and *ap set to NULL). */
int ap_aperture_seal(ap_aperture **ap, ap_error *err);

/* A window on the ring as one or two half-open segments in [0, 1]:
 * [start, end1) and, when it wraps past 1, [0, end2). */
typedef struct ap_window {
  double start;
  double end1;
  double end2; /* 0 when the window does not wrap */
  int full;    /* covers the whole ring */
} ap_window;

/* The window [start_num / den, (start_num + len_num) / den) mod 1, each
 * boundary computed with a single rounding (all values < 2^53, start_num <
 * den). len_num >= den gives the full ring. */
ap_window ap_window_rational(uint64_t start_num, uint64_t len_num,
                             uint64_t den);

/* The window [offset, offset + width) mod 1 for finite offset in [0, 1) and
 * width in (0, 1]. */
ap_window ap_window_real(double offset, double width);

/* Every endpoint overlapping the window (beyond AP_SLIVER_TOLERANCE), in
 * ring order from the arc containing the window's start, with
 * intersection = overlap / arc width and pick_weight = intersection x
 * endpoint weight. At least one member (the arc at the start) always. */
int ap_window_members(const ap_ring *ring, const ap_window *w,
                      ap_aperture **out, ap_error *err);

/* Per-mode computations. `logical` is A = min(min_aperture, N) >= 1; params
 * are validated and the coordinate is known (peer_count > 0) except for
 * random and mesh. Each sets mode, offset, width, logical and the members. */
int ap_mode_continuous_compute(const ap_ring *ring, const ap_subset_params *p,
                               uint32_t logical, ap_aperture **out,
                               ap_error *err);
int ap_mode_discrete_compute(const ap_ring *ring, const ap_subset_params *p,
                             uint32_t logical, ap_aperture **out,
                             ap_error *err);
int ap_mode_random_compute(const ap_ring *ring, const ap_subset_params *p,
                           uint32_t logical, ap_aperture **out, ap_error *err);
int ap_mode_vdc_compute(const ap_ring *ring, const ap_subset_params *p,
                        uint32_t logical, ap_aperture **out, ap_error *err);
int ap_mode_mesh_compute(const ap_ring *ring, const ap_subset_params *p,
                         uint32_t logical, ap_aperture **out, ap_error *err);
int ap_mode_stable_compute(const ap_ring *ring, const ap_subset_params *p,
                           uint32_t logical, ap_aperture **out, ap_error *err);
int ap_mode_smooth_compute(const ap_ring *ring, const ap_subset_params *p,
                           uint32_t logical, ap_aperture **out, ap_error *err);

/* The random order of ring indices for `seed`: fills order[0..prefix) with
 * the first `prefix` entries of a seeded Fisher-Yates shuffle of 0..n-1
 * (order must have room for n entries; a longer prefix extends a shorter
 * one). */
void ap_random_order(uint64_t seed, size_t n, size_t prefix, uint32_t *order);

/* Ring indices sorted clockwise by Van der Corput position starting at the
 * position `anchor` (bits as ap_vdc_bits()); order has n entries. AP_ENOMEM
 * on failure. */
int ap_vdc_order(uint32_t anchor, size_t n, uint32_t *order, ap_error *err);

#endif /* AP_APERTURE_INTERNAL_H */
