/*
 * ap_window: windows on the ring and the endpoints they overlap (the
 * continuous membership shared by continuous, smooth and explicit windows).
 */
#include <math.h>
#include <stdlib.h>

#include "policy/core/subset/ap_aperture_internal.h"
#include "policy/core/ring/ap_ring_internal.h"

ap_window ap_window_rational(uint64_t start_num, uint64_t len_num,
                             uint64_t den) {
  ap_window w = {0.0, 1.0, 0.0, 0};
  const double d = (double)den;
  w.start = (double)start_num / d;
  if (len_num >= den) {
    w.full = 1;
    return w;
  }
  const uint64_t end = start_num + len_num;
  if (end <= den) {
    w.end1 = (double)end / d;
  } else {
    w.end1 = 1.0;
    w.end2 = (double)(end - den) / d;
  }
  return w;
}

ap_window ap_window_real(double offset, double width) {
  ap_window w = {0.0, 1.0, 0.0, 0};
  w.start = ap_ring_wrap(offset);
  if (width >= 1.0) {
    w.full = 1;
    return w;
  }
  const double end = w.start + width;
  if (end <= 1.0) {
    w.end1 = end;
  } else {
    w.end1 = 1.0;
    w.end2 = width - (1.0 - w.start); /* the part past 1 */
  }
  return w;
}

static double overlap_1d(double a0, double a1, double w0, double w1) {
  const double lo = a0 > w0 ? a0 : w0;
  const double hi = a1 < w1 ? a1 : w1;
  return hi > lo ? hi - lo : 0.0;
}

/* Length of arc i's overlap with the window. */
static double window_overlap(const ap_ring *ring, const ap_window *w, size_t i) {
  const double a0 = ring->bounds[i], a1 = ring->bounds[i + 1];
  if (w->full) return a1 - a0;
  double ov = overlap_1d(a0, a1, w->start, w->end1);
  if (w->end2 > 0.0) ov += overlap_1d(a0, a1, 0.0, w->end2);
  return ov;
}

double ap_ring_overlap(const ap_ring *ring, size_t i, double offset,
                       double width) {
  if (ring == NULL || i >= ring->n || !isfinite(offset) || !isfinite(width) ||
      !(width > 0.0)) {
    return 0.0;
  }
  const ap_window w = ap_window_real(offset, width);
  return window_overlap(ring, &w, i);
}

/* Walks the arcs clockwise from the one containing the window's start and
 * calls back for each member; returns the member count. The walk stops at
 * the first arc that starts at or after the window's end, so it costs
 * O(members) after the O(1) / O(log N) start lookup. */
typedef void (*member_fn)(void *ctx, size_t index, double intersection);

static size_t walk(const ap_ring *ring, const ap_window *w, member_fn fn,
                   void *ctx) {
  const size_t n = ring->n;
  const double *b = ring->bounds;
  const size_t s = ap_ring_index_at(ring, w->start);
  size_t members = 0;
  for (size_t k = 0; k < n; ++k) {
    size_t j = s + k;
    const int wrapped = j >= n;
    if (wrapped) j -= n;
    if (k > 0 && !w->full) {
      if (!wrapped && w->end2 == 0.0 && b[j] >= w->end1) break;
      if (wrapped && b[j] >= w->end2) break;
    }
    const double arc = b[j + 1] - b[j];
    const double ov = window_overlap(ring, w, j);
    if (ov > AP_SLIVER_TOLERANCE * arc) {
      double x = ov / arc;
      if (x > 1.0) x = 1.0;
      if (fn != NULL) fn(ctx, j, x);
      ++members;
    }
  }
  if (members == 0) {
    /* A window narrower than the tolerance still touches the arc it starts
     * in: keep that one so that no aperture is empty. */
    const double arc = b[s + 1] - b[s];
    double x = arc > 0.0 ? window_overlap(ring, w, s) / arc : 1.0;
    if (!(x > 0.0)) x = 0x1.0p-1022; /* smallest normal: still "in (0, 1]" */
    if (fn != NULL) fn(ctx, s, x);
    members = 1;
  }
  return members;
}

typedef struct push_ctx {
  const ap_ring *ring;
  ap_aperture *ap;
} push_ctx;

static void push_member(void *ctx, size_t index, double intersection) {
  push_ctx *c = (push_ctx *)ctx;
  ap_aperture_push(c->ap, (uint32_t)index, intersection,
                   intersection * ap_ring_weight(c->ring, index), 0);
}

int ap_window_members(const ap_ring *ring, const ap_window *w,
                      ap_aperture **out, ap_error *err) {
  const size_t count = walk(ring, w, NULL, NULL);
  ap_aperture *ap = ap_aperture_alloc(count);
  if (ap == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory for %zu members",
                        count);
  }
  push_ctx ctx = {ring, ap};
  walk(ring, w, push_member, &ctx);
  *out = ap;
  return AP_OK;
}
