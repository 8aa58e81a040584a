/* sim_model: apertures of a service, load accumulation, statistics. */
#include "interop/sim/sim_model.h"

#include <math.h>
#include <stdlib.h>

#include "policy/core/ap_hash.h"
#include "interop/common/sessions.h"
#include "policy/core/stable/ap_stable.h"

const ap_mode io_sim_modes[SIM_NUM_MODES] = {
    AP_MODE_CONTINUOUS, AP_MODE_DISCRETE, AP_MODE_RANDOM,
    AP_MODE_VDC,        AP_MODE_MESH,     AP_MODE_SMOOTH,
    AP_MODE_STABLE};

uint64_t io_sim_client_seed(uint32_t service, uint32_t client) {
  return ap_mix64(((uint64_t)service << 32) | client);
}

/* Adds one client's connections and expected request share. */
static void accumulate(const ap_aperture *a, double rate, double *conns,
                       double *load) {
  size_t count = ap_aperture_count(a);
  double total = 0.0;
  for (size_t m = 0; m < count; m++)
    total += ap_aperture_member(a, m)->pick_weight;
  for (size_t m = 0; m < count; m++) {
    const ap_member *mem = ap_aperture_member(a, m);
    if (conns) conns[mem->index] += 1.0;
    if (load && total > 0.0)
      load[mem->index] += rate * mem->pick_weight / total;
  }
}

int io_sim_service_accumulate(const ap_ring *ring, ap_mode mode, uint32_t clients,
                           uint32_t min_aperture, uint32_t service,
                           double rate, double *conns, double *load,
                           size_t *members, ap_error *err) {
  size_t total = 0;
  /* One service input (stable's plan) for all clients, keyed by ordinals. */
  const size_t n = ap_ring_size(ring);
  ap_stable_plan *plan = NULL;
  uint64_t *ekeys = io_ordinal_keys(NULL, (uint32_t)n);
  uint64_t *ckeys = io_ordinal_keys(NULL, clients);
  double *weights = malloc((n ? n : 1) * sizeof *weights);
  int prc = AP_OK;
  if (ekeys == NULL || ckeys == NULL || weights == NULL) {
    prc = ap_error_set(err, AP_ENOMEM, "out of memory");
  } else {
    for (size_t s = 0; s < n; s++) weights[s] = ap_ring_weight(ring, s);
    prc = io_service_plan_create((int)mode, n, ekeys, weights, clients, ckeys, min_aperture,
                                 &plan, err);
  }
  free(ekeys);
  free(ckeys);
  free(weights);
  if (prc != AP_OK) return prc;
  for (uint32_t c = 0; c < clients; c++) {
    ap_subset_params p;
    ap_aperture *a = NULL;
    int rc = ap_subset_params_for_client(mode, c, clients, min_aperture,
                                         io_sim_client_seed(service, c), &p, err);
    p.stable_plan = plan;
    if (rc == AP_OK) rc = ap_aperture_compute(ring, &p, &a, err);
    if (rc != AP_OK) {
      ap_stable_plan_destroy(plan);
      return rc;
    }
    accumulate(a, rate, conns, load);
    total += ap_aperture_count(a);
    ap_aperture_destroy(a);
  }
  ap_stable_plan_destroy(plan);
  if (members) *members = total;
  return AP_OK;
}

sim_stats io_sim_stats_of(const double *x, size_t n) {
  sim_stats s = {0, 0, 0, 0};
  if (n == 0) return s;
  double sum = 0, lo = x[0], hi = x[0];
  for (size_t i = 0; i < n; i++) {
    sum += x[i];
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  s.mean = sum / (double)n;
  if (s.mean <= 0.0) return s;
  double var = 0;
  for (size_t i = 0; i < n; i++) var += (x[i] - s.mean) * (x[i] - s.mean);
  var /= (double)n;
  s.max_over_mean = hi / s.mean;
  s.min_over_mean = lo / s.mean;
  s.cv = sqrt(var) / s.mean;
  return s;
}
