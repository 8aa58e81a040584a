/*
 * ap_ring: arc boundaries of N endpoints on [0, 1).
 *
 * The ring stores the N + 1 boundaries b[0] = 0 < ... < b[N] = 1; endpoint i
 * owns [b[i], b[i+1]). Equal weights use b[i] = i / N (one correctly rounded
 * division, so a client offset p / C that equals i / N as a rational is the
 * same double). Weighted rings use prefix sums in long double divided by the
 * total. Arc widths are b[i+1] - b[i], so arcs tile the ring with no gap and
 * a fully covered arc has intersection exactly 1.
 */
#include "policy/core/ring/ap_ring.h"
#include "policy/core/ring/ap_ring_testing.h"

#include <math.h>
#include <stdlib.h>

#include "policy/core/ap_limits.h"
#include "policy/core/ring/ap_ring_internal.h"

int ap_ring_create(const double *weights, size_t n, ap_ring **out,
                   ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  *out = NULL;
  if (n == 0 || n > AP_MAX_ENDPOINTS) {
    return ap_error_set(err, AP_ERANGE,
                        "n (endpoint count) is %zu, must be in [1, %zu]", n,
                        AP_MAX_ENDPOINTS);
  }
  long double total = 0.0L;
  if (weights != NULL) {
    for (size_t i = 0; i < n; ++i) {
      const double w = weights[i];
      if (!isfinite(w) || !(w > 0.0)) {
        return ap_error_set(err, AP_EINVAL,
                            "weights[%zu] is %g, must be finite and > 0", i, w);
      }
      total += w;
    }
    if (!isfinite((double)total)) {
      return ap_error_set(err, AP_ERANGE, "sum of weights overflows");
    }
  }
  ap_ring *ring = calloc(1, sizeof(*ring));
  double *bounds = malloc((n + 1) * sizeof(double));
  double *copy = weights != NULL ? malloc(n * sizeof(double)) : NULL;
  if (ring == NULL || bounds == NULL || (weights != NULL && copy == NULL)) {
    free(ring);
    free(bounds);
    free(copy);
    return ap_error_set(err, AP_ENOMEM, "out of memory building a ring of %zu",
                        n);
  }
  if (weights == NULL) {
    const double dn = (double)n;
    for (size_t i = 0; i < n; ++i) bounds[i] = (double)i / dn;
  } else {
    long double prefix = 0.0L;
    for (size_t i = 0; i < n; ++i) {
      bounds[i] = (double)(prefix / total);
      prefix += weights[i];
      copy[i] = weights[i];
    }
  }
  bounds[n] = 1.0;
  ring->n = n;
  ring->bounds = bounds;
  ring->weights = copy;
  ring->total_weight = weights == NULL ? (double)n : (double)total;
  *out = ring;
  return AP_OK;
}

void ap_ring_destroy(ap_ring *ring) {
  if (ring == NULL) return;
  free(ring->bounds);
  free(ring->weights);
  free(ring);
}

size_t ap_ring_size(const ap_ring *ring) { return ring == NULL ? 0 : ring->n; }

double ap_ring_arc_start(const ap_ring *ring, size_t i) {
  if (ring == NULL || i >= ring->n) return 0.0;
  return ring->bounds[i];
}

double ap_ring_arc_width(const ap_ring *ring, size_t i) {
  if (ring == NULL || i >= ring->n) return 0.0;
  return ring->bounds[i + 1] - ring->bounds[i];
}

double ap_ring_weight(const ap_ring *ring, size_t i) {
  if (ring == NULL || i >= ring->n) return 0.0;
  return ring->weights == NULL ? 1.0 : ring->weights[i];
}

double ap_ring_wrap(double x) {
  if (!isfinite(x)) return 0.0;
  double r = x - floor(x);
  /* x slightly below an integer can round up to exactly 1. */
  return r >= 1.0 ? 0.0 : r;
}

size_t ap_ring_index_at(const ap_ring *ring, double x) {
  if (ring == NULL || ring->n == 0) return 0;
  const size_t n = ring->n;
  const double *b = ring->bounds;
  x = ap_ring_wrap(x);
  size_t lo, hi; /* answer in [lo, hi] */
  if (ring->weights == NULL) {
    /* Guess floor(x * n), then correct by at most a step either way against
     * the stored boundaries, which define the arcs. */
    size_t guess = (size_t)(x * (double)n);
    if (guess >= n) guess = n - 1;
    lo = guess > 0 ? guess - 1 : 0;
    hi = guess + 1 < n ? guess + 1 : n - 1;
    if (b[lo] > x) lo = 0;
    if (b[hi + 1] <= x) hi = n - 1;
  } else {
    lo = 0;
    hi = n - 1;
  }
  /* Largest i in [lo, hi] with b[i] <= x (b[lo] <= x holds). */
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    if (b[mid] <= x) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

