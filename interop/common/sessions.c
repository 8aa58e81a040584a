/* sessions: session sets and their change under one membership step. */
#include "interop/common/sessions.h"

#include <stdlib.h>
#include <string.h>

#include "policy/core/ap_hash.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/core/stable/ap_stable.h"

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

/* Every mode's sessions, one loop: client c takes peer index c % peer_count
 * and seed seed(c, ctx) and computes its aperture on the ring of n as the
 * policy does; `plan` is stable mode's service input (NULL otherwise). */
static int compute_fleet(int mode, uint32_t n, uint32_t peer_count, uint32_t extra,
                         const ap_stable_plan *plan, uint32_t min_aperture,
                         io_sessions_seed_fn seed, const void *seed_ctx, io_sessions *out,
                         ap_error *err) {
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
      p.stable_plan = plan;
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

int io_service_plan_create(int mode, size_t n, const uint64_t *endpoint_keys,
                           const double *weights, uint32_t clients, const uint64_t *client_keys,
                           uint32_t min_aperture, ap_stable_plan **plan, ap_error *err) {
  if (plan == NULL) return ap_error_set(err, AP_EINVAL, "plan must not be NULL");
  *plan = NULL;
  if (mode != (int)AP_MODE_STABLE || clients == 0) return AP_OK;
  return ap_stable_plan_create(endpoint_keys, weights, n, client_keys, clients, min_aperture,
                               plan, err);
}

uint64_t *io_ordinal_keys(const uint32_t *ids, uint32_t n) {
  uint64_t *keys = malloc(((size_t)n ? n : 1) * sizeof *keys);
  if (keys != NULL)
    for (uint32_t j = 0; j < n; j++) keys[j] = ap_stable_ordinal_key(ids ? ids[j] : j);
  return keys;
}

/* Sessions of a fleet keyed by identities (ordinal keys of server_ids and
 * client_ids, NULL: 0..n-1 and 0..clients-1). */
static int compute_by_ids(int mode, uint32_t n, const uint32_t *server_ids, uint32_t peer_count,
                          uint32_t extra, const uint32_t *client_ids, uint32_t min_aperture,
                          io_sessions_seed_fn seed, const void *seed_ctx, io_sessions *out,
                          ap_error *err) {
  uint64_t *ekeys = NULL, *ckeys = NULL;
  if (mode == (int)AP_MODE_STABLE) {
    ekeys = io_ordinal_keys(server_ids, n);
    ckeys = io_ordinal_keys(client_ids, peer_count);
    if (ekeys == NULL || ckeys == NULL) {
      free(ekeys);
      free(ckeys);
      return ap_error_set(err, AP_ENOMEM, "out of memory");
    }
  }
  int rc = io_sessions_compute_keyed(mode, n, ekeys, peer_count, extra, ckeys, min_aperture,
                                     seed, seed_ctx, out, err);
  free(ekeys);
  free(ckeys);
  return rc;
}

int io_sessions_compute_keyed(int mode, uint32_t n, const uint64_t *endpoint_keys,
                              uint32_t peer_count, uint32_t extra, const uint64_t *client_keys,
                              uint32_t min_aperture, io_sessions_seed_fn seed,
                              const void *seed_ctx, io_sessions *out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  memset(out, 0, sizeof *out);
  if (n == 0) return ap_error_set(err, AP_ERANGE, "n (servers) must be >= 1");
  if (peer_count == 0 && extra > 0)
    return ap_error_set(err, AP_ERANGE, "peer_count must be >= 1 with extra clients");
  if (extra > UINT32_MAX - peer_count)
    return ap_error_set(err, AP_ERANGE, "peer_count + extra overflows");
  if (mode == (int)AP_MODE_STABLE && extra > 0)
    return ap_error_set(err, AP_EINVAL, "stable clients have keys: no extra clients");
  if (mode == (int)AP_MODE_STABLE && peer_count > 0 &&
      (endpoint_keys == NULL || client_keys == NULL))
    return ap_error_set(err, AP_EINVAL, "stable mode needs endpoint_keys and client_keys");
  ap_stable_plan *plan = NULL;
  int rc = io_service_plan_create(mode, n, endpoint_keys, NULL, peer_count, client_keys,
                                  min_aperture, &plan, err);
  if (rc == AP_OK)
    rc = compute_fleet(mode, n, peer_count, extra, plan, min_aperture, seed, seed_ctx, out, err);
  ap_stable_plan_destroy(plan);
  return rc;
}

int io_sessions_compute_extra(int mode, uint32_t n, uint32_t peer_count,
                              uint32_t extra, uint32_t min_aperture,
                              io_sessions_seed_fn seed, const void *seed_ctx,
                              io_sessions *out, ap_error *err) {
  return compute_by_ids(mode, n, NULL, peer_count, extra, NULL, min_aperture, seed, seed_ctx,
                        out, err);
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
  id_seed_ctx ctx = {seed, seed_ctx, client_ids};
  const int by_id = client_ids != NULL && seed != NULL;
  int rc = compute_by_ids(mode, n, server_ids, clients, 0, client_ids, min_aperture,
                          by_id ? id_seed : seed, by_id ? (const void *)&ctx : seed_ctx, out,
                          err);
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
