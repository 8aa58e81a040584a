/*
 * ap_stable: membership from two key rings, shares from matrix scaling.
 * See ap_stable.h for the contract and the churn argument.
 */
#include "policy/core/stable/ap_stable.h"
#include "policy/core/stable/ap_stable_testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/ap_hash.h"

/* Salts keep the rings and the coin independent of each other. */
#define SALT_ENDPOINT 0x5DEECE66DA3B1F27ull
#define SALT_COIN 0xC2B2AE3D27D4EB4Full
#define POINT_STEP 0x9E3779B97F4A7C15ull

#define MAX_SIZE 1000000u
/* Share of endpoints covered by two clients instead of one (coverage 1.5
 * on average): a second cover lets the scaling move load between clients,
 * and costs connections. */
#define SECOND_COVER 0.5

/* The scaling stops early when the largest error fell by less than
 * STALL_GAIN of itself over STALL_ROUNDS rounds: a membership that balances only
 * asymptotically would otherwise spend every round it is allowed. */
#define STALL_ROUNDS 16u
#define STALL_GAIN 0.01

/* Smallest share relative to the largest in the same row. */
#define SHARE_FLOOR 1e-12

struct ap_stable_plan {
  size_t n, c;
  size_t *row_start;   /* c + 1 offsets */
  uint32_t *row_ep;    /* endpoint indices, ascending within a row */
  double *row_share;   /* shares, summing to 1 within a row */
  uint64_t *client_start; /* c: each client's walk start (its point 0) */
  double load_max;
  uint32_t rounds;
};

typedef struct point {
  uint64_t pos;
  uint32_t who;
} point;

/* Sorts points by position, ties by ascending `who` (the input order, as
 * callers fill points in `who` order): a stable LSD radix sort, bytewise.
 * One read counts all eight bytes' digits; each byte that not every point
 * shares then moves the points once, between the input and one scratch
 * buffer (no copy back per byte). O(8 count), far cheaper than qsort for
 * the client ring's hundreds of thousands of points. */
static int sort_points(point *pts, size_t count) {
  point *tmp = malloc((count ? count : 1) * sizeof(point));
  size_t (*bucket)[257] = calloc(8, sizeof *bucket);
  if (tmp == NULL || bucket == NULL) {
    free(tmp);
    free(bucket);
    return 0;
  }
  for (size_t k = 0; k < count; ++k)
    for (unsigned d = 0; d < 8; ++d) bucket[d][((pts[k].pos >> (8 * d)) & 255) + 1]++;
  point *from = pts, *to = tmp;
  for (unsigned d = 0; d < 8; ++d) {
    size_t *b = bucket[d];
    int trivial = 0;
    for (unsigned x = 0; x < 256; ++x) trivial |= b[x + 1] == count;
    if (trivial) continue;
    for (unsigned x = 0; x < 256; ++x) b[x + 1] += b[x];
    const unsigned shift = 8 * d;
    for (size_t k = 0; k < count; ++k) to[b[(from[k].pos >> shift) & 255]++] = from[k];
    point *t = from;
    from = to;
    to = t;
  }
  if (from != pts) memcpy(pts, from, count * sizeof(point));
  free(tmp);
  free(bucket);
  return 1;
}

/* Sorts a short row of endpoint indices (insertion sort: rows are tens of
 * members). */
static void sort_row(uint32_t *row, size_t count) {
  for (size_t k = 1; k < count; ++k) {
    const uint32_t x = row[k];
    size_t j = k;
    while (j > 0 && row[j - 1] > x) {
      row[j] = row[j - 1];
      --j;
    }
    row[j] = x;
  }
}


uint64_t ap_stable_key(const char *identity) {
  return ap_hash_str(identity ? identity : "", SALT_ENDPOINT);
}

uint64_t ap_stable_ordinal_key(uint64_t k) { return ap_mix64(k ^ POINT_STEP); }

uint64_t ap_stable_client_point(uint64_t key, uint32_t v) {
  return ap_mix64(key + (uint64_t)v * POINT_STEP);
}

uint64_t ap_stable_endpoint_point(uint64_t key) {
  return ap_mix64(key ^ SALT_ENDPOINT);
}

uint32_t ap_stable_cover_count(uint64_t key) {
  const double coin = (double)(ap_mix64(key ^ SALT_COIN) >> 11) * 0x1.0p-53;
  return coin < SECOND_COVER ? 2u : 1u;
}

static uint64_t client_point(uint64_t key, uint32_t v) {
  return ap_stable_client_point(key, v);
}

static uint64_t endpoint_point(uint64_t key) {
  return ap_stable_endpoint_point(key);
}

/* Coverage of an endpoint, capped at the number of clients. */
static uint32_t coverage_of(uint64_t key, size_t c) {
  const uint32_t want = ap_stable_cover_count(key);
  return want < c ? want : (uint32_t)c;
}

static int validate(const uint64_t *endpoint_keys, const double *weights,
                    size_t n, const uint64_t *client_keys, size_t c,
                    uint32_t min_aperture, ap_stable_plan **out,
                    ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out is NULL");
  *out = NULL;
  if (endpoint_keys == NULL)
    return ap_error_set(err, AP_EINVAL, "endpoint_keys is NULL");
  if (client_keys == NULL)
    return ap_error_set(err, AP_EINVAL, "client_keys is NULL");
  if (n == 0 || n > MAX_SIZE)
    return ap_error_set(err, AP_ERANGE, "endpoints is %zu, must be in [1, %u]",
                        n, MAX_SIZE);
  if (c == 0 || c > AP_STABLE_MAX_CLIENTS)
    return ap_error_set(err, AP_ERANGE, "clients is %zu, must be in [1, %u]",
                        c, AP_STABLE_MAX_CLIENTS);
  if (min_aperture == 0 || min_aperture > MAX_SIZE)
    return ap_error_set(err, AP_EINVAL, "min_aperture is %u, must be in [1, %u]",
                        min_aperture, MAX_SIZE);
  if (weights != NULL) {
    for (size_t s = 0; s < n; ++s) {
      if (!isfinite(weights[s]) || weights[s] <= 0) {
        return ap_error_set(err, AP_EINVAL,
                            "weights[%zu] is %g, must be finite and > 0", s,
                            weights[s]);
      }
    }
  }
  return AP_OK;
}

/* The first two distinct clients met reading one gap of the endpoint ring
 * (from an endpoint's point up to the next endpoint's point): the nearest
 * client point (at clockwise distance d1 from the gap's endpoint, client
 * w1) and the nearest one of another client (d2, w2); NO_CLIENT when none.
 * Ties of distance order by ascending client (the canonical index, that is
 * the client key). */
#define NO_CLIENT UINT32_MAX
typedef struct gap_best {
  uint64_t d1, d2;
  uint32_t w1, w2;
} gap_best;

/* Working memory of one build. */
typedef struct build {
  point *endpoint_ring;  /* n endpoint points by position */
  uint32_t *first_at;    /* 2^bits + 1: endpoints below each top-bits prefix */
  unsigned bits;
  gap_best *gap;         /* n, by ring position of the gap's endpoint */
  size_t *next_filled;   /* n: the first gap at or after it holding a client */
  uint32_t *cover;      /* n * 2: the clients each endpoint covers */
  uint32_t *cover_count;
  size_t *cover_start;  /* c + 1: CSR of covered endpoints per client */
  uint32_t *covered;
  uint32_t *stamp;      /* per endpoint: last client that took it, + 1 */
} build;

static void build_free(build *b) {
  free(b->endpoint_ring);
  free(b->first_at);
  free(b->gap);
  free(b->next_filled);
  free(b->cover);
  free(b->cover_count);
  free(b->cover_start);
  free(b->covered);
  free(b->stamp);
}

/* Index in the endpoint ring of the first endpoint whose position is >= pos
 * (n when none): a table lookup by the top bits, then a short scan. */
static size_t first_at_or_after(const build *b, size_t n, uint64_t pos) {
  size_t at = b->first_at[pos >> (64u - b->bits)];
  while (at < n && b->endpoint_ring[at].pos < pos) ++at;
  return at;
}

/* Adds client `who`'s point at clockwise distance d into a gap. */
static void gap_add(gap_best *g, uint64_t d, uint32_t who) {
  if (g->w1 == NO_CLIENT || d < g->d1 || (d == g->d1 && who < g->w1)) {
    if (g->w1 != NO_CLIENT && g->w1 != who) {
      g->d2 = g->d1;
      g->w2 = g->w1;
    }
    g->d1 = d;
    g->w1 = who;
  } else if (who != g->w1 &&
             (g->w2 == NO_CLIENT || d < g->d2 || (d == g->d2 && who < g->w2))) {
    g->d2 = d;
    g->w2 = who;
  }
}

/* The endpoint ring, sorted, with its lookup table, and each gap's first
 * two distinct clients. Reading the client ring from an endpoint's point
 * meets the client points of its gap in clockwise order, then those of the
 * following gaps, so the first distinct clients of the definition are
 * found from the gaps' best two without sorting the C x P client points:
 * each point goes to its gap (the last endpoint at or before it, wrapping
 * to the last endpoint) in O(1). */
static int build_rings(build *b, const uint64_t *ek, size_t n,
                       const uint64_t *ck, size_t c, ap_error *err) {
  b->endpoint_ring = malloc(n * sizeof(point));
  if (b->endpoint_ring == NULL)
    return ap_error_set(err, AP_ENOMEM, "out of memory for the stable rings");
  for (size_t s = 0; s < n; ++s)
    b->endpoint_ring[s] = (point){endpoint_point(ek[s]), (uint32_t)s};
  if (!sort_points(b->endpoint_ring, n))
    return ap_error_set(err, AP_ENOMEM, "out of memory sorting the rings");
  b->bits = 1;
  while (b->bits < 20 && ((size_t)1 << b->bits) < n) ++b->bits;
  const size_t prefixes = (size_t)1 << b->bits;
  b->first_at = malloc((prefixes + 1) * sizeof(uint32_t));
  b->gap = malloc(n * sizeof(gap_best));
  b->next_filled = malloc(n * sizeof(size_t));
  if (b->first_at == NULL || b->gap == NULL || b->next_filled == NULL)
    return ap_error_set(err, AP_ENOMEM, "out of memory for the stable rings");
  size_t at = 0;
  for (size_t t = 0; t < prefixes; ++t) {
    const uint64_t low = (uint64_t)t << (64u - b->bits);
    while (at < n && b->endpoint_ring[at].pos < low) ++at;
    b->first_at[t] = (uint32_t)at;
  }
  b->first_at[prefixes] = (uint32_t)n;
  for (size_t g = 0; g < n; ++g) b->gap[g] = (gap_best){0, 0, NO_CLIENT, NO_CLIENT};
  for (size_t i = 0; i < c; ++i) {
    for (uint32_t v = 0; v < AP_STABLE_POINTS; ++v) {
      const uint64_t pos = client_point(ck[i], v);
      /* the last endpoint at or before pos: before the first one at or
       * after pos + 1, or the last endpoint when none is at or before */
      size_t g = b->first_at[pos >> (64u - b->bits)];
      while (g < n && b->endpoint_ring[g].pos <= pos) ++g;
      g = g == 0 ? n - 1 : g - 1;
      gap_add(&b->gap[g], pos - b->endpoint_ring[g].pos, (uint32_t)i);
    }
  }
  /* next_filled, cyclic: two passes backward around the ring. */
  size_t next = n; /* none yet */
  for (size_t round = 0; round < 2; ++round)
    for (size_t g = n; g-- > 0;) {
      if (b->gap[g].w1 != NO_CLIENT) next = g;
      b->next_filled[g] = next;
    }
  return AP_OK;
}

/* Each endpoint's covering clients: the first distinct ones clockwise from
 * its point on the client ring, read gap by gap. */
static int build_coverage(build *b, const uint64_t *ek, size_t n, size_t c,
                          ap_error *err) {
  b->cover = malloc(n * 2 * sizeof(uint32_t));
  b->cover_count = malloc(n * sizeof(uint32_t));
  b->cover_start = calloc(c + 1, sizeof(size_t));
  if (b->cover == NULL || b->cover_count == NULL || b->cover_start == NULL)
    return ap_error_set(err, AP_ENOMEM, "out of memory for coverage");
  size_t total = 0;
  for (size_t r = 0; r < n; ++r) {
    const size_t s = b->endpoint_ring[r].who;
    const uint32_t want = coverage_of(ek[s], c);
    uint32_t got = 0;
    size_t g = b->next_filled[r];
    while (got < want) {
      const gap_best *best = &b->gap[g];
      const uint32_t in_gap[2] = {best->w1, best->w2};
      for (int k = 0; k < 2 && got < want; ++k) {
        const uint32_t who = in_gap[k];
        if (who == NO_CLIENT) break;
        if (got == 0 || b->cover[s * 2] != who) b->cover[s * 2 + got++] = who;
      }
      g = b->next_filled[g + 1 == n ? 0 : g + 1];
    }
    b->cover_count[s] = got;
    for (uint32_t k = 0; k < got; ++k) b->cover_start[b->cover[s * 2 + k] + 1]++;
    total += got;
  }
  for (size_t i = 0; i < c; ++i) b->cover_start[i + 1] += b->cover_start[i];
  b->covered = malloc((total ? total : 1) * sizeof(uint32_t));
  size_t *fill = malloc((c ? c : 1) * sizeof(size_t));
  if (b->covered == NULL || fill == NULL) {
    free(fill);
    return ap_error_set(err, AP_ENOMEM, "out of memory for coverage");
  }
  memcpy(fill, b->cover_start, c * sizeof(size_t));
  for (size_t s = 0; s < n; ++s)
    for (uint32_t k = 0; k < b->cover_count[s]; ++k)
      b->covered[fill[b->cover[s * 2 + k]]++] = (uint32_t)s;
  free(fill);
  return AP_OK;
}

/* Rows: each client's covered endpoints, then its own walk: the first A
 * endpoints clockwise from its point on the endpoint ring, whatever it
 * covers. The walk depends on the endpoints and the client alone, so no
 * other client's arrival or departure changes it. */
static int build_rows(build *b, ap_stable_plan *plan, const uint64_t *ck,
                      size_t n, size_t c, uint32_t logical, ap_error *err) {
  b->stamp = calloc(n, sizeof(uint32_t));
  plan->row_start = malloc((c + 1) * sizeof(size_t));
  const size_t cap = b->cover_start[c] + c * (size_t)logical;
  plan->row_ep = malloc((cap ? cap : 1) * sizeof(uint32_t));
  if (b->stamp == NULL || plan->row_start == NULL || plan->row_ep == NULL)
    return ap_error_set(err, AP_ENOMEM, "out of memory for the stable rows");
  size_t at = 0;
  for (size_t i = 0; i < c; ++i) {
    plan->row_start[i] = at;
    const uint32_t mark = (uint32_t)i + 1;
    for (size_t k = b->cover_start[i]; k < b->cover_start[i + 1]; ++k) {
      b->stamp[b->covered[k]] = mark;
      plan->row_ep[at++] = b->covered[k];
    }
    size_t e = first_at_or_after(b, n, client_point(ck[i], 0));
    if (e == n) e = 0;
    for (uint32_t walked = 0; walked < logical; ++walked) {
      const uint32_t s = b->endpoint_ring[e].who;
      if (b->stamp[s] != mark) {
        b->stamp[s] = mark;
        plan->row_ep[at++] = s;
      }
      e = e + 1 == n ? 0 : e + 1;
    }
    sort_row(plan->row_ep + plan->row_start[i], at - plan->row_start[i]);
  }
  plan->row_start[c] = at;
  return AP_OK;
}

/* An endpoint's scaling factor and column sum, side by side: a round
 * reads the one and adds to the other at the same index. */
typedef struct scale_cell {
  double v, col;
} scale_cell;

/* Sinkhorn scaling of the 0/1 membership matrix toward row sums 1 and
 * column sums target[s]: share = u_i v_s. The last step scales rows, so
 * every row sums to 1 exactly; columns are checked before it. A round's
 * row step (u_i from the new v) and the next round's column sums (adding
 * u_i to each member's column, clients in ascending order) go in one pass
 * over each row: the same operations in the same order as the definition,
 * with each member's cache line fetched once. */
static int scale(ap_stable_plan *plan, const double *weights, size_t n,
                 size_t c, ap_error *err) {
  const size_t total = plan->row_start[c];
  scale_cell *vc = malloc(n * sizeof(scale_cell));
  double *target = malloc(n * sizeof(double));
  plan->row_share = malloc((total ? total : 1) * sizeof(double));
  int rc = AP_OK;
  if (vc == NULL || target == NULL || plan->row_share == NULL) {
    rc = ap_error_set(err, AP_ENOMEM, "out of memory for the stable scaling");
    goto done;
  }
  double weight_sum = 0;
  for (size_t s = 0; s < n; ++s) weight_sum += weights ? weights[s] : 1.0;
  for (size_t s = 0; s < n; ++s) {
    target[s] = (double)c * (weights ? weights[s] : 1.0) / weight_sum;
    vc[s].v = 1.0;
    vc[s].col = 0;
  }
  const uint32_t *ep = plan->row_ep;
  /* Round 0's column sums, from u_i = 1 / (members of i). */
  for (size_t i = 0; i < c; ++i) {
    const size_t begin = plan->row_start[i], end = plan->row_start[i + 1];
    const double u = 1.0 / (double)(end - begin);
    for (size_t k = begin; k < end; ++k) vc[ep[k]].col += u;
  }
  double stall_mark = HUGE_VAL; /* error STALL_ROUNDS rounds ago */
  for (uint32_t round = 0;; ++round) {
    double err_max = 0;
    for (size_t s = 0; s < n; ++s) {
      const double load = vc[s].col * vc[s].v / target[s];
      if (load - 1.0 > err_max) err_max = load - 1.0;
    }
    plan->rounds = round;
    /* Done when no endpoint's load exceeds its target by more than the
     * tolerance (an endpoint below its target overloads nothing; waiting
     * for the last under-loaded one to fill cost hundreds of rounds at
     * 100,000 endpoints), or when the error stopped falling (a membership
     * that cannot balance further: the rest would only cost rounds). */
    if (err_max <= AP_STABLE_TOLERANCE || round >= AP_STABLE_MAX_ROUNDS) break;
    if (round % STALL_ROUNDS == 0) {
      if (stall_mark - err_max < STALL_GAIN * stall_mark) break;
      stall_mark = err_max;
    }
    for (size_t s = 0; s < n; ++s) {
      vc[s].v = target[s] / vc[s].col;
      vc[s].col = 0;
    }
    for (size_t i = 0; i < c; ++i) {
      const size_t begin = plan->row_start[i], end = plan->row_start[i + 1];
      double row = 0;
      for (size_t k = begin; k < end; ++k) row += vc[ep[k]].v;
      const double u = 1.0 / row;
      for (size_t k = begin; k < end; ++k) vc[ep[k]].col += u;
    }
  }
  /* Rows sum to 1 exactly, and no share falls below SHARE_FLOOR of its
   * row's largest: weights no membership can carry (an endpoint far
   * heavier than what covers it) drive the scaling toward zero shares, and
   * a member whose share rounds away could never be picked. */
  for (size_t s = 0; s < n; ++s) vc[s].col = 0;
  for (size_t i = 0; i < c; ++i) {
    const size_t begin = plan->row_start[i], end = plan->row_start[i + 1];
    double top = 0;
    for (size_t k = begin; k < end; ++k)
      if (vc[ep[k]].v > top) top = vc[ep[k]].v;
    double row = 0;
    for (size_t k = begin; k < end; ++k) {
      const double x = vc[ep[k]].v;
      plan->row_share[k] = x > top * SHARE_FLOOR ? x : top * SHARE_FLOOR;
      row += plan->row_share[k];
    }
    for (size_t k = begin; k < end; ++k) {
      plan->row_share[k] /= row;
      vc[ep[k]].col += plan->row_share[k];
    }
  }
  /* The reported balance is the final shares'. */
  plan->load_max = 0;
  for (size_t s = 0; s < n; ++s)
    if (vc[s].col / target[s] > plan->load_max)
      plan->load_max = vc[s].col / target[s];
done:
  free(vc);
  free(target);
  return rc;
}

/* The plan of keys already in canonical order (ascending, distinct). */
static int plan_canonical(const uint64_t *endpoint_keys, const double *weights,
                          size_t n, const uint64_t *client_keys, size_t c,
                          uint32_t min_aperture, ap_stable_plan **out,
                          ap_error *err) {
  ap_stable_plan *plan = calloc(1, sizeof *plan);
  if (plan == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  plan->n = n;
  plan->c = c;
  const uint32_t logical = min_aperture < n ? min_aperture : (uint32_t)n;
  build b;
  memset(&b, 0, sizeof b);
  int rc = build_rings(&b, endpoint_keys, n, client_keys, c, err);
  if (rc == AP_OK) rc = build_coverage(&b, endpoint_keys, n, c, err);
  if (rc == AP_OK) rc = build_rows(&b, plan, client_keys, n, c, logical, err);
  build_free(&b);
  if (rc == AP_OK) rc = scale(plan, weights, n, c, err);
  if (rc != AP_OK) {
    ap_stable_plan_destroy(plan);
    return rc;
  }
  *out = plan;
  return AP_OK;
}

/* The input indices of `keys` in ascending key order (order[r] = index of
 * the key of rank r); AP_EINVAL names two equal keys by their input
 * indices. */
static int rank_keys(const uint64_t *keys, size_t count, const char *what,
                     uint32_t *order, ap_error *err) {
  point *pts = malloc((count ? count : 1) * sizeof(point));
  if (pts == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  for (size_t k = 0; k < count; ++k) pts[k] = (point){keys[k], (uint32_t)k};
  if (!sort_points(pts, count)) {
    free(pts);
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < count; ++k) {
    if (k > 0 && pts[k].pos == pts[k - 1].pos) {
      const uint32_t a = pts[k - 1].who, b = pts[k].who; /* a < b: stable */
      free(pts);
      return ap_error_set(err, AP_EINVAL, "%s[%u] and %s[%u] are the same key",
                          what, a, what, b);
    }
    order[k] = pts[k].who;
  }
  free(pts);
  return AP_OK;
}

typedef struct member {
  uint32_t ep;
  double share;
} member;

/* Sorts a row's members by endpoint index (distinct; rows are tens of
 * members, so insertion sort). */
static void sort_members(member *row, size_t count) {
  for (size_t k = 1; k < count; ++k) {
    const member x = row[k];
    size_t j = k;
    while (j > 0 && row[j - 1].ep > x.ep) {
      row[j] = row[j - 1];
      --j;
    }
    row[j] = x;
  }
}

/* The canonical plan `in` in the caller's order: client i is canonical
 * client rank_c[i], canonical endpoint e is input endpoint order_e[e]. Rows
 * are re-sorted by input endpoint index; every number is copied, so shares
 * are bit-identical whatever the input order. */
static int map_back(const ap_stable_plan *in, const uint32_t *order_e,
                    const uint32_t *order_c, const uint64_t *client_keys,
                    ap_stable_plan **out, ap_error *err) {
  const size_t n = in->n, c = in->c, total = in->row_start[c];
  ap_stable_plan *plan = calloc(1, sizeof *plan);
  member *tmp = NULL;
  if (plan == NULL) goto fail;
  plan->n = n;
  plan->c = c;
  plan->load_max = in->load_max;
  plan->rounds = in->rounds;
  plan->row_start = malloc((c + 1) * sizeof(size_t));
  plan->row_ep = malloc((total ? total : 1) * sizeof(uint32_t));
  plan->row_share = malloc((total ? total : 1) * sizeof(double));
  plan->client_start = malloc(c * sizeof(uint64_t));
  size_t widest = 0;
  for (size_t r = 0; r < c; ++r) {
    const size_t w = in->row_start[r + 1] - in->row_start[r];
    if (w > widest) widest = w;
  }
  tmp = malloc((widest ? widest : 1) * sizeof(member));
  if (plan->row_start == NULL || plan->row_ep == NULL ||
      plan->row_share == NULL || plan->client_start == NULL || tmp == NULL)
    goto fail;
  /* Row widths by input client, then offsets. */
  for (size_t r = 0; r < c; ++r) {
    const size_t i = order_c[r];
    plan->row_start[i + 1] = in->row_start[r + 1] - in->row_start[r];
  }
  plan->row_start[0] = 0;
  for (size_t i = 0; i < c; ++i) plan->row_start[i + 1] += plan->row_start[i];
  for (size_t r = 0; r < c; ++r) {
    const size_t i = order_c[r];
    const size_t begin = in->row_start[r], width = in->row_start[r + 1] - begin;
    for (size_t k = 0; k < width; ++k)
      tmp[k] = (member){order_e[in->row_ep[begin + k]], in->row_share[begin + k]};
    sort_members(tmp, width);
    for (size_t k = 0; k < width; ++k) {
      plan->row_ep[plan->row_start[i] + k] = tmp[k].ep;
      plan->row_share[plan->row_start[i] + k] = tmp[k].share;
    }
    plan->client_start[i] = client_point(client_keys[i], 0);
  }
  free(tmp);
  *out = plan;
  return AP_OK;
fail:
  free(tmp);
  ap_stable_plan_destroy(plan);
  return ap_error_set(err, AP_ENOMEM, "out of memory for the stable plan");
}

int ap_stable_plan_create(const uint64_t *endpoint_keys, const double *weights,
                          size_t n, const uint64_t *client_keys, size_t c,
                          uint32_t min_aperture, ap_stable_plan **out,
                          ap_error *err) {
  int rc = validate(endpoint_keys, weights, n, client_keys, c, min_aperture,
                    out, err);
  if (rc != AP_OK) return rc;
  /* Canonical order: endpoints and clients by ascending key, so the plan is
   * a function of the key sets alone, bit for bit. */
  uint32_t *order_e = malloc(n * sizeof(uint32_t));
  uint32_t *order_c = malloc(c * sizeof(uint32_t));
  uint64_t *ek = malloc(n * sizeof(uint64_t));
  uint64_t *ck = malloc(c * sizeof(uint64_t));
  double *w = weights ? malloc(n * sizeof(double)) : NULL;
  ap_stable_plan *canonical = NULL;
  if (order_e == NULL || order_c == NULL || ek == NULL || ck == NULL ||
      (weights != NULL && w == NULL)) {
    rc = ap_error_set(err, AP_ENOMEM, "out of memory");
    goto done;
  }
  rc = rank_keys(endpoint_keys, n, "endpoint_keys", order_e, err);
  if (rc == AP_OK) rc = rank_keys(client_keys, c, "client_keys", order_c, err);
  if (rc != AP_OK) goto done;
  for (size_t r = 0; r < n; ++r) {
    ek[r] = endpoint_keys[order_e[r]];
    if (w) w[r] = weights[order_e[r]];
  }
  for (size_t r = 0; r < c; ++r) ck[r] = client_keys[order_c[r]];
  rc = plan_canonical(ek, w, n, ck, c, min_aperture, &canonical, err);
  if (rc == AP_OK)
    rc = map_back(canonical, order_e, order_c, client_keys, out, err);
done:
  ap_stable_plan_destroy(canonical);
  free(order_e);
  free(order_c);
  free(ek);
  free(ck);
  free(w);
  return rc;
}

void ap_stable_plan_destroy(ap_stable_plan *plan) {
  if (plan == NULL) return;
  free(plan->row_start);
  free(plan->row_ep);
  free(plan->row_share);
  free(plan->client_start);
  free(plan);
}

size_t ap_stable_plan_endpoints(const ap_stable_plan *plan) {
  return plan ? plan->n : 0;
}

size_t ap_stable_plan_clients(const ap_stable_plan *plan) {
  return plan ? plan->c : 0;
}

size_t ap_stable_plan_row_size(const ap_stable_plan *plan, size_t client) {
  if (plan == NULL || client >= plan->c) return 0;
  return plan->row_start[client + 1] - plan->row_start[client];
}

const uint32_t *ap_stable_plan_row_endpoints(const ap_stable_plan *plan,
                                             size_t client) {
  if (plan == NULL || client >= plan->c) return NULL;
  return plan->row_ep + plan->row_start[client];
}

const double *ap_stable_plan_row_shares(const ap_stable_plan *plan,
                                        size_t client) {
  if (plan == NULL || client >= plan->c) return NULL;
  return plan->row_share + plan->row_start[client];
}

uint64_t ap_stable_plan_client_start(const ap_stable_plan *plan, size_t client) {
  if (plan == NULL || client >= plan->c) return 0;
  return plan->client_start[client];
}

double ap_stable_plan_load_max(const ap_stable_plan *plan) {
  return plan ? plan->load_max : 0;
}

uint32_t ap_stable_plan_rounds(const ap_stable_plan *plan) {
  return plan ? plan->rounds : 0;
}
