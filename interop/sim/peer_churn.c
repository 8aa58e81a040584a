/* peer_churn: client joins and leaves on the core's apertures. */
#include "interop/sim/peer_churn.h"

#include <stdlib.h>
#include <string.h>

#include "interop/sim/sim_model.h"

static uint32_t slot_of(const peer_fleet *f, uint32_t identity) {
  return f->slot[identity];
}

static uint64_t client_seed(uint32_t identity, const void *ctx) {
  (void)ctx;
  return io_sim_client_seed(0, identity);
}

/* The fleet of the client identities ids[0..count) in peer-index order,
 * identities at most `top`. Takes ownership of ids. */
static int fleet_of(ap_mode mode, uint32_t n, uint32_t *ids, uint32_t count, uint32_t top,
                    uint32_t min_aperture, peer_fleet *out, ap_error *err) {
  memset(out, 0, sizeof *out);
  out->mode = mode;
  out->count = count;
  out->slot = malloc(((size_t)top + 1) * sizeof *out->slot);
  int rc = ids && out->slot ? AP_OK : ap_error_set(err, AP_ENOMEM, "out of memory");
  if (rc == AP_OK) {
    for (uint32_t i = 0; i <= top; i++) out->slot[i] = UINT32_MAX;
    for (uint32_t k = 0; k < count; k++) out->slot[ids[k]] = k;
    rc = io_sessions_compute_ids((int)mode, n, NULL, count, ids, min_aperture, client_seed, NULL,
                                 &out->s, err);
  }
  free(ids);
  if (rc != AP_OK) io_peer_fleet_free(out);
  return rc;
}

static uint32_t *identities(uint32_t count) {
  uint32_t *ids = malloc(((size_t)count ? count : 1) * sizeof *ids);
  if (ids != NULL)
    for (uint32_t i = 0; i < count; i++) ids[i] = i;
  return ids;
}

int io_peer_fleet_compute(ap_mode mode, uint32_t n, uint32_t count,
                          uint32_t min_aperture, peer_fleet *out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  memset(out, 0, sizeof *out);
  if (n == 0 || count == 0)
    return ap_error_set(err, AP_ERANGE, "servers and clients must be >= 1");
  return fleet_of(mode, n, identities(count), count, count, min_aperture, out, err);
}

int io_peer_fleet_compute_joined(ap_mode mode, uint32_t n, uint32_t count, uint32_t j,
                                 uint32_t min_aperture, peer_fleet *out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  memset(out, 0, sizeof *out);
  if (n == 0 || count == 0 || j > count || count == UINT32_MAX)
    return ap_error_set(err, AP_ERANGE, "a joiner needs servers, clients and j <= count");
  uint32_t *ids = malloc(((size_t)count + 1) * sizeof *ids);
  if (ids != NULL)
    for (uint32_t k = 0, i = 0; k <= count; k++) ids[k] = k == j ? count : i++;
  return fleet_of(mode, n, ids, count + 1, count, min_aperture, out, err);
}

int io_peer_fleet_compute_without(ap_mode mode, uint32_t n, uint32_t count,
                                  uint32_t leaver, uint32_t min_aperture,
                                  peer_fleet *out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  memset(out, 0, sizeof *out);
  if (n == 0 || count < 2 || leaver >= count)
    return ap_error_set(err, AP_ERANGE, "a leaver needs count >= 2 and leaver < count");
  uint32_t *ids = malloc((size_t)(count - 1) * sizeof *ids);
  if (ids != NULL)
    for (uint32_t i = 0, k = 0; i < count; i++)
      if (i != leaver) ids[k++] = i;
  return fleet_of(mode, n, ids, count - 1, count - 1, min_aperture, out, err);
}

void io_peer_fleet_free(peer_fleet *f) {
  if (f == NULL) return;
  io_sessions_free(&f->s);
  free(f->slot);
  memset(f, 0, sizeof *f);
}

size_t io_peer_fleet_sessions(const peer_fleet *f) {
  return f->s.start != NULL ? f->s.start[f->count] : 0;
}

static size_t slot_size(const peer_fleet *f, uint32_t s) {
  return f->s.start[s + 1] - f->s.start[s];
}

/* |A xor B| of two member lists (each without duplicates). */
static size_t symdiff(const peer_fleet *fa, uint32_t sa, const peer_fleet *fb,
                      uint32_t sb) {
  size_t na = slot_size(fa, sa), nb = slot_size(fb, sb), common = 0;
  const uint32_t *a = fa->s.idx + fa->s.start[sa], *b = fb->s.idx + fb->s.start[sb];
  /* Member lists are short or ring ordered; a quadratic scan stays cheap
   * for apertures, a mark array would for mesh: use marks always. */
  uint8_t *mark = calloc(fa->s.ring_size, 1);
  if (mark == NULL) return na + nb;
  for (size_t i = 0; i < na; i++) mark[a[i]] = 1;
  for (size_t i = 0; i < nb; i++) common += mark[b[i]];
  free(mark);
  return na + nb - 2 * common;
}

size_t io_peer_churn_join(const peer_fleet *before, const peer_fleet *after,
                          size_t *optimum) {
  uint32_t c = before->count;
  size_t changed = 0;
  for (uint32_t i = 0; i < c; i++)
    changed += symdiff(before, slot_of(before, i), after, slot_of(after, i));
  size_t joiner = slot_size(after, slot_of(after, c));
  *optimum = joiner;
  return changed + joiner;
}

size_t io_peer_churn_leave(const peer_fleet *before, const peer_fleet *after,
                           uint32_t l, size_t *optimum) {
  uint32_t c = before->count;
  size_t changed = 0;
  for (uint32_t i = 0; i < c; i++)
    if (i != l) changed += symdiff(before, slot_of(before, i), after, slot_of(after, i));
  size_t leaver = slot_size(before, slot_of(before, l));
  *optimum = leaver;
  return changed + leaver;
}

static void add_load(double *load, const peer_fleet *f, uint32_t s, double sign) {
  for (size_t k = f->s.start[s]; k < f->s.start[s + 1]; k++)
    load[f->s.idx[k]] += sign * f->s.share[k];
}

static double max_over_mean(const double *load, uint32_t n, double clients) {
  double hi = 0;
  for (uint32_t i = 0; i < n; i++)
    if (load[i] > hi) hi = load[i];
  return clients > 0 ? hi / (clients / n) : 0;
}

double io_peer_disagree_join_load(const peer_fleet *before, const peer_fleet *after) {
  uint32_t c = before->count, n = before->s.ring_size;
  double *load = calloc(n, sizeof *load);
  if (load == NULL) return -1;
  for (uint32_t i = 0; i < c; i++) add_load(load, before, slot_of(before, i), 1);
  add_load(load, after, slot_of(after, c), 1);
  double worst = max_over_mean(load, n, c + 1.0);
  for (uint32_t k = 0; k < c; k++) { /* client k moves to C+1 */
    add_load(load, before, slot_of(before, k), -1);
    add_load(load, after, slot_of(after, k), 1);
    double r = max_over_mean(load, n, c + 1.0);
    if (r > worst) worst = r;
  }
  free(load);
  return worst;
}

double io_peer_disagree_leave_load(const peer_fleet *before,
                                const peer_fleet *after, uint32_t l) {
  uint32_t c = before->count, n = before->s.ring_size;
  double *load = calloc(n, sizeof *load);
  if (load == NULL) return -1;
  for (uint32_t i = 0; i < c; i++)
    if (i != l) add_load(load, before, slot_of(before, i), 1);
  double worst = max_over_mean(load, n, c - 1.0);
  for (uint32_t k = 0; k < c; k++) {
    if (k == l) continue;
    add_load(load, before, slot_of(before, k), -1);
    add_load(load, after, slot_of(after, k), 1);
    double r = max_over_mean(load, n, c - 1.0);
    if (r > worst) worst = r;
  }
  free(load);
  return worst;
}

double io_peer_agreed_load(const peer_fleet *f) {
  double *load = calloc(f->s.ring_size, sizeof *load);
  if (load == NULL) return -1;
  for (uint32_t i = 0; i < f->count; i++) add_load(load, f, slot_of(f, i), 1);
  double r = max_over_mean(load, f->s.ring_size, f->count);
  free(load);
  return r;
}
