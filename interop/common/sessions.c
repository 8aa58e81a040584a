/* sessions: session sets and their change under one membership step. */
#include "interop/common/sessions.h"

#include <stdlib.h>
#include <string.h>

#include "policy/core/ap_hash.h"
#include "policy/core/ap_ring.h"
#include "policy/core/ap_stable.h"

const char *io_sessions_mode_name(int mode) {
  return mode == IO_HASH_MOD ? "hash-mod" : ap_mode_name((ap_mode)mode);
}

void io_sessions_free(io_sessions *s) {
  if (s == NULL) return;
  free(s->idx);
  free(s->share);
  free(s->start);
  free(s->server_ids);
  memset(s, 0, sizeof *s);
}

/* Sorts one client's sessions by ring index, their shares alongside. */
static void sort_small(uint32_t *a, double *share, size_t n) {
  for (size_t i = 1; i < n; i++) {
    uint32_t x = a[i];
    double w = share[i];
    size_t j = i;
    while (j > 0 && a[j - 1] > x) {
      a[j] = a[j - 1];
      share[j] = share[j - 1];
      j--;
    }
    a[j] = x;
    share[j] = w;
  }
}

int io_sessions_compute(int mode, uint32_t n, uint32_t clients,
                        uint32_t min_aperture, io_sessions_seed_fn seed,
                        const void *seed_ctx, io_sessions *out,
                        ap_error *err) {
  return io_sessions_compute_extra(mode, n, clients, 0, min_aperture, seed,
                                   seed_ctx, out, err);
}

/* Grows both session arrays to hold at least `need`. */
static int grow(io_sessions *s, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t ncap = *cap;
  while (ncap < need) ncap *= 2;
  uint32_t *idx = realloc(s->idx, ncap * sizeof *idx);
  if (idx != NULL) s->idx = idx;
  double *share = realloc(s->share, ncap * sizeof *share);
  if (share != NULL) s->share = share;
  if (idx == NULL || share == NULL) return -1;
  *cap = ncap;
  return 0;
}

int io_sessions_compute_extra(int mode, uint32_t n, uint32_t peer_count,
                              uint32_t extra, uint32_t min_aperture,
                              io_sessions_seed_fn seed, const void *seed_ctx,
                              io_sessions *out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  memset(out, 0, sizeof *out);
  if (n == 0) return ap_error_set(err, AP_ERANGE, "n (servers) must be >= 1");
  if (peer_count == 0 && extra > 0)
    return ap_error_set(err, AP_ERANGE, "peer_count must be >= 1 with extra clients");
  if (extra > UINT32_MAX - peer_count)
    return ap_error_set(err, AP_ERANGE, "peer_count + extra overflows");
  /* Stable: one plan for the fleet (identities 0..n-1 and 0..C-1). */
  if (mode == (int)AP_MODE_STABLE) {
    if (extra > 0)
      return ap_error_set(err, AP_EINVAL,
                          "stable clients have identities: no extra clients");
    return io_sessions_compute_ids(mode, n, NULL, peer_count, NULL, min_aperture,
                                   seed, seed_ctx, out, err);
  }
  const uint32_t clients = peer_count + extra;
  out->ring_size = n;
  out->clients = clients;
  out->peer_count = peer_count;
  size_t cap = (size_t)clients * 16 + 16;
  out->idx = malloc(cap * sizeof *out->idx);
  out->share = malloc(cap * sizeof *out->share);
  out->start = malloc(((size_t)clients + 1) * sizeof *out->start);
  if (out->idx == NULL || out->share == NULL || out->start == NULL) {
    io_sessions_free(out);
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  }
  ap_ring *ring = NULL;
  int rc = AP_OK;
  if (mode != IO_HASH_MOD) rc = ap_ring_create(NULL, n, &ring, err);
  uint32_t a_count = min_aperture < n ? min_aperture : n;
  size_t total = 0;
  for (uint32_t c = 0; rc == AP_OK && c < clients; c++) {
    ap_aperture *a = NULL;
    size_t members = a_count;
    if (mode != IO_HASH_MOD) {
      ap_subset_params p;
      rc = ap_subset_params_for_client((ap_mode)mode, c % peer_count, peer_count,
                                       min_aperture, seed ? seed(c, seed_ctx) : 0,
                                       &p, err);
      if (rc == AP_OK) rc = ap_aperture_compute(ring, &p, &a, err);
      if (rc != AP_OK) break;
      members = ap_aperture_count(a);
    }
    if (grow(out, &cap, total + members) != 0) {
      ap_aperture_destroy(a);
      rc = ap_error_set(err, AP_ENOMEM, "out of memory");
      break;
    }
    out->start[c] = total;
    uint64_t first = ap_mix64(c) % n;
    double weights = 0;
    for (size_t k = 0; k < members; k++)
      weights += a ? ap_aperture_member(a, k)->pick_weight : 1.0;
    for (size_t k = 0; k < members; k++) {
      out->idx[total + k] = a ? ap_aperture_member(a, k)->index
                              : (uint32_t)((first + k) % n);
      double w = a ? ap_aperture_member(a, k)->pick_weight : 1.0;
      out->share[total + k] = weights > 0 ? w / weights : 0;
    }
    sort_small(out->idx + total, out->share + total, members);
    total += members;
    ap_aperture_destroy(a);
  }
  ap_ring_destroy(ring);
  if (rc != AP_OK) {
    io_sessions_free(out);
    return rc;
  }
  out->start[clients] = total;
  out->total = total;
  return AP_OK;
}

/* |A symmetric-difference B| of two sorted identity lists, where B's items
 * are relabelled ring indices: skip == position to leave out of B (the
 * joined server, counted separately), shift_from: indices >= it map to
 * index + shift. */
static size_t diff_count(const uint32_t *a, size_t na, const uint32_t *b,
                         size_t nb, uint32_t skip, uint32_t shift_from,
                         int shift) {
  size_t i = 0, j = 0, diff = 0;
  for (;;) {
    while (j < nb && b[j] == skip) j++;
    if (i == na || j == nb) break;
    uint32_t bj = b[j] >= shift_from ? (uint32_t)((int64_t)b[j] + shift) : b[j];
    if (a[i] == bj) {
      i++;
      j++;
    } else if (a[i] < bj) {
      diff++;
      i++;
    } else {
      diff++;
      j++;
    }
  }
  diff += na - i;
  for (; j < nb; j++)
    if (b[j] != skip) diff++;
  return diff;
}

static int contains(const uint32_t *a, size_t n, uint32_t x) {
  for (size_t i = 0; i < n; i++)
    if (a[i] == x) return 1;
  return 0;
}

/* Sessions changed over all clients from `before` to `after`, where after's
 * ring relabels as diff_count() describes; `server` is the position that
 * left (in before) or joined (in after), whose sessions *optimum counts. A
 * joined server's sessions are new, so they count as changed too. */
static size_t step_changes(const io_sessions *before, const io_sessions *after,
                           uint32_t server, int joined, size_t *optimum) {
  size_t diff = 0, opt = 0;
  for (uint32_t c = 0; c < before->clients; c++) {
    const uint32_t *a = before->idx + before->start[c];
    size_t na = before->start[c + 1] - before->start[c];
    const uint32_t *b = after->idx + after->start[c];
    size_t nb = after->start[c + 1] - after->start[c];
    if (!joined) {
      opt += (size_t)contains(a, na, server);
      /* after index j is identity j (j < server) or j + 1 */
      diff += diff_count(a, na, b, nb, UINT32_MAX, server, +1);
    } else {
      /* after index server is the new one; index j > server is j - 1 */
      size_t has = (size_t)contains(b, nb, server);
      opt += has;
      diff += diff_count(a, na, b, nb, server, server + 1, -1) + has;
    }
  }
  if (optimum) *optimum = opt;
  return diff;
}

size_t io_sessions_removed(const io_sessions *before, const io_sessions *after,
                           uint32_t r, size_t *optimum) {
  return step_changes(before, after, r, 0, optimum);
}

size_t io_sessions_added(const io_sessions *before, const io_sessions *after,
                         uint32_t p, size_t *optimum) {
  return step_changes(before, after, p, 1, optimum);
}

/* Stable sessions: one plan from the identities' keys, its rows copied. */
static int compute_stable(uint32_t n, const uint32_t *server_ids, uint32_t clients,
                          const uint32_t *client_ids, uint32_t min_aperture,
                          io_sessions *out, ap_error *err) {
  uint64_t *ekeys = malloc((size_t)n * sizeof *ekeys);
  uint64_t *ckeys = malloc((size_t)clients * sizeof *ckeys);
  ap_stable_plan *plan = NULL;
  int rc = AP_OK;
  if (ekeys == NULL || ckeys == NULL) {
    rc = ap_error_set(err, AP_ENOMEM, "out of memory");
  } else {
    for (uint32_t j = 0; j < n; j++)
      ekeys[j] = ap_stable_ordinal_key(server_ids ? server_ids[j] : j);
    for (uint32_t c = 0; c < clients; c++)
      ckeys[c] = ap_stable_ordinal_key(client_ids ? client_ids[c] : c);
    rc = ap_stable_plan_create(ekeys, NULL, n, ckeys, clients, min_aperture, &plan, err);
  }
  free(ekeys);
  free(ckeys);
  if (rc != AP_OK) return rc;
  size_t total = 0;
  for (uint32_t c = 0; c < clients; c++) total += ap_stable_plan_row_size(plan, c);
  out->ring_size = n;
  out->clients = clients;
  out->peer_count = clients;
  out->idx = malloc((total ? total : 1) * sizeof *out->idx);
  out->share = malloc((total ? total : 1) * sizeof *out->share);
  out->start = malloc(((size_t)clients + 1) * sizeof *out->start);
  if (out->idx == NULL || out->share == NULL || out->start == NULL) {
    ap_stable_plan_destroy(plan);
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  }
  size_t at = 0;
  for (uint32_t c = 0; c < clients; c++) {
    size_t m = ap_stable_plan_row_size(plan, c);
    out->start[c] = at;
    memcpy(out->idx + at, ap_stable_plan_row_endpoints(plan, c), m * sizeof *out->idx);
    memcpy(out->share + at, ap_stable_plan_row_shares(plan, c), m * sizeof *out->share);
    at += m;
  }
  out->start[clients] = total;
  out->total = total;
  ap_stable_plan_destroy(plan);
  return AP_OK;
}

/* Seeds by client identity for the window modes. */
typedef struct id_seed_ctx {
  io_sessions_seed_fn seed;
  const void *ctx;
  const uint32_t *client_ids;
} id_seed_ctx;

static uint64_t id_seed(uint32_t client, const void *ctx) {
  const id_seed_ctx *s = ctx;
  return s->seed(s->client_ids[client], s->ctx);
}

int io_sessions_compute_ids(int mode, uint32_t n, const uint32_t *server_ids,
                            uint32_t clients, const uint32_t *client_ids,
                            uint32_t min_aperture, io_sessions_seed_fn seed,
                            const void *seed_ctx, io_sessions *out,
                            ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  memset(out, 0, sizeof *out);
  if (n == 0) return ap_error_set(err, AP_ERANGE, "n (servers) must be >= 1");
  if (clients == 0) return ap_error_set(err, AP_ERANGE, "clients must be >= 1");
  if (mode == IO_HASH_MOD)
    return ap_error_set(err, AP_EINVAL, "hash-mod has no identity model");
  int rc;
  if (mode == (int)AP_MODE_STABLE) {
    rc = compute_stable(n, server_ids, clients, client_ids, min_aperture, out, err);
  } else if (client_ids != NULL && seed != NULL) {
    id_seed_ctx ctx = {seed, seed_ctx, client_ids};
    rc = io_sessions_compute_extra(mode, n, clients, 0, min_aperture, id_seed, &ctx, out, err);
  } else {
    rc = io_sessions_compute_extra(mode, n, clients, 0, min_aperture, seed, seed_ctx, out, err);
  }
  if (rc == AP_OK && server_ids != NULL) {
    out->server_ids = malloc((size_t)n * sizeof *out->server_ids);
    if (out->server_ids == NULL)
      rc = ap_error_set(err, AP_ENOMEM, "out of memory");
    else
      memcpy(out->server_ids, server_ids, (size_t)n * sizeof *server_ids);
  }
  if (rc != AP_OK) io_sessions_free(out);
  return rc;
}

static uint32_t server_id(const io_sessions *s, uint32_t index) {
  return s->server_ids ? s->server_ids[index] : index;
}

static uint32_t max_server_id(const io_sessions *s) {
  uint32_t hi = s->ring_size ? s->ring_size - 1 : 0;
  if (s->server_ids)
    for (uint32_t j = 0; j < s->ring_size; j++)
      if (s->server_ids[j] > hi) hi = s->server_ids[j];
  return hi;
}

size_t io_sessions_changed(const io_sessions *before, const io_sessions *after) {
  uint32_t hi = max_server_id(before), hi2 = max_server_id(after);
  if (hi2 > hi) hi = hi2;
  /* mark[id] == c + 1: client c of `before` holds id */
  uint32_t *mark = calloc((size_t)hi + 1, sizeof *mark);
  if (mark == NULL) return (size_t)-1;
  uint32_t common = before->clients < after->clients ? before->clients : after->clients;
  size_t diff = 0;
  for (uint32_t c = 0; c < common; c++) {
    size_t same = 0;
    for (size_t k = before->start[c]; k < before->start[c + 1]; k++)
      mark[server_id(before, before->idx[k])] = c + 1;
    for (size_t k = after->start[c]; k < after->start[c + 1]; k++)
      same += mark[server_id(after, after->idx[k])] == c + 1;
    diff += (before->start[c + 1] - before->start[c]) +
            (after->start[c + 1] - after->start[c]) - 2 * same;
  }
  diff += (before->total - before->start[common]) + (after->total - after->start[common]);
  free(mark);
  return diff;
}

size_t io_sessions_of_server(const io_sessions *s, uint32_t id) {
  size_t count = 0;
  for (size_t k = 0; k < s->total; k++) count += server_id(s, s->idx[k]) == id;
  return count;
}

double io_sessions_load_max(const io_sessions *s) {
  if (s->ring_size == 0 || s->clients == 0) return 0;
  double *load = calloc(s->ring_size, sizeof *load);
  if (load == NULL) return -1;
  for (uint32_t c = 0; c < s->clients; c++)
    for (size_t k = s->start[c]; k < s->start[c + 1]; k++) load[s->idx[k]] += s->share[k];
  double hi = 0;
  for (uint32_t j = 0; j < s->ring_size; j++)
    if (load[j] > hi) hi = load[j];
  free(load);
  return hi / ((double)s->clients / s->ring_size);
}
