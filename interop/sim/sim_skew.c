/* sim_skew: unequal client rates, with and without the core's mechanism
 * (see sim_skew.h). */
#include "interop/sim/sim_skew.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/common/sessions.h"
#include "interop/sim/sim_model.h"
#include "policy/core/ap_number.h"
#include "policy/core/ap_rng.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/core/skew/ap_skew.h"
#include "policy/core/stable/ap_stable.h"

#define MAX_LIST 1000

/* A uniform double in (0, 1). */
static double uniform01(ap_rng *rng) {
  return ((double)(ap_rng_next(rng) >> 11) + 0.5) * 0x1.0p-53;
}

static int parse_number(const char *text, size_t len, double lo, double hi,
                        double *out) {
  char buf[64];
  if (len == 0 || len >= sizeof buf) return -1;
  memcpy(buf, text, len);
  buf[len] = '\0';
  ap_error e;
  if (ap_parse_double(buf, out, &e) != AP_OK) return -1;
  return *out > lo && *out <= hi ? 0 : -1;
}

int io_sim_rates_parse(const char *spec, uint32_t clients, uint64_t seed,
                       double *rates, char *err, size_t err_len) {
  if (spec == NULL || rates == NULL || clients == 0) {
    snprintf(err, err_len, "no rates to fill");
    return -1;
  }
  if (strncmp(spec, "lognormal:", 10) == 0) {
    double cv;
    if (parse_number(spec + 10, strlen(spec + 10), 0, 10, &cv) != 0) {
      snprintf(err, err_len, "lognormal:CV wants CV in (0, 10], got '%.40s'",
               spec + 10);
      return -1;
    }
    /* mean 1: sigma^2 = ln(1 + CV^2), mu = -sigma^2 / 2 */
    const double s2 = log1p(cv * cv), sigma = sqrt(s2), mu = -s2 / 2;
    ap_rng rng;
    ap_rng_seed(&rng, seed);
    for (uint32_t c = 0; c < clients; c++) {
      /* Box-Muller, one normal per pair of uniforms */
      const double z = sqrt(-2 * log(uniform01(&rng))) *
                       cos(2 * 3.14159265358979323846 * uniform01(&rng));
      rates[c] = exp(mu + sigma * z);
    }
    return 0;
  }
  if (strncmp(spec, "one:", 4) == 0) {
    double x;
    if (parse_number(spec + 4, strlen(spec + 4), 0, 1e6, &x) != 0) {
      snprintf(err, err_len, "one:X wants X in (0, 1000000], got '%.40s'",
               spec + 4);
      return -1;
    }
    for (uint32_t c = 0; c < clients; c++) rates[c] = c == 0 ? x : 1;
    return 0;
  }
  double list[MAX_LIST];
  size_t n = 0;
  for (const char *p = spec;;) {
    const size_t len = strcspn(p, ",");
    if (n == MAX_LIST) {
      snprintf(err, err_len, "more than %d rates", MAX_LIST);
      return -1;
    }
    if (parse_number(p, len, 0, 1e6, &list[n]) != 0) {
      snprintf(err, err_len,
               "expected a comma list of rates in (0, 1000000], "
               "lognormal:CV or one:X, got '%.40s'",
               spec);
      return -1;
    }
    n++;
    if (p[len] == '\0') break;
    p += len + 1;
  }
  for (uint32_t c = 0; c < clients; c++) rates[c] = list[c % n];
  return 0;
}

/* One client of the run: its apertures (base and in use), what the ring
 * says of them, and the controller's state with one member state and one
 * call count per server. */
typedef struct sim_client {
  ap_aperture *base, *current;
  double *others;      /* per member of current */
  ap_skew_geometry geometry;
  ap_skew skew;
  ap_skew_member_state *states; /* per server */
  double *calls;                /* per server: calls picked so far */
} sim_client;

typedef struct sim_fleet {
  ap_mode mode;
  uint32_t servers, clients, min_aperture;
  const double *rates;
  ap_ring *ring;
  ap_stable_plan *plan;
  sim_client *c;
  double *load;   /* per server */
  ap_skew_member *in; /* scratch: one tick's members */
} sim_fleet;

static int aperture_for(const sim_fleet *f, uint32_t c, uint32_t logical,
                        ap_aperture **out, ap_error *err) {
  ap_subset_params p;
  int rc = ap_subset_params_for_client(f->mode, c, f->clients, logical,
                                       io_sim_client_seed(0, c), &p, err);
  p.stable_plan = f->plan;
  if (rc == AP_OK) rc = ap_aperture_compute(f->ring, &p, out, err);
  return rc;
}

/* The geometry and `others` of client c's current aperture. */
static int measure(sim_fleet *f, uint32_t c, ap_error *err) {
  sim_client *cl = &f->c[c];
  free(cl->others);
  const size_t n = ap_aperture_count(cl->current);
  cl->others = malloc((n ? n : 1) * sizeof *cl->others);
  if (cl->others == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  return ap_skew_geometry_compute(f->ring, cl->base, f->clients, cl->current,
                                  cl->others, &cl->geometry, err);
}

static void fleet_free(sim_fleet *f) {
  for (uint32_t c = 0; f->c != NULL && c < f->clients; c++) {
    ap_aperture_destroy(f->c[c].base);
    ap_aperture_destroy(f->c[c].current);
    free(f->c[c].others);
    free(f->c[c].states);
    free(f->c[c].calls);
  }
  free(f->c);
  free(f->load);
  free(f->in);
  ap_stable_plan_destroy(f->plan);
  ap_ring_destroy(f->ring);
}

static int fleet_init(sim_fleet *f, ap_error *err) {
  int rc = ap_ring_create(NULL, f->servers, &f->ring, err);
  if (rc != AP_OK) return rc;
  uint64_t *ekeys = io_ordinal_keys(NULL, f->servers);
  uint64_t *ckeys = io_ordinal_keys(NULL, f->clients);
  if (ekeys == NULL || ckeys == NULL) {
    rc = ap_error_set(err, AP_ENOMEM, "out of memory");
  } else {
    rc = io_service_plan_create((int)f->mode, f->servers, ekeys, NULL,
                                f->clients, ckeys, f->min_aperture, &f->plan,
                                err);
  }
  free(ekeys);
  free(ckeys);
  if (rc != AP_OK) return rc;
  f->c = calloc(f->clients, sizeof *f->c);
  f->load = calloc(f->servers, sizeof *f->load);
  f->in = calloc(f->servers, sizeof *f->in);
  if (f->c == NULL || f->load == NULL || f->in == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  }
  for (uint32_t c = 0; c < f->clients; c++) {
    sim_client *cl = &f->c[c];
    cl->states = malloc(f->servers * sizeof *cl->states);
    cl->calls = calloc(f->servers, sizeof *cl->calls);
    if (cl->states == NULL || cl->calls == NULL) {
      return ap_error_set(err, AP_ENOMEM, "out of memory");
    }
    for (uint32_t s = 0; s < f->servers; s++) {
      ap_skew_member_state_init(&cl->states[s]);
    }
    ap_skew_init(&cl->skew);
    rc = aperture_for(f, c, f->min_aperture, &cl->base, err);
    if (rc == AP_OK) rc = aperture_for(f, c, f->min_aperture, &cl->current, err);
    if (rc == AP_OK) rc = measure(f, c, err);
    if (rc != AP_OK) return rc;
  }
  return AP_OK;
}

/* Every client's rate split over its members by pick weight x factor
 * into f->load; each member's calls grow by its flow over dt_s. */
static void send(sim_fleet *f, double dt_s) {
  memset(f->load, 0, f->servers * sizeof *f->load);
  for (uint32_t c = 0; c < f->clients; c++) {
    const sim_client *cl = &f->c[c];
    double total = 0;
    for (size_t k = 0; k < ap_aperture_count(cl->current); k++) {
      const ap_member *m = ap_aperture_member(cl->current, k);
      total += m->pick_weight * ap_skew_member_factor(&cl->states[m->index]);
    }
    for (size_t k = 0; k < ap_aperture_count(cl->current); k++) {
      const ap_member *m = ap_aperture_member(cl->current, k);
      const double flow = f->rates[c] * m->pick_weight *
                          ap_skew_member_factor(&cl->states[m->index]) / total;
      f->load[m->index] += flow;
      cl->calls[m->index] += flow * dt_s;
    }
  }
}

static double load_max_mean(const sim_fleet *f) {
  return io_sim_stats_of(f->load, f->servers).max_over_mean;
}

/* One tick of every client; a width change recomputes the aperture. */
static int tick_all(sim_fleet *f, int64_t now_ns, ap_error *err) {
  double sum = 0;
  for (uint32_t s = 0; s < f->servers; s++) sum += f->load[s];
  const double capacity = 2 * sum / f->servers;
  for (uint32_t c = 0; c < f->clients; c++) {
    sim_client *cl = &f->c[c];
    const size_t n = ap_aperture_count(cl->current);
    for (size_t k = 0; k < n; k++) {
      const ap_member *m = ap_aperture_member(cl->current, k);
      ap_skew_member *in = &f->in[k];
      in->state = &cl->states[m->index];
      in->calls = cl->calls[m->index];
      in->rps = f->load[m->index];
      in->utilization = capacity > 0 ? f->load[m->index] / capacity : 0;
      in->others = cl->others[k];
      in->pick_weight = m->pick_weight;
    }
    ap_skew_decision d;
    int rc = ap_skew_tick(&cl->skew, &cl->geometry, f->in, n, now_ns, &d, err);
    if (rc != AP_OK) return rc;
    if (d.width_changed) {
      ap_aperture *next = NULL;
      rc = aperture_for(f, c, d.logical, &next, err);
      if (rc != AP_OK) return rc;
      ap_aperture_destroy(cl->current);
      cl->current = next;
      rc = measure(f, c, err);
      if (rc != AP_OK) return rc;
    }
  }
  return AP_OK;
}

static double connections(const sim_fleet *f, double *max) {
  double total = 0;
  *max = 0;
  for (uint32_t c = 0; c < f->clients; c++) {
    const double n = (double)ap_aperture_count(f->c[c].current);
    total += n;
    if (n > *max) *max = n;
  }
  return total / f->clients;
}

int io_sim_skew_run(ap_mode mode, uint32_t servers, uint32_t clients,
                    uint32_t min_aperture, const double *rates, uint32_t ticks,
                    sim_skew_result *out, ap_error *err) {
  if (rates == NULL || out == NULL || ticks == 0 || servers == 0 ||
      clients == 0) {
    return ap_error_set(err, AP_EINVAL, "rates, out, ticks, servers and "
                                        "clients must be set");
  }
  if ((double)servers * clients > SIM_SKEW_MAX_FLEET) {
    return ap_error_set(err, AP_ERANGE,
                        "servers x clients = %.0f exceeds %d",
                        (double)servers * clients, SIM_SKEW_MAX_FLEET);
  }
  memset(out, 0, sizeof *out);
  sim_fleet f;
  memset(&f, 0, sizeof f);
  f.mode = mode;
  f.servers = servers;
  f.clients = clients;
  f.min_aperture = min_aperture;
  f.rates = rates;
  int rc = fleet_init(&f, err);
  if (rc == AP_OK) {
    send(&f, 0);
    out->without_max_mean = load_max_mean(&f);
    double ignored;
    out->without_connections = connections(&f, &ignored);
    const double dt_s = (double)AP_SKEW_TICK_NS * 1e-9;
    double *history = calloc(ticks, sizeof *history);
    if (history == NULL) rc = ap_error_set(err, AP_ENOMEM, "out of memory");
    for (uint32_t t = 0; rc == AP_OK && t < ticks; t++) {
      send(&f, dt_s);
      history[t] = load_max_mean(&f);
      rc = tick_all(&f, (int64_t)(t + 1) * AP_SKEW_TICK_NS, err);
    }
    if (rc == AP_OK) {
      send(&f, 0);
      out->with_max_mean = load_max_mean(&f);
      out->with_connections = connections(&f, &out->with_connections_max);
      uint32_t settled = ticks;
      while (settled > 0 &&
             fabs(history[settled - 1] - out->with_max_mean) <=
                 0.01 * out->with_max_mean) {
        settled--;
      }
      out->settle_s = settled * dt_s;
      for (uint32_t c = 0; c < clients; c++) {
        if (ap_aperture_count(f.c[c].current) > ap_aperture_count(f.c[c].base)) {
          out->widened++;
        }
      }
    }
    free(history);
  }
  fleet_free(&f);
  return rc;
}
