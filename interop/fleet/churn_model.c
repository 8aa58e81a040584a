/* churn_model: the core's prediction of a real fleet's sessions, on the
 * shared session model (common/sessions.h). */
#include "interop/fleet/churn_model.h"

#include <stdlib.h>
#include <string.h>

#include "interop/common/sessions.h"
#include "policy/core/ap_hash.h"
#include "policy/core/ring/ap_order.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/core/stable/ap_stable.h"

uint64_t io_churn_model_seed(uint32_t client) { return ap_mix64((uint64_t)client + 1); }

static int check_fleet(const churn_model_fleet *fleet, uint32_t client, ap_error *err) {
  if (fleet == NULL) return ap_error_set(err, AP_EINVAL, "fleet is NULL");
  if (client >= fleet->clients) {
    return ap_error_set(err, AP_EINVAL, "client %u out of range (clients %u)", client,
                        fleet->clients);
  }
  if (fleet->mode == AP_MODE_RANDOM && fleet->seeds == NULL) {
    return ap_error_set(err, AP_EINVAL, "random mode needs the clients' seeds");
  }
  return AP_OK;
}

static uint64_t fleet_seed(uint32_t client, const void *ctx) {
  const churn_model_fleet *fleet = ctx;
  return fleet->seeds != NULL ? fleet->seeds[client] : 0;
}

/* The fleet's keys, as the policy keys them: endpoint key of ring index k
 * = ap_stable_key(its address string); peer key of client c =
 * ap_stable_ordinal_key(c) (the fleet's clients have a static peer index
 * and no peer list). Only stable mode's apertures follow them. */
static int fleet_keys(const char *const *addresses, size_t n, const size_t *order,
                      uint32_t clients, uint64_t **endpoint_keys, uint64_t **client_keys,
                      ap_error *err) {
  *endpoint_keys = malloc(n * sizeof **endpoint_keys);
  *client_keys = malloc((clients ? clients : 1) * sizeof **client_keys);
  if (*endpoint_keys == NULL || *client_keys == NULL)
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  for (size_t k = 0; k < n; k++) (*endpoint_keys)[k] = ap_stable_key(addresses[order[k]]);
  for (uint32_t c = 0; c < clients; c++) (*client_keys)[c] = ap_stable_ordinal_key(c);
  return AP_OK;
}

/* The fleet's sessions on its ring (io_sessions) and, as the policy orders
 * the address strings, the address each ring index is: order[k] is the
 * position in `addresses` of ring index k (n entries). */
static int fleet_model(const churn_model_fleet *fleet, const char *const *addresses, size_t n,
                       size_t *order, io_sessions *s, ap_error *err) {
  if (n == 0 || n > AP_MAX_ENDPOINTS) return ap_error_set(err, AP_ERANGE, "no addresses");
  int rc = ap_order_endpoints(addresses, n, order, err);
  if (rc != AP_OK) return rc;
  uint64_t *endpoint_keys = NULL, *client_keys = NULL;
  rc = fleet_keys(addresses, n, order, fleet->clients, &endpoint_keys, &client_keys, err);
  if (rc == AP_OK)
    rc = io_sessions_compute_keyed((int)fleet->mode, (uint32_t)n, endpoint_keys, fleet->clients,
                                   0, client_keys, fleet->min_aperture, fleet_seed, fleet, s,
                                   err);
  free(endpoint_keys);
  free(client_keys);
  return rc;
}

/* member[i] = 1 when client c of s holds addresses[i]: the client's ring
 * indices mapped back through order. */
static void client_members(const io_sessions *s, const size_t *order, size_t n, uint32_t c,
                           uint8_t *member) {
  memset(member, 0, n);
  for (size_t k = s->start[c]; k < s->start[c + 1]; k++) member[order[s->idx[k]]] = 1;
}

int io_churn_model_members(const churn_model_fleet *fleet, const char *const *addresses, size_t n,
                        uint32_t client, uint8_t *member, ap_error *err) {
  int rc = check_fleet(fleet, client, err);
  if (rc != AP_OK) return rc;
  if (addresses == NULL || member == NULL) {
    return ap_error_set(err, AP_EINVAL, "addresses and member must not be NULL");
  }
  if (n == 0 || n > AP_MAX_ENDPOINTS) return ap_error_set(err, AP_ERANGE, "no addresses");
  size_t *order = malloc(n * sizeof *order);
  if (order == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  io_sessions s;
  rc = fleet_model(fleet, addresses, n, order, &s, err);
  if (rc == AP_OK) {
    client_members(&s, order, n, client, member);
    io_sessions_free(&s);
  }
  free(order);
  return rc;
}

int io_churn_model_sessions(const churn_model_fleet *fleet, const char *const *addresses, size_t n,
                         long *sessions, long *total, ap_error *err) {
  if (fleet == NULL || sessions == NULL || addresses == NULL) {
    return ap_error_set(err, AP_EINVAL, "fleet, addresses and sessions must not be NULL");
  }
  if (fleet->clients > 0) {
    int rc = check_fleet(fleet, 0, err);
    if (rc != AP_OK) return rc;
  }
  if (n == 0 || n > AP_MAX_ENDPOINTS) return ap_error_set(err, AP_ERANGE, "no addresses");
  size_t *order = malloc(n * sizeof *order);
  if (order == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  memset(sessions, 0, n * sizeof *sessions);
  io_sessions s;
  int rc = fleet_model(fleet, addresses, n, order, &s, err);
  if (rc == AP_OK) {
    for (size_t k = 0; k < s.total; k++) sessions[order[s.idx[k]]]++;
    if (total != NULL) *total = (long)s.total;
    io_sessions_free(&s);
  }
  free(order);
  return rc;
}

/* Position of `address` in list, or -1. */
static long find(const char *const *list, size_t n, const char *address) {
  for (size_t i = 0; i < n; i++) {
    if (strcmp(list[i], address) == 0) return (long)i;
  }
  return -1;
}

int io_churn_model_diff(const churn_model_fleet *fleet, const char *const *before, size_t n_before,
                     const char *const *after, size_t n_after, churn_model_change *out,
                     ap_error *err) {
  if (fleet == NULL || before == NULL || after == NULL || out == NULL) {
    return ap_error_set(err, AP_EINVAL, "arguments must not be NULL");
  }
  if (n_before == 0 || n_after == 0 || n_before > AP_MAX_ENDPOINTS ||
      n_after > AP_MAX_ENDPOINTS) {
    return ap_error_set(err, AP_ERANGE, "both lists need at least one address");
  }
  if (fleet->clients > 0) {
    int rc = check_fleet(fleet, 0, err);
    if (rc != AP_OK) return rc;
  }
  memset(out, 0, sizeof *out);
  uint8_t *mb = malloc(n_before), *ma = malloc(n_after);
  size_t *ob = malloc(n_before * sizeof *ob), *oa = malloc(n_after * sizeof *oa);
  io_sessions sb, sa;
  memset(&sb, 0, sizeof sb);
  memset(&sa, 0, sizeof sa);
  int rc = AP_OK;
  if (mb == NULL || ma == NULL || ob == NULL || oa == NULL) {
    rc = ap_error_set(err, AP_ENOMEM, "out of memory");
  }
  if (rc == AP_OK) rc = fleet_model(fleet, before, n_before, ob, &sb, err);
  if (rc == AP_OK) rc = fleet_model(fleet, after, n_after, oa, &sa, err);
  for (uint32_t c = 0; c < fleet->clients && rc == AP_OK; c++) {
    client_members(&sb, ob, n_before, c, mb);
    client_members(&sa, oa, n_after, c, ma);
    for (size_t i = 0; i < n_before; i++) {
      if (!mb[i]) continue;
      out->sessions_before++;
      long j = find(after, n_after, before[i]);
      if (j < 0) out->optimum++;
      if (j < 0 || !ma[j]) out->changed++; /* closed */
    }
    for (size_t j = 0; j < n_after; j++) {
      if (!ma[j]) continue;
      out->sessions_after++;
      long i = find(before, n_before, after[j]);
      if (i < 0) out->optimum++;
      if (i < 0 || !mb[i]) out->changed++; /* opened */
    }
  }
  io_sessions_free(&sb);
  io_sessions_free(&sa);
  free(mb);
  free(ma);
  free(ob);
  free(oa);
  return rc;
}
