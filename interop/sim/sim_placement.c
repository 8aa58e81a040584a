/*
 * sim placement: the stable placement experiment. Servers carry a stable index
 * s (an address attribute or a configured list) and sit at the Van der
 * Corput position vdc(s) instead of at their rank in the sorted address
 * list; a server's arc runs from its position to the next server's. Does
 * single-change churn get within 2x of the optimum while load stays within
 * 5% of even?
 *
 * The core's ring lays arcs end to end from 0 with widths proportional to
 * the endpoint weights, so a VDC layout is an ap_ring whose ring order is
 * the position order and whose weights are the gaps (exact while the server
 * at vdc(0) = 0 is present: the experiment never removes stable index 0;
 * removing it would rotate every coordinate, which a real implementation
 * must anchor). The apertures (smooth or continuous) come from
 * ap_aperture_compute on that ring. Two ways to turn them into load:
 *  - "load ~ arc": the core's pick weights as they are; on a weighted ring
 *    they make each server's share proportional to its arc (its weight);
 *  - "equal capacity": pick weight divided by the endpoint weight (the
 *    arc), i.e. servers of equal capacity on unequal arcs.
 * A third window: a width fixed by the stable index space instead of N.
 * With M = the smallest power of two above every stable index in use,
 * every client takes the continuous window [i/C, i/C + k/C) with
 * k = ceil(A*C/(M/2)) (ap_aperture_from_window): coverage is exactly k
 * everywhere, so intersections are the coverage-normalised weights, and the
 * width changes only when M doubles (at the cost of up to 2A members).
 * The last variant is the core's stable mode (ap_stable.h), whose
 * membership follows keys, not positions: endpoint keys are the ordinal
 * keys of the stable indices, one plan per fleet.
 * Changes: a server with stable index r >= 1 leaves (mean over 4 sampled
 * r), or a server with the next unused index N joins. Variants on index
 * placement (equal arcs in address order; the joiner lands mid-ring) are
 * the baselines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "interop/sim/sim_print.h"
#include "interop/sim/sim_model.h"
#include "interop/common/sessions.h"
#include "policy/core/stable/ap_stable.h"
#include "policy/core/ring/ap_vdc.h"

static const char kUsage[] =
    "sim placement [--servers 100] [--clients 100] [--min-aperture 12] "
    "[--json]";

typedef enum placement { PLACE_INDEX, PLACE_VDC } placement;

typedef struct variant {
  const char *name;
  placement place;
  ap_mode mode;
  int equal_capacity; /* divide pick weights by the endpoint weight */
  int fixed_width;    /* window from the stable index space (see top) */
} variant;

static const variant kVariants[] = {
    {"index + continuous", PLACE_INDEX, AP_MODE_CONTINUOUS, 0, 0},
    {"index + smooth", PLACE_INDEX, AP_MODE_SMOOTH, 0, 0},
    {"vdc-stable + continuous", PLACE_VDC, AP_MODE_CONTINUOUS, 1, 0},
    {"vdc-stable + smooth, load ~ arc", PLACE_VDC, AP_MODE_SMOOTH, 0, 0},
    {"vdc-stable + smooth, equal capacity", PLACE_VDC, AP_MODE_SMOOTH, 1, 0},
    {"vdc-stable + index-space width", PLACE_VDC, AP_MODE_CONTINUOUS, 1, 1},
    {"stable mode, keys of the indices", PLACE_INDEX, AP_MODE_STABLE, 0, 0},
};
#define NUM_VARIANTS (sizeof kVariants / sizeof kVariants[0])
#define REMOVAL_SAMPLES 4

/* The sessions of one service as sorted identity lists, plus the expected
 * load per identity. */
typedef struct fleet {
  uint32_t clients;
  size_t total;
  uint32_t *ids;  /* identities, sorted per client */
  size_t *start;  /* clients + 1 */
} fleet;

static void fleet_free(fleet *f) {
  free(f->ids);
  free(f->start);
  memset(f, 0, sizeof *f);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static int cmp_by_vdc(const void *a, const void *b) {
  double x = ap_vdc(*(const uint32_t *)a), y = ap_vdc(*(const uint32_t *)b);
  return (x > y) - (x < y);
}

/* Builds the ring of the servers `present` (identities; index placement:
 * in the given order) and writes ring index -> identity into order[]. */
static int build_ring(placement place, const uint32_t *present, size_t n,
                      uint32_t *order, ap_ring **ring, ap_error *err) {
  memcpy(order, present, n * sizeof *order);
  if (place == PLACE_INDEX) return ap_ring_create(NULL, n, ring, err);
  qsort(order, n, sizeof *order, cmp_by_vdc);
  double *gaps = malloc(n * sizeof *gaps);
  if (gaps == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  for (size_t j = 0; j < n; j++) {
    double here = ap_vdc(order[j]);
    double next = j + 1 < n ? ap_vdc(order[j + 1]) : 1.0 + ap_vdc(order[0]);
    gaps[j] = next - here;
  }
  int rc = ap_ring_create(gaps, n, ring, err);
  free(gaps);
  return rc;
}

/* The mode's service input (stable's plan) for the servers in ring order
 * `order`, keyed by their stable indices' ordinals, with equal weights, and
 * clients 0..clients-1. */
static int service_plan(ap_mode mode, const uint32_t *order, size_t n, uint32_t clients,
                        uint32_t a, ap_stable_plan **plan, ap_error *err) {
  uint64_t *ekeys = io_ordinal_keys(order, (uint32_t)n);
  uint64_t *ckeys = io_ordinal_keys(NULL, clients);
  int rc = ekeys && ckeys ? io_service_plan_create((int)mode, n, ekeys, NULL, clients, ckeys, a,
                                                   plan, err)
                          : ap_error_set(err, AP_ENOMEM, "out of memory");
  free(ekeys);
  free(ckeys);
  return rc;
}

/* Sessions and (when load != NULL, indexed by identity) expected load of a
 * service of `clients` clients on the servers `present`. */
static int run_fleet(const variant *v, const uint32_t *present, size_t n,
                     uint32_t clients, uint32_t a, fleet *f, double *load,
                     ap_error *err) {
  memset(f, 0, sizeof *f);
  uint32_t *order = malloc(n * sizeof *order);
  ap_ring *ring = NULL;
  int rc = order ? build_ring(v->place, present, n, order, &ring, err)
                 : ap_error_set(err, AP_ENOMEM, "out of memory");
  f->clients = clients;
  f->start = malloc(((size_t)clients + 1) * sizeof *f->start);
  size_t cap = (size_t)clients * 16 + 16;
  f->ids = malloc(cap * sizeof *f->ids);
  if (rc == AP_OK && (f->start == NULL || f->ids == NULL))
    rc = ap_error_set(err, AP_ENOMEM, "out of memory");
  double fixed_width = 1.0;
  if (v->fixed_width) {
    uint32_t top = 0;
    for (size_t j = 0; j < n; j++)
      if (present[j] > top) top = present[j];
    double space = 1; /* M: smallest power of two above every index */
    while (space <= top) space *= 2;
    double k = ceil((double)a * clients / (space > 1 ? space / 2 : 1));
    fixed_width = k >= clients ? 1.0 : k / clients;
  }
  ap_stable_plan *plan = NULL;
  if (rc == AP_OK) rc = service_plan(v->mode, order, n, clients, a, &plan, err);
  for (uint32_t c = 0; rc == AP_OK && c < clients; c++) {
    ap_subset_params p;
    ap_aperture *ap = NULL;
    if (v->fixed_width) {
      rc = ap_aperture_from_window(ring, (double)c / clients, fixed_width,
                                   &ap, err);
    } else if ((rc = ap_subset_params_for_client(v->mode, c, clients, a, 0, &p,
                                                 err)) == AP_OK) {
      p.stable_plan = plan;
      rc = ap_aperture_compute(ring, &p, &ap, err);
    }
    if (rc != AP_OK) break;
    size_t m = ap_aperture_count(ap);
    if (f->total + m > cap) {
      while (f->total + m > cap) cap *= 2;
      uint32_t *grown = realloc(f->ids, cap * sizeof *grown);
      if (grown == NULL) {
        ap_aperture_destroy(ap);
        rc = ap_error_set(err, AP_ENOMEM, "out of memory");
        break;
      }
      f->ids = grown;
    }
    f->start[c] = f->total;
    double sum = 0;
    for (size_t k = 0; k < m; k++) {
      const ap_member *mem = ap_aperture_member(ap, k);
      double w = mem->pick_weight;
      if (v->equal_capacity) w /= ap_ring_weight(ring, mem->index);
      sum += w;
      f->ids[f->total + k] = order[mem->index];
    }
    if (load) {
      for (size_t k = 0; k < m; k++) {
        const ap_member *mem = ap_aperture_member(ap, k);
        double w = mem->pick_weight;
        if (v->equal_capacity) w /= ap_ring_weight(ring, mem->index);
        load[order[mem->index]] += w / sum;
      }
    }
    qsort(f->ids + f->total, m, sizeof *f->ids, cmp_u32);
    f->total += m;
    ap_aperture_destroy(ap);
  }
  if (rc == AP_OK) f->start[clients] = f->total;
  ap_stable_plan_destroy(plan);
  ap_ring_destroy(ring);
  free(order);
  if (rc != AP_OK) fleet_free(f);
  return rc;
}

/* Sessions closed + opened between two fleets; *had counts sessions of
 * identity `x` in `a`, *has in `b`. */
static size_t fleet_diff(const fleet *a, const fleet *b, uint32_t x,
                         size_t *had, size_t *has) {
  size_t diff = 0;
  *had = *has = 0;
  for (uint32_t c = 0; c < a->clients; c++) {
    const uint32_t *p = a->ids + a->start[c], *pe = a->ids + a->start[c + 1];
    const uint32_t *q = b->ids + b->start[c], *qe = b->ids + b->start[c + 1];
    for (const uint32_t *t = p; t < pe; t++) *had += *t == x;
    for (const uint32_t *t = q; t < qe; t++) *has += *t == x;
    while (p < pe && q < qe) {
      if (*p == *q) {
        p++;
        q++;
      } else if (*p < *q) {
        diff++;
        p++;
      } else {
        diff++;
        q++;
      }
    }
    diff += (size_t)(pe - p) + (size_t)(qe - q);
  }
  return diff;
}

typedef struct cell {
  double remove, remove_opt, add, add_opt; /* fractions of sessions */
  double load_max, load_min;               /* over mean, one service */
  double per_client;                       /* sessions per client */
} cell;

static int run_cell(const variant *v, uint32_t n, uint32_t clients,
                    uint32_t a, cell *out, ap_error *err) {
  uint32_t *present = malloc(((size_t)n + 1) * sizeof *present);
  double *load = calloc((size_t)n + 1, sizeof *load);
  if (present == NULL || load == NULL) {
    free(present);
    free(load);
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++) present[i] = i;
  fleet before, after;
  int rc = run_fleet(v, present, n, clients, a, &before, load, err);
  memset(out, 0, sizeof *out);
  if (rc == AP_OK) {
    sim_stats st = io_sim_stats_of(load, n);
    out->load_max = st.max_over_mean;
    out->load_min = st.min_over_mean;
    out->per_client = (double)before.total / clients;
  }
  double total = (double)before.total;
  for (int k = 0; rc == AP_OK && k < REMOVAL_SAMPLES; k++) {
    uint32_t r = 1 + (uint32_t)((uint64_t)k * (n - 1) / REMOVAL_SAMPLES);
    uint32_t *others = malloc((size_t)n * sizeof *others);
    if (others == NULL) {
      rc = ap_error_set(err, AP_ENOMEM, "out of memory");
      break;
    }
    size_t m = 0;
    for (uint32_t i = 0; i < n; i++)
      if (i != r) others[m++] = i;
    rc = run_fleet(v, others, m, clients, a, &after, NULL, err);
    free(others);
    if (rc != AP_OK) break;
    size_t had, has;
    out->remove += (double)fleet_diff(&before, &after, r, &had, &has) / total;
    out->remove_opt += (double)had / total;
    fleet_free(&after);
  }
  out->remove /= REMOVAL_SAMPLES;
  out->remove_opt /= REMOVAL_SAMPLES;
  if (rc == AP_OK) {
    /* The joiner gets the next stable index; in address order it lands
     * mid-ring. */
    uint32_t *joined = malloc(((size_t)n + 1) * sizeof *joined);
    if (joined == NULL) {
      rc = ap_error_set(err, AP_ENOMEM, "out of memory");
    } else {
      uint32_t mid = n / 2;
      for (uint32_t i = 0, j = 0; i <= n; i++)
        joined[i] = i == mid ? n : j++;
      rc = run_fleet(v, joined, (size_t)n + 1, clients, a, &after, NULL, err);
      free(joined);
    }
    if (rc == AP_OK) {
      size_t had, has;
      out->add = (double)fleet_diff(&before, &after, n, &had, &has) / total;
      out->add_opt = (double)has / total;
      fleet_free(&after);
    }
  }
  fleet_free(&before);
  free(present);
  free(load);
  return rc;
}

typedef struct sweep {
  double worst_remove_ratio, worst_add_ratio, worst_load_max, worst_load_min;
  uint32_t remove_n, remove_c, add_n, add_c, load_n, load_c;
} sweep;

static const uint32_t kSweepClients[] = {7, 10, 13, 25, 50, 100, 300};

/* Sweep server counts: every 5th, plus the powers of two (64, 128, 256),
 * where a joiner doubles the stable index space. */
static uint32_t next_servers(uint32_t n) {
  uint32_t next = n + 5 - n % 5;
  for (uint32_t p = 64; p <= 256; p *= 2)
    if (n < p && p < next) return p;
  return next;
}

static int run_sweep(const variant *v, uint32_t a, sweep *s, ap_error *err) {
  memset(s, 0, sizeof *s);
  s->worst_load_min = 1e300;
  for (uint32_t n = 50; n <= 300; n = next_servers(n)) {
    for (size_t k = 0; k < sizeof kSweepClients / sizeof kSweepClients[0]; k++) {
      uint32_t c = kSweepClients[k];
      cell x;
      int rc = run_cell(v, n, c, a, &x, err);
      if (rc != AP_OK) return rc;
      double rr = x.remove / x.remove_opt, ar = x.add / x.add_opt;
      if (rr > s->worst_remove_ratio) {
        s->worst_remove_ratio = rr;
        s->remove_n = n;
        s->remove_c = c;
      }
      if (ar > s->worst_add_ratio) {
        s->worst_add_ratio = ar;
        s->add_n = n;
        s->add_c = c;
      }
      if (x.load_max > s->worst_load_max) {
        s->worst_load_max = x.load_max;
        s->load_n = n;
        s->load_c = c;
      }
      if (x.load_min < s->worst_load_min) s->worst_load_min = x.load_min;
    }
  }
  return AP_OK;
}

int io_sim_verb_placement(int argc, char **argv) {
  uint32_t servers = 100, clients = 100, min_aperture = AP_DEFAULT_MIN_APERTURE;
  int json = 0;
  sim_flag flags[] = {
      {"servers", SIM_FLAG_UINT, &servers, 2, 2000, 0},
      {"clients", SIM_FLAG_UINT, &clients, 1, 2000, 0},
      {"min-aperture", SIM_FLAG_UINT, &min_aperture, 1, 2000, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                          kUsage);
  if (rc) return rc;
  cell point[NUM_VARIANTS];
  sweep sw[NUM_VARIANTS];
  ap_error err;
  for (size_t i = 0; i < NUM_VARIANTS && rc == AP_OK; i++) {
    rc = run_cell(&kVariants[i], servers, clients, min_aperture, &point[i], &err);
    if (rc == AP_OK) rc = run_sweep(&kVariants[i], min_aperture, &sw[i], &err);
  }
  if (rc != AP_OK) {
    fprintf(stderr, "sim placement: %s\n", err.message);
    return SIM_EXIT_FAIL;
  }
  if (json) {
    printf("{");
    io_sim_json_point(servers, clients, min_aperture, "variants");
    for (size_t i = 0; i < NUM_VARIANTS; i++)
      printf("%s{\"name\":\"%s\",\"remove_changed\":%.15g,"
             "\"remove_optimum\":%.15g,\"add_changed\":%.15g,"
             "\"add_optimum\":%.15g,\"load_max_mean\":%.15g,"
             "\"load_min_mean\":%.15g,\"sweep_remove_ratio\":%.15g,"
             "\"sweep_add_ratio\":%.15g,\"sweep_load_max_mean\":%.15g,"
             "\"sweep_load_min_mean\":%.15g,\"per_client\":%.15g}",
             i ? "," : "", kVariants[i].name, point[i].remove,
             point[i].remove_opt, point[i].add, point[i].add_opt,
             point[i].load_max, point[i].load_min,
             sw[i].worst_remove_ratio, sw[i].worst_add_ratio,
             sw[i].worst_load_max, sw[i].worst_load_min, point[i].per_client);
    printf("]}\n");
    return SIM_EXIT_OK;
  }
  printf("Stable placement experiment. ");
  io_sim_text_point(servers, clients, min_aperture);
  printf("\nchanged = sessions closed + opened as %% of sessions before (remove: mean over "
         "%d\nstable indices >= 1; add: the next index); load = expected request share, "
         "max/mean.\n\n",
         REMOVAL_SAMPLES);
  printf("  %-36s | remove  optimum | add     optimum | load max  min  | "
         "conns/client\n",
         "variant");
  printf("  -------------------------------------+-----------------+----------"
         "-------+---------------+-------------\n");
  for (size_t i = 0; i < NUM_VARIANTS; i++)
    printf("  %-36s | %6.2f%% %6.2f%% | %6.2f%% %6.2f%% | %6.3f %6.3f | "
           "%12.2f\n",
           kVariants[i].name, 100 * point[i].remove, 100 * point[i].remove_opt,
           100 * point[i].add, 100 * point[i].add_opt, point[i].load_max,
           point[i].load_min, point[i].per_client);
  printf("\nSweep: servers 50..300 step 5 and 64, 128, 256 x clients "
         "7,10,13,25,50,100,300;\nworst cases:\n\n");
  printf("  %-36s | remove/optimum (N, C) | add/optimum (N, C)   | load "
         "max/mean (N, C)  min\n",
         "variant");
  printf("  -------------------------------------+-----------------------+----"
         "-----------------+-----------------------------\n");
  for (size_t i = 0; i < NUM_VARIANTS; i++)
    printf("  %-36s | %7.2fx  (%3u, %3u) | %7.2fx (%3u, %3u) | %7.3f  (%3u, "
           "%3u)  %6.3f\n",
           kVariants[i].name, sw[i].worst_remove_ratio, sw[i].remove_n,
           sw[i].remove_c, sw[i].worst_add_ratio, sw[i].add_n, sw[i].add_c,
           sw[i].worst_load_max, sw[i].load_n, sw[i].load_c,
           sw[i].worst_load_min);
  printf("\nTarget: churn within 2x of the optimum, load within 5%% of "
         "even.\n");
  return SIM_EXIT_OK;
}
