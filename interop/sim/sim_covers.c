/*
 * sim covers: the server-centric covers experiment, against the core's
 * stable plan, on the same fleets and with the same measures.
 *
 * Candidate ("covers"): no client walk. Each server s wants r_s clients,
 * about x = max(rmin, C * A / N) with A = min(min_aperture, N), capped at
 * C (see below for the rounding). Its candidates are the first r_s + slack distinct clients
 * clockwise from its point on a ring of 32 points per client, each at the
 * clockwise distance of the point that met it. All candidate pairs of the
 * fleet are taken in ascending distance (ties by server key, then client
 * key) and a pair is accepted while its server still wants clients and its
 * client holds fewer than cap = max(ceil(m), floor(capf * m)) members, m =
 * (sum of r_s) / C (and, with --exclusive F, fewer than F * N / C servers
 * it alone covers); a server still short afterwards takes its nearest
 * candidates regardless of the cap. r_s: the total T = round(x N) is split
 * floor(T / N) each, one more for the T mod N servers of smallest coin.
 * Floor: a client holding fewer than ceil(floorf * N / C) members (it could
 * not send its load: each server takes C / N) takes the next servers
 * clockwise from its own point on the server ring. Shares: Sinkhorn
 * scaling toward equal client totals and equal server loads (tolerance
 * 1e-4, 2000 rounds).
 * The "stable" rows are ap_stable_plan_create()'s plan on the same keys;
 * the "walkdef" rows are stable's walk with covers only where walks fall
 * short (build_walk_deficit()).
 *
 * Keys are the identities' ordinals (ap_stable_ordinal_key), as in every
 * other verb. Measures, per fleet N x C: connections per client (mean, max)
 * and against max(A, N/C); expected load max/mean; a server leaving and
 * joining (positions k*N/P, changed / optimum of the position-averaged
 * churn, optimum = the server's own sessions); a client joining and
 * leaving (the same with the client's sessions); optionally the rolling
 * deploy (each server replaced by a new identity, changed / the old and
 * new servers' sessions). A grid reports the worst of each over its cells.
 * Prototype code for measurement only: nothing here is product code.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "policy/core/ap_hash.h"
#include "policy/core/stable/ap_stable.h"

static const char kUsage[] =
    "sim covers [--servers 100] [--clients 100] [--min-aperture 12] [--rmin 1.5] "
    "[--cap 1.45] [--exclusive F] [--floor 1.25] [--slack 4] [--positions 4] [--deploy] [--grid-servers LO,HI] "
    "[--grid-clients LO,HI] [--grid-step 10] [--json]";

#define POINTS 32u
#define SALT_E 0x5DEECE66DA3B1F27ull
#define SALT_R 0xD6E8FEB86659FD93ull
#define STEP 0x9E3779B97F4A7C15ull

typedef struct params {
  double rmin, capf, exf, floorf;
  uint32_t slack, a;
  int variant; /* 0 covers, 1 core stable */
} params;

typedef struct fleet {
  uint64_t *pairs; /* server id << 32 | client id, sorted */
  size_t total;
  uint32_t conn_max;
  double load;
} fleet;

typedef struct pt {
  uint64_t pos;
  uint32_t who;
} pt;

static int pt_less(const void *x, const void *y) {
  const pt *a = x, *b = y;
  if (a->pos != b->pos) return a->pos < b->pos ? -1 : 1;
  return (a->who > b->who) - (a->who < b->who);
}

static int u64_less(const void *x, const void *y) {
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

typedef struct cand {
  uint64_t dist, skey, ckey;
  uint32_t s, i;
} cand;

static int cand_less(const void *x, const void *y) {
  const cand *a = x, *b = y;
  if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
  if (a->skey != b->skey) return a->skey < b->skey ? -1 : 1;
  return (a->ckey > b->ckey) - (a->ckey < b->ckey);
}

/* Sinkhorn on rows (client -> server indices); returns load max/mean. */
static double sinkhorn(const uint32_t *deg_start, const uint32_t *row, uint32_t n,
                       uint32_t c) {
  double *u = malloc(c * sizeof(double)), *v = malloc(n * sizeof(double));
  double *col = malloc(n * sizeof(double));
  const double target = (double)c / n;
  for (uint32_t s = 0; s < n; s++) v[s] = 1;
  for (uint32_t i = 0; i < c; i++) u[i] = 1.0 / (deg_start[i + 1] - deg_start[i]);
  for (int round = 0; round < 2000; round++) {
    memset(col, 0, n * sizeof(double));
    for (uint32_t i = 0; i < c; i++)
      for (uint32_t k = deg_start[i]; k < deg_start[i + 1]; k++) col[row[k]] += u[i];
    double err = 0;
    for (uint32_t s = 0; s < n; s++) {
      const double e = fabs(col[s] * v[s] / target - 1);
      if (e > err) err = e;
    }
    if (err <= 1e-4) break;
    for (uint32_t s = 0; s < n; s++) v[s] = col[s] > 0 ? target / col[s] : 1;
    for (uint32_t i = 0; i < c; i++) {
      double sum = 0;
      for (uint32_t k = deg_start[i]; k < deg_start[i + 1]; k++) sum += v[row[k]];
      u[i] = 1.0 / sum;
    }
  }
  memset(col, 0, n * sizeof(double));
  for (uint32_t i = 0; i < c; i++) {
    double sum = 0;
    for (uint32_t k = deg_start[i]; k < deg_start[i + 1]; k++) sum += v[row[k]];
    for (uint32_t k = deg_start[i]; k < deg_start[i + 1]; k++) col[row[k]] += v[row[k]] / sum;
  }
  double max = 0;
  for (uint32_t s = 0; s < n; s++)
    if (col[s] / target > max) max = col[s] / target;
  free(u);
  free(v);
  free(col);
  return max;
}

/* Fills f from per-client rows given as (client, server index) pairs. */
static void finish(fleet *f, const uint64_t *pairs_ci, size_t total, const uint32_t *sid,
                   const uint32_t *cid, uint32_t n, uint32_t c) {
  uint32_t *start = calloc(c + 1, sizeof(uint32_t));
  uint32_t *row = malloc((total ? total : 1) * sizeof(uint32_t));
  for (size_t k = 0; k < total; k++) start[(pairs_ci[k] >> 32) + 1]++;
  f->conn_max = 0;
  for (uint32_t i = 0; i < c; i++) {
    if (start[i + 1] > f->conn_max) f->conn_max = start[i + 1];
    start[i + 1] += start[i];
  }
  uint32_t *fill = malloc((c + 1) * sizeof(uint32_t));
  memcpy(fill, start, (c + 1) * sizeof(uint32_t));
  for (size_t k = 0; k < total; k++)
    row[fill[pairs_ci[k] >> 32]++] = (uint32_t)pairs_ci[k];
  f->load = sinkhorn(start, row, n, c);
  f->total = total;
  f->pairs = malloc((total ? total : 1) * sizeof(uint64_t));
  for (size_t k = 0; k < total; k++)
    f->pairs[k] = (uint64_t)sid[(uint32_t)pairs_ci[k]] << 32 | cid[pairs_ci[k] >> 32];
  qsort(f->pairs, total, sizeof(uint64_t), u64_less);
  free(start);
  free(row);
  free(fill);
}

static void build_covers(const params *p, const uint32_t *sid, uint32_t n,
                         const uint32_t *cid, uint32_t c, fleet *f) {
  const uint32_t a = p->a < n ? p->a : n;
  double x = (double)c * a / n;
  if (x < p->rmin) x = p->rmin;
  uint64_t *ck = malloc(c * sizeof(uint64_t));
  pt *ring = malloc((size_t)c * POINTS * sizeof(pt));
  for (uint32_t i = 0; i < c; i++) {
    ck[i] = ap_stable_ordinal_key(cid[i]);
    for (uint32_t v = 0; v < POINTS; v++)
      ring[i * POINTS + v] = (pt){ap_mix64(ck[i] + v * STEP), i};
  }
  const size_t cp = (size_t)c * POINTS;
  qsort(ring, cp, sizeof(pt), pt_less);
  uint32_t *want = malloc(n * sizeof(uint32_t));
  size_t ncand = 0, cap_cand = 0, want_sum = 0;
  /* Exact total T = round(x N): base = floor(T / N) each, +1 for the e
   * servers of smallest coin (a prefix of the coin order). */
  const size_t t_total = (size_t)llround(x * n);
  const uint32_t base = (uint32_t)(t_total / n);
  const size_t extra = t_total - (size_t)base * n;
  pt *coins = malloc(n * sizeof(pt));
  for (uint32_t s = 0; s < n; s++)
    coins[s] = (pt){ap_mix64(ap_stable_ordinal_key(sid[s]) ^ SALT_R), s};
  qsort(coins, n, sizeof(pt), pt_less);
  for (uint32_t q = 0; q < n; q++) {
    const uint32_t s = coins[q].who;
    uint32_t r = base + (q < extra);
    if (r > c) r = c;
    if (r < 1) r = 1;
    want[s] = r;
    want_sum += r;
    cap_cand += r + p->slack;
  }
  free(coins);
  cand *cs = malloc(cap_cand * sizeof(cand));
  size_t *cstart = malloc((n + 1) * sizeof(size_t));
  for (uint32_t s = 0; s < n; s++) {
    const uint64_t key = ap_stable_ordinal_key(sid[s]);
    const uint64_t pos = ap_mix64(key ^ SALT_E);
    uint32_t k = want[s] + p->slack;
    if (k > c) k = c;
    size_t lo = 0, hi = cp;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (ring[mid].pos < pos) lo = mid + 1; else hi = mid;
    }
    size_t at = lo == cp ? 0 : lo;
    cstart[s] = ncand;
    uint32_t got = 0;
    while (got < k) {
      const uint32_t who = ring[at].who;
      int dup = 0;
      for (size_t q = cstart[s]; q < ncand; q++) dup |= cs[q].i == who;
      if (!dup) {
        cs[ncand++] = (cand){ring[at].pos - pos, key, ck[who], s, who};
        got++;
      }
      at = at + 1 == cp ? 0 : at + 1;
    }
  }
  cstart[n] = ncand;
  const double m = (double)want_sum / c;
  uint32_t cap = (uint32_t)floor(p->capf * m);
  if (cap < (uint32_t)ceil(m)) cap = (uint32_t)ceil(m);
  /* taken flags per candidate, in per-server order */
  unsigned char *taken = calloc(ncand, 1);
  cand *sorted = malloc(ncand * sizeof(cand));
  memcpy(sorted, cs, ncand * sizeof(cand));
  qsort(sorted, ncand, sizeof(cand), cand_less);
  uint32_t *need = malloc(n * sizeof(uint32_t));
  uint32_t *cnt = calloc(c, sizeof(uint32_t));
  uint32_t *excl = calloc(c, sizeof(uint32_t));
  uint32_t cap_ex = (uint32_t)floor(p->exf * n / c);
  if (cap_ex < 1) cap_ex = 1;
  memcpy(need, want, n * sizeof(uint32_t));
  uint64_t *out = malloc((want_sum + 1) * sizeof(uint64_t));
  size_t total = 0;
  for (size_t q = 0; q < ncand; q++) {
    const cand *x2 = &sorted[q];
    if (need[x2->s] == 0 || cnt[x2->i] >= cap) continue;
    if (want[x2->s] == 1 && excl[x2->i] >= cap_ex) continue;
    if (want[x2->s] == 1) excl[x2->i]++;
    need[x2->s]--;
    cnt[x2->i]++;
    for (size_t t = cstart[x2->s]; t < cstart[x2->s + 1]; t++)
      if (cs[t].i == x2->i) taken[t] = 1;
    out[total++] = (uint64_t)x2->i << 32 | x2->s;
  }
  for (uint32_t s = 0; s < n; s++)
    for (size_t t = cstart[s]; t < cstart[s + 1] && need[s] > 0; t++)
      if (!taken[t]) {
        taken[t] = 1;
        need[s]--;
        out[total++] = (uint64_t)cs[t].i << 32 | s;
      }
  /* Floor: a client holding fewer than ceil(floorf * N / C) members (less
   * than it must send, with margin) takes the next servers clockwise from
   * its point on the server ring until it holds that many. */
  uint32_t fl = (uint32_t)ceil(p->floorf * n / c);
  if (fl > n) fl = n;
  size_t over = 0;
  for (uint32_t i = 0; i < c; i++) over += cnt[i] < fl ? fl - cnt[i] : 0;
  if (over > 0) {
    out = realloc(out, (total + over + 1) * sizeof(uint64_t));
    pt *sring = malloc(n * sizeof(pt));
    for (uint32_t s = 0; s < n; s++)
      sring[s] = (pt){ap_mix64(ap_stable_ordinal_key(sid[s]) ^ SALT_E), s};
    qsort(sring, n, sizeof(pt), pt_less);
    unsigned char *held = calloc(n, 1);
    for (uint32_t i = 0; i < c; i++) {
      if (cnt[i] >= fl) continue;
      for (size_t q = 0; q < total; q++)
        if ((uint32_t)(out[q] >> 32) == i) held[(uint32_t)out[q]] = 1;
      const uint64_t pos = ap_mix64(ck[i]);
      size_t lo = 0, hi = n;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sring[mid].pos < pos) lo = mid + 1; else hi = mid;
      }
      size_t at = lo == n ? 0 : lo;
      const size_t mine_end = total;
      while (cnt[i] < fl) {
        const uint32_t s = sring[at].who;
        if (!held[s]) {
          held[s] = 1;
          cnt[i]++;
          out[total++] = (uint64_t)i << 32 | s;
        }
        at = at + 1 == n ? 0 : at + 1;
      }
      for (size_t q = 0; q < mine_end; q++)
        if ((uint32_t)(out[q] >> 32) == i) held[(uint32_t)out[q]] = 0;
      for (size_t q = mine_end; q < total; q++) held[(uint32_t)out[q]] = 0;
    }
    free(held);
    free(sring);
  }
  finish(f, out, total, sid, cid, n, c);
  free(ck);
  free(ring);
  free(want);
  free(cs);
  free(cstart);
  free(taken);
  free(sorted);
  free(need);
  free(cnt);
  free(excl);
  free(out);
}

static void build_stable(const params *p, const uint32_t *sid, uint32_t n,
                         const uint32_t *cid, uint32_t c, fleet *f) {
  uint64_t *ek = malloc(n * sizeof(uint64_t)), *ck = malloc(c * sizeof(uint64_t));
  for (uint32_t s = 0; s < n; s++) ek[s] = ap_stable_ordinal_key(sid[s]);
  for (uint32_t i = 0; i < c; i++) ck[i] = ap_stable_ordinal_key(cid[i]);
  ap_stable_plan *plan = NULL;
  ap_error err;
  if (ap_stable_plan_create(ek, NULL, n, ck, c, p->a, &plan, &err) != AP_OK) {
    fprintf(stderr, "sim covers: %s\n", err.message);
    exit(1);
  }
  size_t total = 0;
  for (uint32_t i = 0; i < c; i++) total += ap_stable_plan_row_size(plan, i);
  uint64_t *out = malloc((total ? total : 1) * sizeof(uint64_t));
  size_t k = 0;
  for (uint32_t i = 0; i < c; i++) {
    const uint32_t *row = ap_stable_plan_row_endpoints(plan, i);
    for (size_t j = 0; j < ap_stable_plan_row_size(plan, i); j++)
      out[k++] = (uint64_t)i << 32 | row[j];
  }
  finish(f, out, total, sid, cid, n, c);
  f->load = ap_stable_plan_load_max(plan);
  ap_stable_plan_destroy(plan);
  free(out);
  free(ek);
  free(ck);
}

/* Variant "walk+deficit": stable's walk (A consecutive servers from the
 * client's point 0 on the server ring), and covers only where walks fall
 * short: server s, walked by w_s clients, takes max(0, R_s - w_s) more,
 * the first distinct clients clockwise from its point on the client ring
 * that do not walk it; R_s is stable's cover count (1 or 2 by a coin). */
static void build_walk_deficit(const params *p, const uint32_t *sid, uint32_t n,
                               const uint32_t *cid, uint32_t c, fleet *f) {
  const uint32_t a = p->a < n ? p->a : n;
  uint64_t *ek = malloc(n * sizeof(uint64_t)), *ck = malloc(c * sizeof(uint64_t));
  pt *sring = malloc(n * sizeof(pt));
  for (uint32_t s = 0; s < n; s++) {
    ek[s] = ap_stable_ordinal_key(sid[s]);
    sring[s] = (pt){ap_stable_endpoint_point(ek[s]), s};
  }
  qsort(sring, n, sizeof(pt), pt_less);
  for (uint32_t i = 0; i < c; i++) ck[i] = ap_stable_ordinal_key(cid[i]);
  uint64_t *out = malloc(((size_t)c * a + 2 * (size_t)n + 1) * sizeof(uint64_t));
  size_t total = 0;
  uint32_t *w = calloc(n, sizeof(uint32_t));
  for (uint32_t i = 0; i < c; i++) {
    const uint64_t pos = ap_stable_client_point(ck[i], 0);
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (sring[mid].pos < pos) lo = mid + 1; else hi = mid;
    }
    size_t at = lo == n ? 0 : lo;
    for (uint32_t k = 0; k < a; k++) {
      const uint32_t s = sring[at].who;
      out[total++] = (uint64_t)i << 32 | s;
      w[s]++;
      at = at + 1 == n ? 0 : at + 1;
    }
  }
  const size_t walks = total;
  /* walkers per server, to skip them when covering */
  uint32_t *wstart = calloc(n + 1, sizeof(uint32_t)), *wlist = malloc((walks + 1) * sizeof(uint32_t));
  for (size_t q = 0; q < walks; q++) wstart[(uint32_t)out[q] + 1]++;
  for (uint32_t s = 0; s < n; s++) wstart[s + 1] += wstart[s];
  uint32_t *fill = malloc((n + 1) * sizeof(uint32_t));
  memcpy(fill, wstart, (n + 1) * sizeof(uint32_t));
  for (size_t q = 0; q < walks; q++) wlist[fill[(uint32_t)out[q]]++] = (uint32_t)(out[q] >> 32);
  const size_t cp = (size_t)c * POINTS;
  pt *ring = malloc(cp * sizeof(pt));
  for (uint32_t i = 0; i < c; i++)
    for (uint32_t v = 0; v < POINTS; v++)
      ring[i * POINTS + v] = (pt){ap_stable_client_point(ck[i], v), i};
  qsort(ring, cp, sizeof(pt), pt_less);
  for (uint32_t s = 0; s < n; s++) {
    uint32_t r = ap_stable_cover_count(ek[s]);
    if (r > c) r = c;
    if (w[s] >= r) continue;
    uint32_t need = r - w[s], got = 0, chosen[2];
    const uint64_t pos = ap_stable_endpoint_point(ek[s]);
    size_t lo = 0, hi = cp;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (ring[mid].pos < pos) lo = mid + 1; else hi = mid;
    }
    size_t at = lo == cp ? 0 : lo;
    for (size_t steps = 0; got < need && steps < cp; steps++) {
      const uint32_t who = ring[at].who;
      int skip = 0;
      for (uint32_t q = wstart[s]; q < wstart[s + 1]; q++) skip |= wlist[q] == who;
      for (uint32_t q = 0; q < got; q++) skip |= chosen[q] == who;
      if (!skip) {
        chosen[got++] = who;
        out[total++] = (uint64_t)who << 32 | s;
      }
      at = at + 1 == cp ? 0 : at + 1;
    }
  }
  finish(f, out, total, sid, cid, n, c);
  free(ek);
  free(ck);
  free(sring);
  free(out);
  free(w);
  free(wstart);
  free(wlist);
  free(fill);
  free(ring);
}

static void build(const params *p, const uint32_t *sid, uint32_t n, const uint32_t *cid,
                  uint32_t c, fleet *f) {
  if (p->variant == 0)
    build_covers(p, sid, n, cid, c, f);
  else if (p->variant == 2)
    build_walk_deficit(p, sid, n, cid, c, f);
  else
    build_stable(p, sid, n, cid, c, f);
}

static size_t symdiff(const fleet *a, const fleet *b) {
  size_t i = 0, j = 0, d = 0;
  while (i < a->total || j < b->total) {
    if (j == b->total || (i < a->total && a->pairs[i] < b->pairs[j])) {
      d++;
      i++;
    } else if (i == a->total || b->pairs[j] < a->pairs[i]) {
      d++;
      j++;
    } else {
      i++;
      j++;
    }
  }
  return d;
}

static size_t sessions_of(const fleet *f, uint32_t id, int server) {
  size_t k = 0;
  for (size_t q = 0; q < f->total; q++)
    k += server ? (uint32_t)(f->pairs[q] >> 32) == id : (uint32_t)f->pairs[q] == id;
  return k;
}

typedef struct cell {
  double conn_mean, conn_max, floor, load;
  double srem, sadd, cjoin, cleave, deploy; /* changed / optimum */
} cell;

static uint32_t *seq(uint32_t n) {
  uint32_t *v = malloc((n + 1) * sizeof(uint32_t));
  for (uint32_t k = 0; k < n; k++) v[k] = k;
  return v;
}

static void run_cell(const params *p, uint32_t n, uint32_t c, uint32_t positions,
                     int deploy, cell *out) {
  uint32_t *sid = seq(n + 1), *cid = seq(c + 1), *tmp = malloc((n + c + 2) * sizeof(uint32_t));
  fleet base, f;
  build(p, sid, n, cid, c, &base);
  const uint32_t a = p->a < n ? p->a : n;
  out->conn_mean = (double)base.total / c;
  out->conn_max = base.conn_max;
  out->floor = (double)n / c > a ? (double)n / c : a;
  out->load = base.load;
  double ch = 0, opt = 0;
  if (n > 1) {
    for (uint32_t k = 0; k < positions; k++) { /* server leaves */
      const uint32_t at = (uint32_t)((uint64_t)k * n / positions);
      for (uint32_t j = 0, q = 0; j < n; j++)
        if (j != at) tmp[q++] = j;
      build(p, tmp, n - 1, cid, c, &f);
      ch += symdiff(&base, &f);
      opt += sessions_of(&base, at, 1);
      free(f.pairs);
    }
  }
  out->srem = opt > 0 ? ch / opt : 0;
  ch = opt = 0;
  for (uint32_t k = 0; k < positions; k++) { /* server joins (identity n) */
    sid[n] = n;
    build(p, sid, n + 1, cid, c, &f);
    ch += symdiff(&base, &f);
    opt += sessions_of(&f, n, 1);
    free(f.pairs);
    break; /* the joiner's place follows its key: one join is every position */
  }
  out->sadd = opt > 0 ? ch / opt : 0;
  ch = opt = 0;
  cid[c] = c; /* client joins */
  build(p, sid, n, cid, c + 1, &f);
  ch += symdiff(&base, &f);
  opt += sessions_of(&f, c, 0);
  free(f.pairs);
  out->cjoin = opt > 0 ? ch / opt : 0;
  ch = opt = 0;
  if (c > 1) {
    for (uint32_t k = 0; k < positions && k < c; k++) {
      const uint32_t at = (uint32_t)((uint64_t)k * c / positions);
      for (uint32_t j = 0, q = 0; j < c; j++)
        if (j != at) tmp[q++] = j;
      build(p, sid, n, tmp, c - 1, &f);
      ch += symdiff(&base, &f);
      opt += sessions_of(&base, at, 0);
      free(f.pairs);
    }
  }
  out->cleave = opt > 0 ? ch / opt : 0;
  out->deploy = 0;
  if (deploy) {
    uint32_t *ids = seq(n);
    fleet before = base;
    before.pairs = malloc(base.total * sizeof(uint64_t));
    memcpy(before.pairs, base.pairs, base.total * sizeof(uint64_t));
    ch = opt = 0;
    for (uint32_t st = 0; st < n; st++) {
      const uint32_t gone = ids[0];
      memmove(ids, ids + 1, (n - 1) * sizeof(uint32_t));
      ids[n - 1] = n + st;
      build(p, ids, n, cid, c, &f);
      ch += symdiff(&before, &f);
      opt += sessions_of(&before, gone, 1) + sessions_of(&f, n + st, 1);
      if (f.load > out->load) out->load = f.load;
      free(before.pairs);
      before = f;
    }
    free(before.pairs);
    free(ids);
    out->deploy = opt > 0 ? ch / opt : 0;
  }
  free(base.pairs);
  free(sid);
  free(cid);
  free(tmp);
}

/* json: 0 text, 1 the first JSON row, 2 and up a later one (comma first). */
static void print_cell(const char *name, uint32_t n, uint32_t c, const cell *x, int json) {
  if (json)
    printf("%s{\"variant\":\"%s\",\"servers\":%u,\"clients\":%u,\"connections_per_client\":%.4f,"
           "\"connections_per_client_max\":%.0f,\"connections_ratio\":%.4f,"
           "\"busiest_over_mean\":%.4f,\"load\":%.6f,\"server_remove\":%.4f,"
           "\"server_add\":%.4f,\"client_join\":%.4f,\"client_leave\":%.4f,\"deploy\":%.4f}",
           json > 1 ? "," : "", name, n, c, x->conn_mean, x->conn_max, x->conn_mean / x->floor,
           x->conn_max / x->conn_mean, x->load, x->srem, x->sadd, x->cjoin, x->cleave,
           x->deploy);
  else
    printf("%-7s %5u x %-5u conns %7.2f (max %4.0f) %5.2fx busiest %4.2fx load %.5f "
           "srv -/+ %4.2f/%4.2f cli +/- %4.2f/%4.2f deploy %4.2f\n",
           name, n, c, x->conn_mean, x->conn_max, x->conn_mean / x->floor,
           x->conn_max / x->conn_mean, x->load, x->srem, x->sadd, x->cjoin, x->cleave,
           x->deploy);
}

static uint32_t next_c(uint32_t c, uint32_t hi) {
  uint32_t next = c < 30 ? c + 1 : (c < 100 ? c + 10 : c + 50);
  return (next > hi && c < hi) ? hi : next;
}

int io_sim_verb_covers(int argc, char **argv) {
  uint32_t servers = 100, clients = 100, a = 12, slack = 4, positions = 4, step = 10;
  double rmin = 1.5, capf = 1.45, exf = 100, floorf = 1.25;
  int deploy = 0, json = 0;
  sim_list gs, gc;
  memset(&gs, 0, sizeof gs);
  memset(&gc, 0, sizeof gc);
  sim_flag flags[] = {
      {"servers", SIM_FLAG_UINT, &servers, 2, 5000, 0},
      {"clients", SIM_FLAG_UINT, &clients, 1, 5000, 0},
      {"min-aperture", SIM_FLAG_UINT, &a, 1, 1000, 0},
      {"rmin", SIM_FLAG_DOUBLE, &rmin, 1, 8, 0},
      {"cap", SIM_FLAG_DOUBLE, &capf, 1, 100, 0},
      {"exclusive", SIM_FLAG_DOUBLE, &exf, 0, 100, 0},
      {"floor", SIM_FLAG_DOUBLE, &floorf, 0, 100, 0},
      {"slack", SIM_FLAG_UINT, &slack, 0, 100, 0},
      {"positions", SIM_FLAG_UINT, &positions, 1, 100, 0},
      {"grid-step", SIM_FLAG_UINT, &step, 1, 1000, 0},
      {"grid-servers", SIM_FLAG_LIST, &gs, 2, 5000, 0},
      {"grid-clients", SIM_FLAG_LIST, &gc, 1, 5000, 0},
      {"deploy", SIM_FLAG_BOOL, &deploy, 0, 0, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0], kUsage);
  if (rc != 0) return rc;
  if ((gs.n != 0 && gs.n != 2) || (gc.n != 0 && gc.n != 2) ||
      (gs.n == 2) != (gc.n == 2))
    return io_sim_args_fail("covers", kUsage, "--grid-servers and --grid-clients take LO,HI");
  for (int variant = 0; variant < 3; variant++) {
    const params p = {rmin, capf, exf, floorf, slack, a, variant};
    const char *name = variant == 0 ? "covers" : variant == 1 ? "stable" : "walkdef";
    if (gs.n == 0) {
      cell x;
      run_cell(&p, servers, clients, positions, deploy, &x);
      if (json && variant == 0) printf("{\"rows\":[");
      print_cell(name, servers, clients, &x, json ? 1 + variant : 0);
      if (json && variant == 2) printf("]}\n");
      continue;
    }
    cell worst;
    memset(&worst, 0, sizeof worst);
    double worst_dense = 0, busiest = 0;
    uint32_t wn[10] = {0}, wc[10] = {0};
    for (uint32_t c = gc.v[0]; c <= gc.v[1]; c = next_c(c, gc.v[1]))
      for (uint32_t n = gs.v[0]; n <= gs.v[1]; n += step) {
        cell x;
        run_cell(&p, n, c, positions, deploy, &x);
        const double ratio = x.conn_mean / x.floor, b = x.conn_max / x.conn_mean;
        const double v[8] = {ratio, b, x.load, x.srem, x.sadd, x.cjoin, x.cleave, x.deploy};
        double *w[8] = {&worst.conn_mean, &busiest, &worst.load, &worst.srem,
                        &worst.sadd, &worst.cjoin, &worst.cleave, &worst.deploy};
        for (int q = 0; q < 8; q++)
          if (v[q] > *w[q]) {
            *w[q] = v[q];
            wn[q] = n;
            wc[q] = c;
          }
        if ((double)c * (a < n ? a : n) / n >= 2 && ratio > worst_dense) {
          worst_dense = ratio;
          wn[8] = n;
          wc[8] = c;
        }
      }
    printf("%s grid %u..%u step %u x %u..%u: worst conns ratio %.3f (%ux%u), dense %.3f "
           "(%ux%u), busiest/mean %.3f (%ux%u), load %.5f (%ux%u), server -/+ %.2f (%ux%u) "
           "/ %.2f (%ux%u), client +/- %.2f (%ux%u) / %.2f (%ux%u), deploy %.2f (%ux%u)\n",
           name, gs.v[0], gs.v[1], step, gc.v[0], gc.v[1], worst.conn_mean, wn[0], wc[0],
           worst_dense, wn[8], wc[8], busiest, wn[1], wc[1], worst.load, wn[2], wc[2],
           worst.srem, wn[3], wc[3], worst.sadd, wn[4], wc[4], worst.cjoin, wn[5], wc[5],
           worst.cleave, wn[6], wc[6], worst.deploy, wn[7], wc[7]);
  }
  return SIM_EXIT_OK;
}
