/*
 * ap_pick: weighted draws over a cumulative table.
 *
 * cum[0] = 0, cum[i+1] = cum[i] + w_i (long double sums rounded once), and
 * slot i owns [cum[i], cum[i+1]). A draw of u in [0, total) is the slot
 * whose interval holds u (a search over cum).
 */
#include "policy/core/pick/ap_pick.h"
#include "policy/core/pick/ap_pick_testing.h"

#include <math.h>
#include <stdlib.h>

#include "policy/core/ap_limits.h"
#include "policy/core/ap_rng_internal.h"

struct ap_pick_table {
  size_t n;
  double total;
  double *cum;         /* n + 1 entries */
  size_t *guide;       /* large tables: guide[k] = slot holding k / scale */
  double guide_scale;  /* buckets / total */
};

#define AP_PICK_LINEAR_MAX 32

/* Guide table for tables above AP_PICK_LINEAR_MAX slots: n equal buckets of
 * [0, total), each remembering the slot its start falls in, so a draw only
 * searches the few slots between two bucket starts (O(1) expected instead
 * of log2(n) dependent loads). Returns NULL on allocation failure. */
static size_t *build_guide(const double *cum, size_t n, double scale) {
  size_t *guide = malloc((n + 1) * sizeof(size_t));
  if (guide == NULL) return NULL;
  size_t slot = 0;
  for (size_t k = 0; k < n; ++k) {
    const double x = (double)k / scale;
    while (slot + 1 < n && cum[slot + 1] <= x) ++slot;
    guide[k] = slot;
  }
  guide[n] = n - 1;
  return guide;
}

int ap_pick_table_create(const double *weights, size_t n, ap_pick_table **out,
                         ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  *out = NULL;
  if (weights == NULL) {
    return ap_error_set(err, AP_EINVAL, "weights must not be NULL");
  }
  if (n == 0 || n > AP_MAX_ENDPOINTS) {
    return ap_error_set(err, AP_ERANGE,
                        "n (slot count) is %zu, must be in [1, %zu]", n,
                        AP_MAX_ENDPOINTS);
  }
  long double sum = 0.0L;
  for (size_t i = 0; i < n; ++i) {
    if (!isfinite(weights[i]) || !(weights[i] > 0.0)) {
      return ap_error_set(err, AP_EINVAL,
                          "weights[%zu] is %g, must be finite and > 0", i,
                          weights[i]);
    }
    sum += weights[i];
  }
  if (!isfinite((double)sum)) {
    return ap_error_set(err, AP_ERANGE, "sum of weights overflows");
  }
  ap_pick_table *t = malloc(sizeof(*t));
  double *cum = malloc((n + 1) * sizeof(double));
  if (t == NULL || cum == NULL) {
    free(t);
    free(cum);
    return ap_error_set(err, AP_ENOMEM, "out of memory for %zu slots", n);
  }
  long double prefix = 0.0L;
  cum[0] = 0.0;
  for (size_t i = 0; i < n; ++i) {
    prefix += weights[i];
    cum[i + 1] = (double)prefix;
  }
  t->n = n;
  t->total = cum[n];
  t->cum = cum;
  t->guide = NULL;
  t->guide_scale = (double)n / t->total;
  if (n > AP_PICK_LINEAR_MAX) {
    t->guide = build_guide(cum, n, t->guide_scale);
    if (t->guide == NULL) {
      free(cum);
      free(t);
      return ap_error_set(err, AP_ENOMEM, "out of memory for %zu slots", n);
    }
  }
  *out = t;
  return AP_OK;
}

void ap_pick_table_destroy(ap_pick_table *table) {
  if (table == NULL) return;
  free(table->cum);
  free(table->guide);
  free(table);
}

size_t ap_pick_table_size(const ap_pick_table *table) {
  return table == NULL ? 0 : table->n;
}

double ap_pick_table_weight(const ap_pick_table *table, size_t i) {
  if (table == NULL || i >= table->n) return 0.0;
  return table->cum[i + 1] - table->cum[i];
}

/* The slot i with cum[i] <= u < cum[i+1]; u beyond the total (rounding)
 * maps to the last slot. A slot of zero rounded width is never returned
 * unless it is the last. Tables above AP_PICK_LINEAR_MAX slots use a
 * branch-free binary search (the loop count depends only on n and the
 * comparison compiles to a conditional move, so an unpredictable u costs no
 * branch misprediction). */
static size_t slot_at(const ap_pick_table *t, double u) {
  const double *cum = t->cum;
  if (t->n <= AP_PICK_LINEAR_MAX) {
    /* Small tables (the usual aperture of 12-16): count the boundaries at
     * or below u. The comparisons are independent, unlike the search's
     * chain of load-compare-select steps, which measured slower here. */
    size_t below = 0;
    for (size_t i = 1; i < t->n; ++i) below += cum[i] <= u;
    return below;
  }
  /* The bucket of u bounds the answer between two guide entries; one slot
   * of slack on each side absorbs rounding in u * scale. */
  size_t k = (size_t)(u * t->guide_scale);
  if (k >= t->n) k = t->n - 1;
  const size_t lo = t->guide[k] > 0 ? t->guide[k] - 1 : 0;
  const size_t hi = t->guide[k + 1] + 1 < t->n ? t->guide[k + 1] + 1 : t->n - 1;
  size_t base = lo, len = hi - lo + 1; /* answer in [base, base + len) */
  while (len > 1) {
    const size_t half = len / 2;
    base = cum[base + half] <= u ? base + half : base;
    len -= half;
  }
  return base;
}

size_t ap_pick1(const ap_pick_table *table, ap_rng *rng) {
  if (table == NULL || table->n <= 1 || rng == NULL) return 0;
  return slot_at(table, ap_rng_step_uniform(rng) * table->total);
}

/* A NaN load counts as +infinity, so that a bad input loses. */
static double load_of(const ap_candidate *c) {
  return isnan(c->load) ? INFINITY : c->load;
}

/* A weight that is not finite and > 0 counts as 1. */
static double weight_of(const ap_candidate *c) {
  return isfinite(c->weight) && c->weight > 0.0 ? c->weight : 1.0;
}

/* Weights closer than this compare as equal (raw loads). */
#define AP_P2C_SAME_WEIGHT 1e-4

/* The deterministic comparison (no generator): lower load / weight wins. */
static int choose_by_load_per_weight(const ap_candidate *a,
                                     const ap_candidate *b) {
  if (a == NULL || b == NULL) return a == NULL && b != NULL;
  const int ha = a->healthy != 0, hb = b->healthy != 0;
  if (ha != hb) return hb;
  const double la = load_of(a), lb = load_of(b);
  const double wa = weight_of(a), wb = weight_of(b);
  /* Compare la / wa with lb / wb without dividing (la * wb vs lb * wa), or
   * raw loads when the weights are within 1e-4. Written as selects so that
   * the data-dependent outcome costs no misprediction. */
  const int close = fabs(wa - wb) <= AP_P2C_SAME_WEIGHT;
  const double left = close ? lb : lb * wa;
  const double right = close ? la : la * wb;
  return left < right;
}

/* The thinning's exact binomial covers loads up to this many calls: 16
 * random bits per call, four calls per generator step. */
#define AP_THIN_EXACT_MAX 64

/* A draw of Binomial(load, keep) for a whole load in [0, 64]; otherwise
 * (or for a fractional load) the normal approximation, floored at 0. */
static double thinned_load(double load, double keep, ap_rng *rng) {
  if (!(load > 0.0) || isinf(load)) return load;
  if (load <= AP_THIN_EXACT_MAX && load == floor(load)) {
    const uint64_t threshold = (uint64_t)(keep * 65536.0 + 0.5);
    unsigned kept = 0, left = (unsigned)load;
    while (left > 0) {
      uint64_t bits = ap_rng_step(rng);
      for (int lane = 0; lane < 4 && left > 0; ++lane, --left) {
        kept += (bits & 0xffffu) < threshold;
        bits >>= 16;
      }
    }
    return (double)kept;
  }
  /* Irwin-Hall: four uniforms, centred and scaled to unit variance. */
  double z = -2.0;
  for (int i = 0; i < 4; ++i) z += ap_rng_step_uniform(rng);
  z *= 1.7320508075688772; /* sqrt(3) */
  const double mean = load * keep;
  const double draw = mean + sqrt(mean * (1.0 - keep)) * z;
  return draw > 0.0 ? draw : 0.0;
}

int ap_p2c_choose_fair(const ap_candidate *a, const ap_candidate *b,
                       ap_rng *rng) {
  if (a == NULL || b == NULL || rng == NULL) return choose_by_load_per_weight(a, b);
  const int ha = a->healthy != 0, hb = b->healthy != 0;
  if (ha != hb) return hb;
  double la = load_of(a), lb = load_of(b);
  const double wa = weight_of(a), wb = weight_of(b);
  if (fabs(wa - wb) > AP_P2C_SAME_WEIGHT) {
    if (wa > wb) {
      la = thinned_load(la, wb / wa, rng);
    } else {
      lb = thinned_load(lb, wa / wb, rng);
    }
  }
  return lb < la;
}

static double scale_of(double scale) {
  return isnan(scale) || scale < 0.0 ? INFINITY : scale;
}

int ap_p2c_choose_fair_scaled(const ap_candidate *a, double scale_a,
                              const ap_candidate *b, double scale_b,
                              ap_rng *rng) {
  if (a == NULL || b == NULL) return a == NULL && b != NULL;
  const int ha = a->healthy != 0, hb = b->healthy != 0;
  if (ha != hb) return hb;
  const double sa = scale_of(scale_a), sb = scale_of(scale_b);
  double la = load_of(a), lb = load_of(b);
  const double wa = weight_of(a), wb = weight_of(b);
  if (fabs(wa - wb) > AP_P2C_SAME_WEIGHT) {
    if (wa > wb) {
      la = rng != NULL ? thinned_load(la, wb / wa, rng) : la * (wb / wa);
    } else {
      lb = rng != NULL ? thinned_load(lb, wa / wb, rng) : lb * (wa / wb);
    }
  }
  if (sa == sb) return lb < la; /* also when both are infinite */
  return (lb + 1.0) * sb < (la + 1.0) * sa;
}
