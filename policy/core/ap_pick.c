/*
 * ap_pick: weighted draws over a cumulative table.
 *
 * cum[0] = 0, cum[i+1] = cum[i] + w_i (long double sums rounded once), and
 * slot i owns [cum[i], cum[i+1]). A draw of u in [0, total) is the slot
 * whose interval holds u (binary search). pick2's second draw is uniform in
 * [0, total - w_first) and jumps over the first slot's interval, so it is
 * uniform over the other slots' weight with no rejection loop.
 */
#include "policy/core/ap_pick.h"

#include <math.h>
#include <stdlib.h>

#include "policy/core/ap_order.h"

struct ap_pick_table {
  size_t n;
  double total;
  double *cum; /* n + 1 entries */
};

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
  *out = t;
  return AP_OK;
}

void ap_pick_table_destroy(ap_pick_table *table) {
  if (table == NULL) return;
  free(table->cum);
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
 * maps to the last slot. Slots of zero rounded width are never returned. */
static size_t slot_at(const ap_pick_table *t, double u) {
  size_t lo = 0, hi = t->n - 1; /* answer in [lo, hi] */
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    if (t->cum[mid] <= u) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

size_t ap_pick1(const ap_pick_table *table, ap_rng *rng) {
  if (table == NULL || table->n <= 1) return 0;
  return slot_at(table, ap_rng_uniform(rng) * table->total);
}

void ap_pick2(const ap_pick_table *table, ap_rng *rng, size_t *first,
              size_t *second) {
  size_t a = 0, b = 0;
  if (table != NULL && table->n > 1) {
    const double *cum = table->cum;
    a = slot_at(table, ap_rng_uniform(rng) * table->total);
    const double lo = cum[a], wa = cum[a + 1] - cum[a];
    double u = ap_rng_uniform(rng) * (table->total - wa);
    if (u >= lo) u += wa; /* skip the first slot's interval */
    b = slot_at(table, u);
    if (b == a) {
      /* Only reachable through rounding at the interval's edge: take the
       * neighbour on the side u fell. */
      b = (u >= lo + wa * 0.5 && a + 1 < table->n) || a == 0 ? a + 1 : a - 1;
    }
  }
  if (first != NULL) *first = a;
  if (second != NULL) *second = b;
}

/* load / weight, with a non-finite or non-positive weight counting as 1 and
 * a NaN load as +infinity, so that bad inputs lose instead of winning. */
static double load_of(const ap_candidate *c) { return isnan(c->load) ? INFINITY : c->load; }

int ap_p2c_choose(const ap_candidate *a, const ap_candidate *b) {
  if (a == NULL) return b == NULL ? 0 : 1;
  if (b == NULL) return 0;
  const int ha = a->healthy != 0, hb = b->healthy != 0;
  if (ha != hb) return ha ? 0 : 1;
  const double la = load_of(a), lb = load_of(b);
  const double wa = isfinite(a->weight) && a->weight > 0.0 ? a->weight : 1.0;
  const double wb = isfinite(b->weight) && b->weight > 0.0 ? b->weight : 1.0;
  if (fabs(wa - wb) <= 1e-4) return lb < la ? 1 : 0;
  /* Compare la / wa with lb / wb without dividing: la * wb vs lb * wa. */
  return lb * wa < la * wb ? 1 : 0;
}
