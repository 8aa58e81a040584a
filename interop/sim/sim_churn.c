/*
 * sim churn: how many (client, server) sessions change when one server
 * leaves or one joins. changed = sessions closed + sessions opened, as a
 * fraction of the sessions before; the optimum is the sessions of the
 * server that left (or of the one that joined): nothing else needs to move.
 *
 * Point: one fleet, averaged (and maxed) over every position of the
 * leaving/joining server. Grid: the worst case of the
 * position-averaged churn over servers x clients; positions sampled at
 * k*n/P for k < P (see next_clients() for the client counts); per mode
 * also the worst changed / optimum of a cell and the worst expected load
 * max / mean of a cell's fleet, and the cells that miss stable's design
 * targets 1 and 3 (connections per client over 1.6x max(A, N/C), over
 * 1.1x where C x A / N >= 2, the busiest client over 1.5x the mean, a
 * server leaving or joining over 2x the optimum), counted with the range
 * of C x A / N they lie in (sim_misses.h).
 * Every mode goes the same way: the fleet after a step is computed from
 * its servers' identities (sessions.h), whatever inputs the mode's
 * apertures follow (ring positions, or stable's keys), and compared with
 * the fleet before by identity.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "interop/sim/sim_misses.h"
#include "interop/sim/sim_print.h"
#include "interop/sim/sim_model.h"
#include "interop/common/sessions.h"

static const char kUsage[] =
    "sim churn [--servers 100] [--clients 100] [--min-aperture 12] "
    "[--no-grid] [--grid-servers 50,300] [--grid-clients 7,300] "
    "[--grid-step 1] [--grid-positions 2] [--json]";

#define NUM_CHURN_MODES (SIM_NUM_MODES + 1)

/* The simulator's random seeds: service 0's. */
static uint64_t churn_seed(uint32_t client, const void *ctx) {
  (void)ctx;
  return io_sim_client_seed(0, client);
}

static int churn_mode(int k) {
  return k < SIM_NUM_MODES ? (int)io_sim_modes[k] : IO_HASH_MOD;
}

typedef struct point_result {
  double sessions;
  double connections_mean, connections_max; /* sessions per client */
  double remove_mean, remove_max, remove_opt; /* fractions of sessions */
  double add_mean, add_max, add_opt;
} point_result;

/* Server identities 0..n-1 in ring order without `gone` (n-1 of them):
 * the fleet after the server at position `gone` left. */
static uint32_t *ids_without(uint32_t n, uint32_t gone) {
  uint32_t *ids = malloc((n > 1 ? n - 1 : 1) * sizeof *ids);
  if (ids == NULL) return NULL;
  for (uint32_t j = 0, k = 0; j < n; j++)
    if (j != gone) ids[k++] = j;
  return ids;
}

/* Server identities 0..n-1 in ring order with the new identity n at
 * position p (n+1 of them): the fleet after a server joined there. */
static uint32_t *ids_with(uint32_t n, uint32_t p) {
  uint32_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
  if (ids == NULL) return NULL;
  for (uint32_t j = 0, k = 0; k <= n; k++) ids[k] = k == p ? n : j++;
  return ids;
}

/* One membership step on the fleet `base` (identities 0..n-1, in ring
 * order): the server at position `at` leaves (joined = 0) or the new
 * identity n joins at position `at` (joined = 1). The fleet after it is
 * computed from its identities like any fleet, in every mode, and compared
 * with base by identity: *changed gets the sessions closed + opened,
 * *optimum the sessions of the server that left (or joined). */
static int step(int mode, const io_sessions *base, uint32_t at, int joined, uint32_t a,
                size_t *changed, size_t *optimum, ap_error *err) {
  const uint32_t n = base->ring_size;
  uint32_t *ids = joined ? ids_with(n, at) : ids_without(n, at);
  if (ids == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  io_sessions after;
  int rc = io_sessions_compute_ids(mode, joined ? n + 1 : n - 1, ids, base->clients, NULL, a,
                                   churn_seed, NULL, &after, err);
  free(ids);
  if (rc != AP_OK) return rc;
  *changed = io_sessions_changed(base, &after);
  *optimum = joined ? io_sessions_of_server(&after, n) : io_sessions_of_server(base, at);
  io_sessions_free(&after);
  if (*changed == (size_t)-1) return ap_error_set(err, AP_ENOMEM, "out of memory");
  return AP_OK;
}

/* Mean and max of the churn over the positions at(k) for k < count. */
typedef struct steps {
  double mean, max, opt;
} steps;

static int step_all(int mode, const io_sessions *base, int joined, uint32_t count,
                    uint32_t range, uint32_t a, steps *out, ap_error *err) {
  const double total = (double)base->total;
  double sum = 0, max = 0, opt = 0;
  for (uint32_t k = 0; k < count; k++) {
    /* every position when count == range, else k * range / count */
    uint32_t at = (uint32_t)((uint64_t)k * range / count);
    size_t changed = 0, o = 0;
    int rc = step(mode, base, at, joined, a, &changed, &o, err);
    if (rc != AP_OK) return rc;
    double d = (double)changed / total;
    sum += d;
    opt += (double)o / total;
    if (d > max) max = d;
  }
  out->mean = sum / count;
  out->max = max;
  out->opt = opt / count;
  return AP_OK;
}

/* A point: one fleet of n servers, every server leaving in turn and a
 * joiner at every position (0..n). */
static int run_point(int mode, uint32_t n, uint32_t clients, uint32_t a,
                     point_result *out, ap_error *err) {
  io_sessions base;
  int rc = io_sessions_compute_ids(mode, n, NULL, clients, NULL, a, churn_seed, NULL, &base,
                                   err);
  if (rc != AP_OK) return rc;
  steps rem, add;
  rc = step_all(mode, &base, 0, n, n, a, &rem, err);
  if (rc == AP_OK) rc = step_all(mode, &base, 1, n + 1, n + 1, a, &add, err);
  if (rc == AP_OK) {
    out->sessions = (double)base.total;
    out->connections_mean = (double)base.total / clients;
    size_t widest = 0;
    for (uint32_t c = 0; c < base.clients; c++) {
      const size_t w = base.start[c + 1] - base.start[c];
      if (w > widest) widest = w;
    }
    out->connections_max = (double)widest;
    out->remove_mean = rem.mean;
    out->remove_max = rem.max;
    out->remove_opt = rem.opt;
    out->add_mean = add.mean;
    out->add_max = add.max;
    out->add_opt = add.opt;
  }
  io_sessions_free(&base);
  return rc;
}

typedef struct grid_worst {
  double remove, remove_opt, add, add_opt;
  uint32_t remove_n, remove_c, add_n, add_c;
  double remove_sum, add_sum; /* over the cells, for the means */
  /* worst changed / optimum of a cell (position-averaged both), over the
   * cells whose optimum is above 0 (ratio_skipped counts the cells where
   * either optimum is 0), and worst expected load max / mean of a cell's
   * fleet; each with its cell */
  double remove_ratio, add_ratio, load;
  uint32_t remove_ratio_n, remove_ratio_c, add_ratio_n, add_ratio_c, load_n, load_c;
  /* worst over the cells of (sessions / C) / max(A, N / C), and the same
   * over the dense cells (C x A / N >= 2) */
  double connections_ratio, connections_ratio_dense;
  size_t ratio_skipped;
  /* worst over the cells of the busiest client's sessions / the mean; the
   * dense cells; the cells missing each target clause (kLimit*) */
  double busiest_ratio;
  size_t dense_cells;
  sim_misses connections_over, dense_over, busiest_over, remove_over, add_over,
      server_change_over;
  /* every cell's figures in walk order (the same order for every mode, so
   * modes can be compared cell by cell); owned, NULL if out of memory */
  double *cell_remove, *cell_add;
  size_t cells, cap;
} grid_worst;

static void grid_worst_free(grid_worst *w) {
  free(w->cell_remove);
  free(w->cell_add);
  w->cell_remove = w->cell_add = NULL;
}

/* Records one cell; -1 when out of memory. */
static int grid_record(grid_worst *w, double rem, double add) {
  if (w->cells == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 1024;
    double *r = realloc(w->cell_remove, cap * sizeof *r);
    if (r == NULL) return -1;
    w->cell_remove = r;
    double *a = realloc(w->cell_add, cap * sizeof *a);
    if (a == NULL) return -1;
    w->cell_add = a;
    w->cap = cap;
  }
  w->cell_remove[w->cells] = rem;
  w->cell_add[w->cells] = add;
  w->cells++;
  w->remove_sum += rem;
  w->add_sum += add;
  return 0;
}

typedef struct grid_spec {
  uint32_t n_lo, n_hi, step, c_lo, c_hi, positions;
} grid_spec;

/* Grid client counts: every count up to 30 (where the width jumps are
 * largest), every 10th to 100, every 50th beyond; the cost of a cell grows
 * with the client count. The top of the range is always included. */
static uint32_t next_clients(uint32_t c, uint32_t hi) {
  uint32_t next = c < 30 ? c + 1 : (c < 100 ? c + 10 : c + 50);
  return (next > hi && c < hi) ? hi : next;
}

/* Work of a grid in units of session comparisons, dominated by mesh (each
 * client holds every server): sum over cells of C x (N + 13) x (2 x
 * positions + 1), one fleet before and one per leave and per join. */
static double grid_work(const grid_spec *g) {
  double work = 0;
  for (uint32_t c = g->c_lo; c <= g->c_hi; c = next_clients(c, g->c_hi))
    for (uint32_t n = g->n_lo; n <= g->n_hi; n += g->step)
      work += (double)c * (n + 13.0) * (2.0 * g->positions + 1.0);
  return work;
}

/* The default grid's work (servers 50..300, clients 7..300, 2 positions). */
static const double kDefaultGridWork = 4.3e8;

/* Stable's design limits: connections per client / max(A, N/C) everywhere and
 * in the dense cells (C x A / N >= 2), the busiest client / the mean, and
 * changed / optimum of one server leaving or joining. */
static const double kLimitConnections = 1.6, kLimitDense = 1.1, kLimitBusiest = 1.5,
                    kLimitServerChange = 2.0;

/* Records a cell's position-averaged churn (rem, add) and optimum
 * (rem_opt, add_opt, all fractions of the sessions before), its fleet's
 * load max / mean and its connections per client (mean, busiest); updates
 * the worst case and the cells over the limits. -1 when out of memory. */
static int grid_note(grid_worst *w, uint32_t n, uint32_t c, uint32_t a, double rem,
                     double rem_opt, double add, double add_opt, double load,
                     double connections, double busiest) {
  if (grid_record(w, rem, add) != 0) return -1;
  const double floor = (double)n / c > a ? (double)n / c : (double)a;
  const double ratio = connections / floor;
  const double ca_n = (double)c * a / n;
  if (ratio > w->connections_ratio) w->connections_ratio = ratio;
  if ((double)c * a / n >= 2 && ratio > w->connections_ratio_dense)
    w->connections_ratio_dense = ratio;
  io_sim_misses_note(&w->connections_over, ratio, kLimitConnections, ca_n);
  if ((double)c * a / n >= 2) {
    w->dense_cells++;
    io_sim_misses_note(&w->dense_over, ratio, kLimitDense, ca_n);
  }
  const double busiest_ratio = connections > 0 ? busiest / connections : 0;
  if (busiest_ratio > w->busiest_ratio) w->busiest_ratio = busiest_ratio;
  io_sim_misses_note(&w->busiest_over, busiest_ratio, kLimitBusiest, ca_n);
  /* a cell whose optimum is 0 has no ratio (ratio_skipped counts it) */
  const int rem_missed =
      rem_opt > 0 && io_sim_misses_note(&w->remove_over, rem / rem_opt, kLimitServerChange, ca_n);
  const int add_missed =
      add_opt > 0 && io_sim_misses_note(&w->add_over, add / add_opt, kLimitServerChange, ca_n);
  /* either one: a figure of 1 against a limit of 0 counts the cell */
  if (rem_missed || add_missed) io_sim_misses_note(&w->server_change_over, 1, 0, ca_n);
  if (rem > w->remove) {
    w->remove = rem;
    w->remove_opt = rem_opt;
    w->remove_n = n;
    w->remove_c = c;
  }
  if (add > w->add) {
    w->add = add;
    w->add_opt = add_opt;
    w->add_n = n;
    w->add_c = c;
  }
  if (rem_opt > 0 && rem / rem_opt > w->remove_ratio) {
    w->remove_ratio = rem / rem_opt;
    w->remove_ratio_n = n;
    w->remove_ratio_c = c;
  }
  if (add_opt > 0 && add / add_opt > w->add_ratio) {
    w->add_ratio = add / add_opt;
    w->add_ratio_n = n;
    w->add_ratio_c = c;
  }
  if (rem_opt <= 0 || add_opt <= 0) w->ratio_skipped++;
  if (load > w->load) {
    w->load = load;
    w->load_n = n;
    w->load_c = c;
  }
  return 0;
}

/* A cell: the fleet of n servers and c clients, with leaves and joins at
 * the sampled positions; updates the worst case and records the cell. */
static int grid_cell(int mode, const grid_spec *g, uint32_t n, uint32_t c, uint32_t a,
                     grid_worst *w, ap_error *err) {
  io_sessions base;
  int rc = io_sessions_compute_ids(mode, n, NULL, c, NULL, a, churn_seed, NULL, &base, err);
  if (rc != AP_OK) return rc;
  steps rem, add;
  rc = step_all(mode, &base, 0, g->positions, n, a, &rem, err);
  if (rc == AP_OK) rc = step_all(mode, &base, 1, g->positions, n + 1, a, &add, err);
  size_t widest = 0;
  for (uint32_t k = 0; k < base.clients; k++) {
    const size_t width = base.start[k + 1] - base.start[k];
    if (width > widest) widest = width;
  }
  if (rc == AP_OK &&
      grid_note(w, n, c, a, rem.mean, rem.opt, add.mean, add.opt, io_sessions_load_max(&base),
                (double)base.total / c, (double)widest))
    rc = ap_error_set(err, AP_ENOMEM, "out of memory recording grid cells");
  io_sessions_free(&base);
  return rc;
}

/* Every cell of the grid, in walk order (client counts, then ring sizes). */
static int run_grid(int mode, const grid_spec *g, uint32_t a, grid_worst *w,
                    ap_error *err) {
  memset(w, 0, sizeof *w);
  int rc = AP_OK;
  for (uint32_t c = g->c_lo; c <= g->c_hi && rc == AP_OK; c = next_clients(c, g->c_hi))
    for (uint32_t n = g->n_lo; n <= g->n_hi && rc == AP_OK; n += g->step)
      rc = grid_cell(mode, g, n, c, a, w, err);
  return rc;
}

/* Smooth against continuous cell by cell: in how many cells smooth changes
 * more sessions, and where by the most. */
typedef struct cell_compare {
  size_t cells, remove_more, add_more;
  double remove_excess, add_excess; /* largest smooth - continuous */
  uint32_t remove_n, remove_c, add_n, add_c;
} cell_compare;

/* The (n, c) of cell `idx` in run_grid's walk order. */
static void grid_cell_at(const grid_spec *g, size_t idx, uint32_t *n_out, uint32_t *c_out) {
  size_t k = 0;
  for (uint32_t c = g->c_lo; c <= g->c_hi; c = next_clients(c, g->c_hi)) {
    for (uint32_t n = g->n_lo; n <= g->n_hi; n += g->step) {
      if (k++ == idx) {
        *n_out = n;
        *c_out = c;
        return;
      }
    }
  }
  *n_out = *c_out = 0;
}

static void compare_cells(const grid_spec *g, const grid_worst *smooth,
                          const grid_worst *continuous, cell_compare *out) {
  memset(out, 0, sizeof *out);
  if (smooth->cell_remove == NULL || continuous->cell_remove == NULL) return;
  out->cells = smooth->cells < continuous->cells ? smooth->cells : continuous->cells;
  const double eps = 1e-12;
  size_t remove_at = 0, add_at = 0;
  for (size_t i = 0; i < out->cells; i++) {
    double dr = smooth->cell_remove[i] - continuous->cell_remove[i];
    double da = smooth->cell_add[i] - continuous->cell_add[i];
    if (dr > eps) {
      out->remove_more++;
      if (dr > out->remove_excess) {
        out->remove_excess = dr;
        remove_at = i;
      }
    }
    if (da > eps) {
      out->add_more++;
      if (da > out->add_excess) {
        out->add_excess = da;
        add_at = i;
      }
    }
  }
  if (out->remove_more > 0) grid_cell_at(g, remove_at, &out->remove_n, &out->remove_c);
  if (out->add_more > 0) grid_cell_at(g, add_at, &out->add_n, &out->add_c);
}

/* A grid row's fields after its worst connections ratios: the worst
 * busiest client, the dense cells, and per target clause the cells over
 * its limit with their range of C x A / N. */
static void print_misses_json(const grid_worst *w) {
  printf(",\"busiest_ratio_worst\":%.15g,\"connections_dense_cells\":%zu", w->busiest_ratio,
         w->dense_cells);
  io_sim_misses_json("connections", &w->connections_over);
  io_sim_misses_json("connections_dense", &w->dense_over);
  io_sim_misses_json("busiest", &w->busiest_over);
  io_sim_misses_json("remove", &w->remove_over);
  io_sim_misses_json("add", &w->add_over);
  io_sim_misses_json("server_change", &w->server_change_over);
}

/* The same as a table, after the grid's other tables. */
static void print_misses_text(const grid_worst *gw) {
  printf("\nCells missing stable's design targets (figure above the limit) of the %zu cells,\n"
         "with the range of C*A/N they lie in: conns = connections per client / max(A, N/C),\n"
         "dense = the same over the %zu cells with C*A/N >= 2, busiest = busiest client /\n"
         "mean, server change = a leave or a join over 2x its optimum (optimum 0 skipped):\n\n",
         gw[0].cells, gw[0].dense_cells);
  printf("  mode        | conns worst  dense worst | busiest worst | conns > 1.6             |"
         " dense > 1.1             | busiest > 1.5           | server change > 2\n");
  printf("  ------------+--------------------------+---------------+-------------------------+"
         "-------------------------+-------------------------+------------------------\n");
  for (int k = 0; k < NUM_CHURN_MODES; k++) {
    const grid_worst *w = &gw[k];
    printf("  %-11s | %10.3fx  %10.3fx | %12.3fx | ", io_sessions_mode_name(churn_mode(k)),
           w->connections_ratio, w->connections_ratio_dense, w->busiest_ratio);
    io_sim_misses_text(&w->connections_over, 23);
    printf(" | ");
    io_sim_misses_text(&w->dense_over, 23);
    printf(" | ");
    io_sim_misses_text(&w->busiest_over, 23);
    printf(" | ");
    io_sim_misses_text(&w->server_change_over, 0);
    printf("\n");
  }
}

/* One mode's point and grid run; jobs are independent, so two threads share
 * them (the core's functions keep no shared mutable state). */
typedef struct churn_job {
  int mode;
  uint32_t servers, clients, min_aperture;
  const grid_spec *grid; /* NULL: no grid */
  point_result point;
  grid_worst worst;
  int rc;
  ap_error err;
} churn_job;

typedef struct job_queue {
  churn_job *jobs;
  size_t count, next;
  pthread_mutex_t lock;
} job_queue;

static void *churn_worker(void *arg) {
  job_queue *q = arg;
  for (;;) {
    pthread_mutex_lock(&q->lock);
    size_t k = q->next++;
    pthread_mutex_unlock(&q->lock);
    if (k >= q->count) return NULL;
    churn_job *j = &q->jobs[k];
    j->rc = run_point(j->mode, j->servers, j->clients, j->min_aperture,
                      &j->point, &j->err);
    if (j->rc == AP_OK && j->grid != NULL)
      j->rc = run_grid(j->mode, j->grid, j->min_aperture, &j->worst, &j->err);
  }
}

/* Runs every job on up to two threads (the costliest modes are queued
 * first by the caller). Falls back to this thread if none can start. */
static void run_jobs(churn_job *jobs, size_t count) {
  job_queue q = {jobs, count, 0, PTHREAD_MUTEX_INITIALIZER};
  pthread_t helper;
  int started = pthread_create(&helper, NULL, churn_worker, &q) == 0;
  churn_worker(&q);
  if (started) pthread_join(helper, NULL);
}

int io_sim_verb_churn(int argc, char **argv) {
  static const sim_grid_limits kLimits = {.servers_min = 2, .servers_max = 5000,
                                          .clients_max = 5000, .min_aperture_max = 5000,
                                          .grid_servers_min = 2, .grid_servers_max = 2000,
                                          .grid_clients_max = 2000};
  sim_grid_args a = {.servers = 100, .clients = 100, .min_aperture = AP_DEFAULT_MIN_APERTURE,
                     .grid_servers = {{50, 300}, 2}, .grid_clients = {{7, 300}, 2},
                     .grid_step = 1, .grid_positions = 2};
  int rc = io_sim_grid_args_parse(argc, argv, &kLimits, kUsage, &a);
  if (rc) return rc;
  const uint32_t servers = a.servers, clients = a.clients, min_aperture = a.min_aperture;
  const sim_list gs = a.grid_servers, gc = a.grid_clients;
  const int no_grid = a.no_grid, json = a.json;
  /* The point run compares every position: mesh costs ~ N x C x N. The
   * second bound is the cost of the costliest point N x C <= 250,000
   * allowed before (5000 x 50), so 1000 x 1000 runs and nothing costs
   * more than it did. */
  if ((double)servers * clients > 1000000)
    return io_sim_args_fail(argv[0], kUsage,
                         "--servers x --clients = %.0f exceeds 1,000,000",
                         (double)servers * clients);
  if ((double)servers * servers * clients > 1.25e9)
    return io_sim_args_fail(argv[0], kUsage,
                         "--servers^2 x --clients = %.0f exceeds 1,250,000,000",
                         (double)servers * servers * clients);
  grid_spec g = {gs.v[0], gs.v[1], a.grid_step, gc.v[0], gc.v[1], a.grid_positions};
  if (!no_grid && grid_work(&g) > 10 * kDefaultGridWork)
    return io_sim_args_fail(argv[0], kUsage,
                         "--grid-servers/--grid-clients/--grid-positions: "
                         "the grid is %.0fx the default one; at most 10x",
                         grid_work(&g) / kDefaultGridWork);

  churn_job jobs[NUM_CHURN_MODES];
  memset(jobs, 0, sizeof jobs);
  /* Queue order: stable (one plan per fleet), then the modes whose apertures hold or scan every server (vdc, mesh,
   * random), so the two threads finish together. */
  static const int kQueue[NUM_CHURN_MODES] = {6, 3, 4, 2, 0, 5, 1, 7};
  for (int k = 0; k < NUM_CHURN_MODES; k++) {
    churn_job *j = &jobs[k];
    j->mode = churn_mode(kQueue[k]);
    j->servers = servers;
    j->clients = clients;
    j->min_aperture = min_aperture;
    j->grid = no_grid ? NULL : &g;
  }
  run_jobs(jobs, NUM_CHURN_MODES);
  point_result pr[NUM_CHURN_MODES];
  grid_worst gw[NUM_CHURN_MODES];
  for (int k = 0; k < NUM_CHURN_MODES; k++) {
    churn_job *j = &jobs[k];
    if (j->rc != AP_OK) {
      fprintf(stderr, "sim churn: %s: %s\n", io_sessions_mode_name(j->mode),
              j->err.message);
      for (int i = 0; i < NUM_CHURN_MODES; i++) grid_worst_free(&jobs[i].worst);
      return SIM_EXIT_FAIL;
    }
    pr[kQueue[k]] = j->point;
    gw[kQueue[k]] = j->worst;
  }
  cell_compare cmp;
  memset(&cmp, 0, sizeof cmp);
  int k_smooth = -1, k_continuous = -1;
  for (int k = 0; k < NUM_CHURN_MODES; k++) {
    if (strcmp(io_sessions_mode_name(churn_mode(k)), "smooth") == 0) k_smooth = k;
    if (strcmp(io_sessions_mode_name(churn_mode(k)), "continuous") == 0) k_continuous = k;
  }
  if (!no_grid && k_smooth >= 0 && k_continuous >= 0)
    compare_cells(&g, &gw[k_smooth], &gw[k_continuous], &cmp);
  for (int k = 0; k < NUM_CHURN_MODES; k++) grid_worst_free(&gw[k]);
  if (json) {
    printf("{\"point\":{");
    io_sim_json_point(servers, clients, min_aperture, "modes");
    for (int k = 0; k < NUM_CHURN_MODES; k++)
      printf("%s{\"mode\":\"%s\",\"sessions\":%.0f,\"remove_changed\":%.15g,"
             "\"remove_changed_max\":%.15g,\"remove_optimum\":%.15g,"
             "\"add_changed\":%.15g,\"add_changed_max\":%.15g,"
             "\"add_optimum\":%.15g,\"connections_per_client\":%.15g,"
             "\"connections_per_client_max\":%.0f}",
             k ? "," : "", io_sessions_mode_name(churn_mode(k)),
             pr[k].sessions, pr[k].remove_mean, pr[k].remove_max,
             pr[k].remove_opt, pr[k].add_mean, pr[k].add_max, pr[k].add_opt,
             pr[k].connections_mean, pr[k].connections_max);
    printf("]}");
    if (!no_grid) {
      printf(",");
      io_sim_json_grid(g.n_lo, g.n_hi, g.step, g.c_lo, g.c_hi, g.positions);
      for (int k = 0; k < NUM_CHURN_MODES; k++) {
        printf("%s{\"mode\":\"%s\",\"remove_worst\":%.15g,\"remove_servers\":%u,"
               "\"remove_clients\":%u,\"remove_optimum\":%.15g,"
               "\"add_worst\":%.15g,\"add_servers\":%u,\"add_clients\":%u,"
               "\"add_optimum\":%.15g,\"remove_mean\":%.15g,\"add_mean\":%.15g,"
               "\"cells\":%zu,\"remove_worst_ratio\":%.15g,\"add_worst_ratio\":%.15g,"
               "\"ratio_skipped_cells\":%zu,\"load_worst\":%.15g,"
               "\"remove_ratio_servers\":%u,\"remove_ratio_clients\":%u,"
               "\"add_ratio_servers\":%u,\"add_ratio_clients\":%u,"
               "\"load_servers\":%u,\"load_clients\":%u,"
               "\"connections_ratio_worst\":%.15g,\"connections_ratio_worst_dense\":%.15g",
               k ? "," : "", io_sessions_mode_name(churn_mode(k)),
               gw[k].remove, gw[k].remove_n, gw[k].remove_c, gw[k].remove_opt,
               gw[k].add, gw[k].add_n, gw[k].add_c, gw[k].add_opt,
               gw[k].cells ? gw[k].remove_sum / gw[k].cells : 0,
               gw[k].cells ? gw[k].add_sum / gw[k].cells : 0, gw[k].cells,
               gw[k].remove_ratio, gw[k].add_ratio, gw[k].ratio_skipped, gw[k].load,
               gw[k].remove_ratio_n, gw[k].remove_ratio_c, gw[k].add_ratio_n,
               gw[k].add_ratio_c, gw[k].load_n, gw[k].load_c, gw[k].connections_ratio,
               gw[k].connections_ratio_dense);
        print_misses_json(&gw[k]);
        printf("}");
      }
      printf("],\"smooth_vs_continuous\":{\"cells\":%zu,\"smooth_more_on_removal\":%zu,"
             "\"smooth_more_on_addition\":%zu,\"largest_removal_excess\":%.15g,"
             "\"removal_excess_servers\":%u,\"removal_excess_clients\":%u,"
             "\"largest_addition_excess\":%.15g,\"addition_excess_servers\":%u,"
             "\"addition_excess_clients\":%u}}",
             cmp.cells, cmp.remove_more, cmp.add_more, cmp.remove_excess, cmp.remove_n,
             cmp.remove_c, cmp.add_excess, cmp.add_n, cmp.add_c);
    }
    printf("}\n");
    return SIM_EXIT_OK;
  }
  io_sim_text_point(servers, clients, min_aperture);
  printf(" changed = sessions closed + opened,\nas %% of sessions before; mean (max) over "
         "every position of the server that leaves/joins.\n\n");
  printf("  mode        | sessions | remove 1: changed     optimum | "
         "add 1: changed        optimum\n");
  printf("  ------------+----------+------------------------------+-----------"
         "-------------------\n");
  for (int k = 0; k < NUM_CHURN_MODES; k++)
    printf("  %-11s | %8.0f | %6.2f%% (max %6.2f%%)  %5.2f%% | %6.2f%% (max "
           "%6.2f%%)  %5.2f%%\n",
           io_sessions_mode_name(churn_mode(k)), pr[k].sessions,
           100 * pr[k].remove_mean, 100 * pr[k].remove_max,
           100 * pr[k].remove_opt, 100 * pr[k].add_mean, 100 * pr[k].add_max,
           100 * pr[k].add_opt);
  if (no_grid) return SIM_EXIT_OK;
  printf("\nWorst case over servers %u..%u (step %u) x clients %u..%u (every "
         "count to 30, every 10th to 100, every 50th),\neach cell averaged over %u "
         "positions of the server that leaves/joins:\n\n",
         g.n_lo, g.n_hi, g.step, g.c_lo, g.c_hi, g.positions);
  printf("  mode        | worst removal  at (N, C)   optimum | worst addition "
         " at (N, C)   optimum | mean removal  addition\n");
  printf("  ------------+-----------------------------------+----------------"
         "--------------------+-----------------------\n");
  for (int k = 0; k < NUM_CHURN_MODES; k++)
    printf("  %-11s | %7.2f%%  (%4u, %4u)  %7.2f%% | %7.2f%%  (%4u, %4u)  "
           "%7.2f%% |     %6.2f%%   %6.2f%%\n",
           io_sessions_mode_name(churn_mode(k)), 100 * gw[k].remove,
           gw[k].remove_n, gw[k].remove_c, 100 * gw[k].remove_opt,
           100 * gw[k].add, gw[k].add_n, gw[k].add_c, 100 * gw[k].add_opt,
           gw[k].cells ? 100 * gw[k].remove_sum / gw[k].cells : 0,
           gw[k].cells ? 100 * gw[k].add_sum / gw[k].cells : 0);
  printf("\nWorst over the same cells of changed / optimum (both position-averaged; a\n"
         "cell with optimum 0 is skipped) and of the expected load max / mean of a cell's\n"
         "fleet (every client sends the same rate, split by pick weight):\n\n");
  printf("  mode        | removal/opt  at (N, C)  | addition/opt at (N, C)  |"
         " load max/mean at (N, C)  | skipped\n");
  printf("  ------------+-------------------------+-------------------------+"
         "--------------------------+--------\n");
  for (int k = 0; k < NUM_CHURN_MODES; k++)
    printf("  %-11s | %9.2fx (%4u, %4u) | %9.2fx (%4u, %4u) | %9.4f   (%4u, %4u) | %7zu\n",
           io_sessions_mode_name(churn_mode(k)), gw[k].remove_ratio, gw[k].remove_ratio_n,
           gw[k].remove_ratio_c, gw[k].add_ratio, gw[k].add_ratio_n, gw[k].add_ratio_c,
           gw[k].load, gw[k].load_n, gw[k].load_c, gw[k].ratio_skipped);
  if (cmp.cells > 0) {
    printf("\nsmooth vs continuous, cell by cell: smooth changes more sessions in %zu of %zu "
           "cells on a removal",
           cmp.remove_more, cmp.cells);
    if (cmp.remove_more > 0)
      printf(" (by at most %.2f points, at (%u, %u))", 100 * cmp.remove_excess, cmp.remove_n,
             cmp.remove_c);
    printf(",\nin %zu on an addition", cmp.add_more);
    if (cmp.add_more > 0)
      printf(" (by at most %.2f points, at (%u, %u))", 100 * cmp.add_excess, cmp.add_n,
             cmp.add_c);
    printf(".\n");
  }
  print_misses_text(gw);
  return SIM_EXIT_OK;
}
