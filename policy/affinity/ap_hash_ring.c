/*
 * ap_hash_ring: consistent hashing with virtual nodes and weights.
 * The ring is a sorted array of (hash, member) points; a key belongs to the
 * first point at or after its hash, wrapping past the top of the 64-bit space
 * to the first point. Shares are computed once at creation.
 */
#include "policy/affinity/ap_hash_ring.h"
#include "policy/affinity/ap_hash_ring_testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/ap_hash.h"

typedef struct ap_hash_point {
  uint64_t hash;
  uint32_t member;
} ap_hash_point;

struct ap_hash_ring {
  size_t members;
  size_t npoints;
  ap_hash_point *points; /* sorted by (hash, member) */
  double *shares;        /* per member, fraction of 2^64 owned */
};

/* Seed of ap_hash_str for point names; fixed so every client agrees. */
#define AP_HASH_RING_SEED 0u

static int compare_points(const void *a, const void *b) {
  const ap_hash_point *pa = a, *pb = b;
  if (pa->hash != pb->hash) return pa->hash < pb->hash ? -1 : 1;
  /* Equal hashes (astronomically rare): the lower member index goes first so
   * the order, and hence ownership, is the same on every client. */
  if (pa->member != pb->member) return pa->member < pb->member ? -1 : 1;
  return 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Number of points of a member: max(1, round(weight * vnodes)). The caller
 * has checked that the product is finite and within the point bound. */
static size_t points_of(double weight, uint32_t vnodes) {
  double p = floor(weight * (double)vnodes + 0.5);
  return p < 1.0 ? 1 : (size_t)p;
}

static int validate(const char *const *names, const double *weights, size_t n,
                    uint32_t vnodes, ap_hash_ring **out, size_t *total,
                    ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "hash ring: out is NULL");
  if (names == NULL)
    return ap_error_set(err, AP_EINVAL, "hash ring: names is NULL");
  if (n == 0)
    return ap_error_set(err, AP_ERANGE, "hash ring: no members (n == 0)");
  if (n > AP_HASH_RING_MAX_POINTS)
    return ap_error_set(err, AP_ERANGE,
                        "hash ring: %zu members exceed the bound of %zu", n,
                        AP_HASH_RING_MAX_POINTS);
  if (vnodes < 1 || vnodes > AP_HASH_RING_MAX_VNODES)
    return ap_error_set(err, AP_ERANGE,
                        "hash ring: vnodes_per_weight %u not in [1, %u]",
                        vnodes, AP_HASH_RING_MAX_VNODES);
  size_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    if (names[i] == NULL || names[i][0] == '\0')
      return ap_error_set(err, AP_EINVAL,
                          "hash ring: name of member %zu is NULL or empty", i);
    double w = weights ? weights[i] : 1.0;
    if (!isfinite(w) || !(w > 0.0))
      return ap_error_set(err, AP_EINVAL,
                          "hash ring: weight of member %zu (%s) is %g; it "
                          "must be finite and > 0",
                          i, names[i], w);
    /* Compare in double before converting so a huge weight cannot
     * overflow size_t. */
    if (w * (double)vnodes > (double)AP_HASH_RING_MAX_POINTS)
      return ap_error_set(err, AP_ERANGE,
                          "hash ring: weight %g x %u vnodes of member %zu "
                          "exceeds %zu points",
                          w, vnodes, i, AP_HASH_RING_MAX_POINTS);
    sum += points_of(w, vnodes);
    if (sum > AP_HASH_RING_MAX_POINTS)
      return ap_error_set(err, AP_ERANGE,
                          "hash ring: more than %zu points in total",
                          AP_HASH_RING_MAX_POINTS);
  }
  *total = sum;
  return AP_OK;
}

/* Total points with `vnodes` per unit weight, stopping once over the cap
 * (returns AP_HASH_RING_MAX_POINTS + 1 then). Weights already checked. */
static size_t total_points(const double *weights, size_t n, uint32_t vnodes) {
  size_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    double w = weights ? weights[i] : 1.0;
    if (w * (double)vnodes > (double)AP_HASH_RING_MAX_POINTS)
      return AP_HASH_RING_MAX_POINTS + 1;
    sum += points_of(w, vnodes);
    if (sum > AP_HASH_RING_MAX_POINTS) return AP_HASH_RING_MAX_POINTS + 1;
  }
  return sum;
}

int ap_hash_ring_fit_vnodes(const double *weights, size_t n, uint32_t vnodes,
                            uint32_t *fitted, ap_error *err) {
  if (fitted == NULL)
    return ap_error_set(err, AP_EINVAL, "hash ring fit: fitted is NULL");
  if (n == 0)
    return ap_error_set(err, AP_EINVAL, "hash ring fit: no members (n == 0)");
  if (vnodes < 1 || vnodes > AP_HASH_RING_MAX_VNODES)
    return ap_error_set(err, AP_EINVAL,
                        "hash ring fit: vnodes_per_weight %u not in [1, %u]",
                        vnodes, AP_HASH_RING_MAX_VNODES);
  for (size_t i = 0; weights != NULL && i < n; i++) {
    if (!isfinite(weights[i]) || !(weights[i] > 0.0))
      return ap_error_set(err, AP_EINVAL,
                          "hash ring fit: weight of member %zu is %g; it "
                          "must be finite and > 0",
                          i, weights[i]);
  }
  if (total_points(weights, n, 1) > AP_HASH_RING_MAX_POINTS)
    return ap_error_set(err, AP_ERANGE,
                        "hash ring fit: %zu members need more than %zu "
                        "points even at 1 point per unit weight",
                        n, AP_HASH_RING_MAX_POINTS);
  /* Points grow with vnodes: binary search for the largest that fits. */
  uint32_t lo = 1, hi = vnodes;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (total_points(weights, n, mid) <= AP_HASH_RING_MAX_POINTS) lo = mid;
    else hi = mid - 1;
  }
  *fitted = lo;
  ap_error_clear(err);
  return AP_OK;
}

/* Distinct names: sort a copy of the pointers and compare neighbours. */
static int check_distinct(const char *const *names, size_t n, ap_error *err) {
  const char **sorted = malloc(n * sizeof *sorted);
  if (sorted == NULL)
    return ap_error_set(err, AP_ENOMEM, "hash ring: out of memory");
  memcpy(sorted, names, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, compare_names);
  int rc = AP_OK;
  for (size_t i = 1; i < n; i++) {
    if (strcmp(sorted[i - 1], sorted[i]) == 0) {
      rc = ap_error_set(err, AP_EINVAL, "hash ring: duplicate member name %s",
                        sorted[i]);
      break;
    }
  }
  free(sorted);
  return rc;
}

/* Fills ring->points with every member's "<name>#<v>" hashes, sorted. */
static int place_points(ap_hash_ring *ring, const char *const *names,
                        const double *weights, uint32_t vnodes,
                        ap_error *err) {
  size_t longest = 0;
  for (size_t m = 0; m < ring->members; m++) {
    size_t len = strlen(names[m]);
    if (len > longest) longest = len;
  }
  /* name + '#' + up to 20 digits + NUL */
  char *buf = malloc(longest + 24);
  if (buf == NULL)
    return ap_error_set(err, AP_ENOMEM, "hash ring: out of memory");
  size_t k = 0;
  for (size_t m = 0; m < ring->members; m++) {
    size_t count = points_of(weights ? weights[m] : 1.0, vnodes);
    for (size_t v = 0; v < count; v++) {
      snprintf(buf, longest + 24, "%s#%zu", names[m], v);
      ring->points[k].hash = ap_hash_str(buf, AP_HASH_RING_SEED);
      ring->points[k].member = (uint32_t)m;
      k++;
    }
  }
  free(buf);
  qsort(ring->points, ring->npoints, sizeof *ring->points, compare_points);
  return AP_OK;
}

/* Each point owns the half-open span (previous point, point]; the first
 * point's span wraps from the last point. */
static void compute_shares(ap_hash_ring *ring) {
  const double two64 = 18446744073709551616.0;
  for (size_t m = 0; m < ring->members; m++) ring->shares[m] = 0.0;
  if (ring->npoints == 1) {
    ring->shares[ring->points[0].member] = 1.0;
    return;
  }
  for (size_t k = 0; k < ring->npoints; k++) {
    uint64_t prev = ring->points[k == 0 ? ring->npoints - 1 : k - 1].hash;
    uint64_t span = ring->points[k].hash - prev; /* wraps mod 2^64 for k=0 */
    ring->shares[ring->points[k].member] += (double)span / two64;
  }
}

int ap_hash_ring_create(const char *const *names, const double *weights,
                        size_t n, uint32_t vnodes_per_weight,
                        ap_hash_ring **out, ap_error *err) {
  size_t total = 0;
  int rc = validate(names, weights, n, vnodes_per_weight, out, &total, err);
  if (rc != AP_OK) return rc;
  rc = check_distinct(names, n, err);
  if (rc != AP_OK) return rc;

  ap_hash_ring *ring = calloc(1, sizeof *ring);
  if (ring == NULL)
    return ap_error_set(err, AP_ENOMEM, "hash ring: out of memory");
  ring->members = n;
  ring->npoints = total;
  ring->points = malloc(total * sizeof *ring->points);
  ring->shares = malloc(n * sizeof *ring->shares);
  if (ring->points == NULL || ring->shares == NULL) {
    ap_hash_ring_destroy(ring);
    return ap_error_set(err, AP_ENOMEM, "hash ring: out of memory for %zu "
                        "points", total);
  }
  rc = place_points(ring, names, weights, vnodes_per_weight, err);
  if (rc != AP_OK) {
    ap_hash_ring_destroy(ring);
    return rc;
  }
  compute_shares(ring);
  *out = ring;
  return AP_OK;
}

void ap_hash_ring_destroy(ap_hash_ring *ring) {
  if (ring == NULL) return;
  free(ring->points);
  free(ring->shares);
  free(ring);
}

size_t ap_hash_ring_members(const ap_hash_ring *ring) {
  return ring ? ring->members : 0;
}

size_t ap_hash_ring_points(const ap_hash_ring *ring) {
  return ring ? ring->npoints : 0;
}

/* Position of the first point with hash >= h, or 0 when h is past the last
 * point (wrap-around). */
static size_t first_point_at_or_after(const ap_hash_ring *ring, uint64_t h) {
  size_t lo = 0, hi = ring->npoints;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ring->points[mid].hash < h)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == ring->npoints ? 0 : lo;
}

size_t ap_hash_ring_lookup(const ap_hash_ring *ring, uint64_t h) {
  if (ring == NULL || ring->npoints == 0) return 0;
  return ring->points[first_point_at_or_after(ring, h)].member;
}

int ap_hash_ring_lookup_usable(const ap_hash_ring *ring, uint64_t h,
                               const uint8_t *usable, size_t *member,
                               ap_error *err) {
  return ap_hash_ring_lookup_usable_steps(ring, h, usable, member, NULL, err);
}

int ap_hash_ring_lookup_usable_steps(const ap_hash_ring *ring, uint64_t h,
                                     const uint8_t *usable, size_t *member,
                                     size_t *steps, ap_error *err) {
  if (steps != NULL) *steps = 0;
  if (ring == NULL)
    return ap_error_set(err, AP_EINVAL, "hash ring lookup: ring is NULL");
  if (usable == NULL)
    return ap_error_set(err, AP_EINVAL, "hash ring lookup: usable is NULL");
  if (member == NULL)
    return ap_error_set(err, AP_EINVAL, "hash ring lookup: member is NULL");
  size_t k = first_point_at_or_after(ring, h);
  const size_t owner = ring->points[k].member;
  /* Walk clockwise over at most AP_HASH_RING_MAX_WALK points: the exact
   * consistent-hash answer whenever a usable member is that close, which
   * is nearly always unless few members are usable. No allocation, no
   * lock. */
  const size_t walk = ring->npoints < AP_HASH_RING_MAX_WALK
                          ? ring->npoints
                          : AP_HASH_RING_MAX_WALK;
  size_t n = 0;
  for (; n < walk; n++) {
    uint32_t m = ring->points[k].member;
    if (usable[m]) {
      *member = m;
      if (steps != NULL) *steps = n + 1;
      return AP_OK;
    }
    k = (k + 1 == ring->npoints) ? 0 : k + 1;
  }
  /* Few usable members: the first usable one after the key's owner in
   * member order, so the cost is bounded by the member count, not by the
   * (up to vnodes times larger) point count. Still a pure function of the
   * key and the usable set, so clients that agree on both agree here. */
  for (size_t i = 1; i <= ring->members; i++) {
    size_t m = (owner + i) % ring->members;
    n++;
    if (usable[m]) {
      *member = m;
      if (steps != NULL) *steps = n;
      return AP_OK;
    }
  }
  if (steps != NULL) *steps = n;
  return ap_error_set(err, AP_EUNAVAIL,
                      "hash ring lookup: none of the %zu members is usable",
                      ring->members);
}

double ap_hash_ring_share(const ap_hash_ring *ring, size_t m) {
  if (ring == NULL || m >= ring->members) return 0.0;
  return ring->shares[m];
}
