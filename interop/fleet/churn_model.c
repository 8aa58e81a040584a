/* churn_model: the core's prediction of a real fleet's sessions. */
#include "interop/fleet/churn_model.h"

#include <stdlib.h>
#include <string.h>

#include "policy/core/ap_hash.h"
#include "policy/core/ap_order.h"
#include "policy/core/ap_ring.h"

uint64_t churn_model_seed(uint32_t client) { return ap_mix64((uint64_t)client + 1); }

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

int churn_model_members(const churn_model_fleet *fleet, const char *const *addresses, size_t n,
                        uint32_t client, uint8_t *member, ap_error *err) {
  int rc = check_fleet(fleet, client, err);
  if (rc != AP_OK) return rc;
  if (addresses == NULL || member == NULL) {
    return ap_error_set(err, AP_EINVAL, "addresses and member must not be NULL");
  }
  if (n == 0 || n > AP_MAX_ENDPOINTS) return ap_error_set(err, AP_ERANGE, "no addresses");
  size_t *order = malloc(n * sizeof *order);
  double *weights = malloc(n * sizeof *weights);
  if (order == NULL || weights == NULL) {
    free(order);
    free(weights);
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  }
  /* as the policy: ring order from the strings, explicit weights of 1 */
  for (size_t i = 0; i < n; i++) weights[i] = 1.0;
  ap_ring *ring = NULL;
  ap_aperture *a = NULL;
  rc = ap_order_endpoints(addresses, n, order, err);
  if (rc == AP_OK) rc = ap_ring_create(weights, n, &ring, err);
  if (rc == AP_OK) {
    ap_subset_params p;
    rc = ap_subset_params_for_client(fleet->mode, client, fleet->clients,
                                     fleet->min_aperture,
                                     fleet->seeds ? fleet->seeds[client] : 0,
                                     &p, err);
    if (rc == AP_OK) rc = ap_aperture_compute(ring, &p, &a, err);
  }
  if (rc == AP_OK) {
    memset(member, 0, n);
    for (size_t k = 0; k < ap_aperture_count(a); k++) {
      member[order[ap_aperture_member(a, k)->index]] = 1;
    }
  }
  ap_aperture_destroy(a);
  ap_ring_destroy(ring);
  free(order);
  free(weights);
  return rc;
}

int churn_model_sessions(const churn_model_fleet *fleet, const char *const *addresses, size_t n,
                         long *sessions, long *total, ap_error *err) {
  if (fleet == NULL || sessions == NULL) {
    return ap_error_set(err, AP_EINVAL, "fleet and sessions must not be NULL");
  }
  if (n == 0 || n > AP_MAX_ENDPOINTS) return ap_error_set(err, AP_ERANGE, "no addresses");
  uint8_t *member = malloc(n);
  if (member == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  memset(sessions, 0, n * sizeof *sessions);
  long sum = 0;
  int rc = AP_OK;
  for (uint32_t c = 0; c < fleet->clients && rc == AP_OK; c++) {
    rc = churn_model_members(fleet, addresses, n, c, member, err);
    for (size_t i = 0; rc == AP_OK && i < n; i++) {
      sessions[i] += member[i];
      sum += member[i];
    }
  }
  free(member);
  if (rc == AP_OK && total != NULL) *total = sum;
  return rc;
}

/* Position of `address` in list, or -1. */
static long find(const char *const *list, size_t n, const char *address) {
  for (size_t i = 0; i < n; i++) {
    if (strcmp(list[i], address) == 0) return (long)i;
  }
  return -1;
}

int churn_model_diff(const churn_model_fleet *fleet, const char *const *before, size_t n_before,
                     const char *const *after, size_t n_after, churn_model_change *out,
                     ap_error *err) {
  if (fleet == NULL || before == NULL || after == NULL || out == NULL) {
    return ap_error_set(err, AP_EINVAL, "arguments must not be NULL");
  }
  if (n_before == 0 || n_after == 0 || n_before > AP_MAX_ENDPOINTS ||
      n_after > AP_MAX_ENDPOINTS) {
    return ap_error_set(err, AP_ERANGE, "both lists need at least one address");
  }
  memset(out, 0, sizeof *out);
  uint8_t *mb = malloc(n_before), *ma = malloc(n_after);
  if (mb == NULL || ma == NULL) {
    free(mb);
    free(ma);
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  }
  int rc = AP_OK;
  for (uint32_t c = 0; c < fleet->clients && rc == AP_OK; c++) {
    rc = churn_model_members(fleet, before, n_before, c, mb, err);
    if (rc == AP_OK) rc = churn_model_members(fleet, after, n_after, c, ma, err);
    if (rc != AP_OK) break;
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
  free(mb);
  free(ma);
  return rc;
}
