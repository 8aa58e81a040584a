/*
 * Smooth mode: a window whose width is continuous in N, with pick weights
 * normalised by coverage so that load stays exactly even.
 *
 * Window of client i of C:  offset = i / C,  w = min(1, max(A / N, 1 / C)).
 * Membership is the continuous one (every arc overlapping the window).
 *
 * Coverage. c(x) = number of the C windows containing x. Windows start at
 * multiples of 1/C and all have width w, so c is periodic with period 1/C.
 * In units y = x * C (one period = 1), with L = w * C = q + rho (q integer,
 * 0 <= rho < 1; q >= 1 because w >= 1/C): the windows containing x are those
 * that started less than L periods before it, so c = q + 1 on the first rho
 * of each period and q on the rest (c = C everywhere when w = 1).
 *
 * Weights. Member j of client i gets
 *   pick_weight(i, j) = (integral over arc_j ∩ window_i of dx / c(x))
 *                       / width(arc_j) x weight_j.
 * Since weight_j / width(arc_j) = W (the total weight) for every arc:
 *   pick_weight(i, j) = W * integral over arc_j ∩ window_i of 1 / c.
 * (1) Every window starts at a multiple of the period, so its total weight
 *     T = W * integral over window_i of 1/c is the same for all clients.
 * (2) A client picks j with probability pick_weight(i, j) / T. Summed over
 *     the clients, the integrand sum_i [x in window_i] / c(x) = 1, so server
 *     j's expected share is W * |arc_j| / T: exactly proportional to its arc
 *     (its weight), for one service and for any mix of services, each of
 *     which contributes a load proportional to arc length.
 * The integral of 1/c is evaluated in closed form per period (no sampling):
 *   G(y) = floor(y) * P + g(frac(y)),  g(f) = min(f, rho) / (q + 1)
 *          + max(0, f - rho) / q,      P = g(1),
 * taking the whole-period part as an exact integer difference.
 */
#include <math.h>

#include "policy/core/subset/ap_aperture_internal.h"
#include "policy/core/ring/ap_ring_internal.h"

typedef struct coverage {
  double count; /* C */
  double q;     /* coverage on the long part of a period */
  double rho;   /* length of the q + 1 part, in periods */
  double period_integral;
} coverage;

static double partial_period(const coverage *cv, double f) {
  const double head = f < cv->rho ? f : cv->rho;
  const double tail = f > cv->rho ? f - cv->rho : 0.0;
  return head / (cv->q + 1.0) + tail / cv->q;
}

/* Integral of 1 / c(x) over [lo, hi] (0 <= lo <= hi <= 1). */
static double inverse_coverage_integral(const coverage *cv, double lo,
                                        double hi) {
  if (!(hi > lo)) return 0.0;
  const double yl = lo * cv->count, yh = hi * cv->count;
  const double fl = floor(yl), fh = floor(yh);
  const double periods = fh - fl; /* exact: integers below 2^53 */
  const double in_periods = periods * cv->period_integral +
                            partial_period(cv, yh - fh) -
                            partial_period(cv, yl - fl);
  return in_periods / cv->count;
}

static double clipped_integral(const coverage *cv, double a0, double a1,
                               double w0, double w1) {
  const double lo = a0 > w0 ? a0 : w0;
  const double hi = a1 < w1 ? a1 : w1;
  return inverse_coverage_integral(cv, lo, hi);
}

int ap_mode_smooth_compute(const ap_ring *ring, const ap_subset_params *p,
                           uint32_t logical, ap_aperture **out,
                           ap_error *err) {
  const uint64_t n = ap_ring_size(ring);
  const uint64_t count = p->peer_count;
  /* w = max(A * C, N) / (N * C), all integers below 2^53 (N, C <= 10^6). */
  const uint64_t den = n * count;
  const uint64_t a_c = (uint64_t)logical * count;
  const uint64_t len = a_c > n ? a_c : n;
  const ap_window w = ap_window_rational((uint64_t)p->peer_index * n, len, den);
  coverage cv;
  cv.count = (double)count;
  if (w.full) {
    cv.q = (double)count;
    cv.rho = 0.0;
  } else {
    cv.q = (double)(len / n);
    cv.rho = (double)(len % n) / (double)n;
  }
  cv.period_integral = partial_period(&cv, 1.0);

  int rc = ap_window_members(ring, &w, out, err);
  if (rc != AP_OK) return rc;
  ap_aperture *ap = *out;
  for (size_t k = 0; k < ap->count; ++k) {
    ap_member *m = &ap->members[k];
    const double a0 = ring->bounds[m->index], a1 = ring->bounds[m->index + 1];
    double integral;
    if (w.full) {
      integral = inverse_coverage_integral(&cv, a0, a1);
    } else {
      integral = clipped_integral(&cv, a0, a1, w.start, w.end1);
      if (w.end2 > 0.0) integral += clipped_integral(&cv, a0, a1, 0.0, w.end2);
    }
    const double arc = a1 - a0;
    m->pick_weight =
        arc > 0.0 ? integral / arc * ap_ring_weight(ring, m->index) : 0.0;
    if (!(m->pick_weight > 0.0)) {
      /* Only a sub-tolerance sliver can get here; keep it pickable. */
      m->pick_weight = 0x1.0p-1022;
    }
  }
  ap->offset = (double)p->peer_index / (double)count;
  ap->width = w.full ? 1.0 : (double)len / (double)den;
  return AP_OK;
}
