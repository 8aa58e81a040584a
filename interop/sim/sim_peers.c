/*
 * sim peers: how many (client, server) sessions change when one client
 * joins or leaves (the coordinate of every client after it shifts), per
 * mode, with the optimum (the joiner's or leaver's own sessions); and the
 * highest server load over the mean while the fleet disagrees (some
 * clients already at the new count, the rest still at the old one).
 * Point: one fleet, mean and max over every join/leave position. Grid: the
 * worst position-averaged figures over servers x clients (positions
 * sampled at k*C/P); per mode also the worst changed / optimum over the
 * point's positions and over the grid's cells, and the cells where a
 * client joining or leaving changes more than 2x the optimum (stable's design
 * target 3), counted with the range of C x A / N they lie in
 * (sim_misses.h). Model: peer_churn.h (one
 * fleet computed per join or leave, in every mode alike).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/sim/peer_churn.h"
#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "interop/sim/sim_misses.h"
#include "interop/sim/sim_print.h"
#include "interop/sim/sim_model.h"

static const char kUsage[] =
    "sim peers [--servers 100] [--clients 100] [--min-aperture 12] "
    "[--no-grid] [--grid-servers 20,200] [--grid-clients 2,60] "
    "[--grid-step 20] [--grid-positions 4] [--json]";

typedef struct peer_point {
  double sessions;
  double join_mean, join_max, join_opt; /* fractions of sessions before */
  double leave_mean, leave_max, leave_opt;
  double load_agreed, load_join, load_leave; /* max / mean */
  double join_ratio, leave_ratio; /* worst changed / optimum over positions */
} peer_point;

typedef struct peer_worst {
  double join, join_opt, leave, leave_opt, join_sum, leave_sum;
  uint32_t join_n, join_c, leave_n, leave_c;
  size_t cells;
  /* worst changed / optimum of a cell (position-averaged both) */
  double join_ratio, leave_ratio;
  /* cells over 2x the optimum on a join, a leave, either one (cells with
   * optimum 0 skipped) */
  sim_misses join_over, leave_over, client_change_over;
} peer_worst;

/* Stable's design limit on changed / optimum of one client joining or leaving. */
static const double kLimitClientChange = 2.0;

/* Join and leave at the given index: churn, optimum and the disagreeing
 * load of the fleet `at` (C clients) against the fleet after the step. */
typedef struct peer_step {
  size_t changed, optimum;
  double load;
} peer_step;

static int join_at(ap_mode mode, uint32_t n, const peer_fleet *at, uint32_t j, uint32_t a,
                   int want_load, peer_step *out, ap_error *err) {
  peer_fleet plus;
  int rc = io_peer_fleet_compute_joined(mode, n, at->count, j, a, &plus, err);
  if (rc != AP_OK) return rc;
  out->changed = io_peer_churn_join(at, &plus, &out->optimum);
  out->load = want_load ? io_peer_disagree_join_load(at, &plus) : 0;
  io_peer_fleet_free(&plus);
  return AP_OK;
}

static int leave_at(ap_mode mode, uint32_t n, const peer_fleet *at, uint32_t l, uint32_t a,
                    int want_load, peer_step *out, ap_error *err) {
  peer_fleet minus;
  int rc = io_peer_fleet_compute_without(mode, n, at->count, l, a, &minus, err);
  if (rc != AP_OK) return rc;
  out->changed = io_peer_churn_leave(at, &minus, l, &out->optimum);
  out->load = want_load ? io_peer_disagree_leave_load(at, &minus, l) : 0;
  io_peer_fleet_free(&minus);
  return AP_OK;
}

static int run_point(ap_mode mode, uint32_t n, uint32_t c, uint32_t a,
                     peer_point *out, ap_error *err) {
  memset(out, 0, sizeof *out);
  peer_fleet at;
  int rc = io_peer_fleet_compute(mode, n, c, a, &at, err);
  if (rc != AP_OK) return rc;
  double total = (double)io_peer_fleet_sessions(&at);
  out->sessions = total;
  out->load_agreed = io_peer_agreed_load(&at);
  for (uint32_t j = 0; rc == AP_OK && j <= c; j++) {
    peer_step st;
    rc = join_at(mode, n, &at, j, a, 1, &st, err);
    if (rc != AP_OK) break;
    double d = (double)st.changed / total;
    out->join_mean += d / (c + 1);
    out->join_opt += (double)st.optimum / total / (c + 1);
    if (d > out->join_max) out->join_max = d;
    if (st.optimum > 0 && (double)st.changed / st.optimum > out->join_ratio)
      out->join_ratio = (double)st.changed / st.optimum;
    if (st.load > out->load_join) out->load_join = st.load;
  }
  for (uint32_t l = 0; rc == AP_OK && c >= 2 && l < c; l++) {
    peer_step st;
    rc = leave_at(mode, n, &at, l, a, 1, &st, err);
    if (rc != AP_OK) break;
    double d = (double)st.changed / total;
    out->leave_mean += d / c;
    out->leave_opt += (double)st.optimum / total / c;
    if (d > out->leave_max) out->leave_max = d;
    if (st.optimum > 0 && (double)st.changed / st.optimum > out->leave_ratio)
      out->leave_ratio = (double)st.changed / st.optimum;
    if (st.load > out->load_leave) out->load_leave = st.load;
  }
  io_peer_fleet_free(&at);
  return rc;
}

/* Grid client counts: every count to 30, every 10th beyond (top always). */
static uint32_t next_clients(uint32_t c, uint32_t hi) {
  uint32_t next = c < 30 ? c + 1 : c + 10;
  return (next > hi && c < hi) ? hi : next;
}

static int run_grid(ap_mode mode, uint32_t n_lo, uint32_t n_hi, uint32_t step,
                    uint32_t c_lo, uint32_t c_hi, uint32_t positions,
                    uint32_t a, peer_worst *w, ap_error *err) {
  memset(w, 0, sizeof *w);
  for (uint32_t c = c_lo; c <= c_hi; c = next_clients(c, c_hi)) {
    for (uint32_t n = n_lo; n <= n_hi; n += step) {
      peer_fleet at;
      int rc = io_peer_fleet_compute(mode, n, c, a, &at, err);
      if (rc != AP_OK) return rc;
      double total = (double)io_peer_fleet_sessions(&at);
      double join = 0, join_opt = 0, leave = 0, leave_opt = 0;
      for (uint32_t k = 0; rc == AP_OK && k < positions; k++) {
        peer_step st;
        uint32_t j = (uint32_t)((uint64_t)k * (c + 1) / positions);
        rc = join_at(mode, n, &at, j, a, 0, &st, err);
        if (rc != AP_OK) break;
        join += (double)st.changed / total / positions;
        join_opt += (double)st.optimum / total / positions;
        if (c >= 2) {
          uint32_t l = (uint32_t)((uint64_t)k * c / positions);
          rc = leave_at(mode, n, &at, l, a, 0, &st, err);
          if (rc != AP_OK) break;
          leave += (double)st.changed / total / positions;
          leave_opt += (double)st.optimum / total / positions;
        }
      }
      io_peer_fleet_free(&at);
      if (rc != AP_OK) return rc;
      if (join_opt > 0 && join / join_opt > w->join_ratio) w->join_ratio = join / join_opt;
      if (leave_opt > 0 && leave / leave_opt > w->leave_ratio) w->leave_ratio = leave / leave_opt;
      const double ca_n = (double)c * a / n;
      const int join_missed =
          join_opt > 0 &&
          io_sim_misses_note(&w->join_over, join / join_opt, kLimitClientChange, ca_n);
      const int leave_missed =
          leave_opt > 0 &&
          io_sim_misses_note(&w->leave_over, leave / leave_opt, kLimitClientChange, ca_n);
      /* either one: a figure of 1 against a limit of 0 counts the cell */
      if (join_missed || leave_missed) io_sim_misses_note(&w->client_change_over, 1, 0, ca_n);
      w->cells++;
      w->join_sum += join;
      w->leave_sum += leave;
      if (join > w->join) {
        w->join = join;
        w->join_opt = join_opt;
        w->join_n = n;
        w->join_c = c;
      }
      if (leave > w->leave) {
        w->leave = leave;
        w->leave_opt = leave_opt;
        w->leave_n = n;
        w->leave_c = c;
      }
      if (n + step > n_hi) break;
    }
    if (c == c_hi) break;
  }
  return AP_OK;
}

int io_sim_verb_peers(int argc, char **argv) {
  static const sim_grid_limits kLimits = {.servers_min = 1, .servers_max = 2000,
                                          .clients_max = 500, .min_aperture_max = 2000,
                                          .grid_servers_min = 1, .grid_servers_max = 1000,
                                          .grid_clients_max = 200};
  sim_grid_args a = {.servers = 100, .clients = 100, .min_aperture = AP_DEFAULT_MIN_APERTURE,
                     .grid_servers = {{20, 200}, 2}, .grid_clients = {{2, 60}, 2},
                     .grid_step = 20, .grid_positions = 4};
  int rc = io_sim_grid_args_parse(argc, argv, &kLimits, kUsage, &a);
  if (rc) return rc;
  const uint32_t servers = a.servers, clients = a.clients, min_aperture = a.min_aperture;
  const uint32_t step = a.grid_step, positions = a.grid_positions;
  const sim_list gs = a.grid_servers, gc = a.grid_clients;
  const int no_grid = a.no_grid, json = a.json;
  /* The point compares every position: ~ C^2 x N work per mode. */
  if ((double)clients * clients * servers > 5e7)
    return io_sim_args_fail(argv[0], kUsage, "--clients^2 x --servers = %.0f exceeds 50,000,000",
                         (double)clients * clients * servers);

  peer_point pp[SIM_NUM_MODES];
  peer_worst pw[SIM_NUM_MODES];
  memset(pw, 0, sizeof pw);
  for (int k = 0; k < SIM_NUM_MODES; k++) {
    ap_error err;
    rc = run_point(io_sim_modes[k], servers, clients, min_aperture, &pp[k], &err);
    if (rc == AP_OK && !no_grid)
      rc = run_grid(io_sim_modes[k], gs.v[0], gs.v[1], step, gc.v[0], gc.v[1], positions,
                    min_aperture, &pw[k], &err);
    if (rc != AP_OK) {
      fprintf(stderr, "sim peers: %s: %s\n", ap_mode_name(io_sim_modes[k]), err.message);
      return SIM_EXIT_FAIL;
    }
  }
  if (json) {
    printf("{\"point\":{");
    io_sim_json_point(servers, clients, min_aperture, "modes");
    for (int k = 0; k < SIM_NUM_MODES; k++)
      printf("%s{\"mode\":\"%s\",\"sessions\":%.0f,\"join_changed\":%.15g,"
             "\"join_changed_max\":%.15g,\"join_optimum\":%.15g,"
             "\"leave_changed\":%.15g,\"leave_changed_max\":%.15g,"
             "\"leave_optimum\":%.15g,\"load_agreed_max\":%.15g,"
             "\"load_join_disagree_max\":%.15g,\"load_leave_disagree_max\":%.15g,"
             "\"join_worst_ratio\":%.15g,\"leave_worst_ratio\":%.15g}",
             k ? "," : "", ap_mode_name(io_sim_modes[k]), pp[k].sessions, pp[k].join_mean,
             pp[k].join_max, pp[k].join_opt, pp[k].leave_mean, pp[k].leave_max,
             pp[k].leave_opt, pp[k].load_agreed, pp[k].load_join, pp[k].load_leave,
             pp[k].join_ratio, pp[k].leave_ratio);
    printf("]}");
    if (!no_grid) {
      printf(",");
      io_sim_json_grid(gs.v[0], gs.v[1], step, gc.v[0], gc.v[1], positions);
      for (int k = 0; k < SIM_NUM_MODES; k++) {
        printf("%s{\"mode\":\"%s\",\"join_worst\":%.15g,\"join_servers\":%u,"
               "\"join_clients\":%u,\"join_optimum\":%.15g,\"leave_worst\":%.15g,"
               "\"leave_servers\":%u,\"leave_clients\":%u,\"leave_optimum\":%.15g,"
               "\"join_mean\":%.15g,\"leave_mean\":%.15g,\"cells\":%zu,"
               "\"join_worst_ratio\":%.15g,\"leave_worst_ratio\":%.15g",
               k ? "," : "", ap_mode_name(io_sim_modes[k]), pw[k].join, pw[k].join_n,
               pw[k].join_c, pw[k].join_opt, pw[k].leave, pw[k].leave_n, pw[k].leave_c,
               pw[k].leave_opt, pw[k].cells ? pw[k].join_sum / pw[k].cells : 0,
               pw[k].cells ? pw[k].leave_sum / pw[k].cells : 0, pw[k].cells,
               pw[k].join_ratio, pw[k].leave_ratio);
        io_sim_misses_json("join", &pw[k].join_over);
        io_sim_misses_json("leave", &pw[k].leave_over);
        io_sim_misses_json("client_change", &pw[k].client_change_over);
        printf("}");
      }
      printf("]}");
    }
    printf("}\n");
    return SIM_EXIT_OK;
  }
  io_sim_text_point(servers, clients, min_aperture);
  printf(" One client joins or leaves;\n"
         "changed = sessions closed + opened, as %% of sessions before; mean (max)\n"
         "over every position of the joiner/leaver in the peer order. load = highest\n"
         "server load / mean: agreed, and worst while the fleet disagrees.\n\n");
  printf("  mode        | sessions | join: changed        optimum | leave: changed       "
         "optimum | load agreed  join   leave\n");
  printf("  ------------+----------+-----------------------------+------------------------"
         "-----+--------------------------\n");
  for (int k = 0; k < SIM_NUM_MODES; k++)
    printf("  %-11s | %8.0f | %6.2f%% (max %6.2f%%) %5.2f%% | %6.2f%% (max %6.2f%%) "
           "%5.2f%% |   %5.3f  %5.3f  %5.3f\n",
           ap_mode_name(io_sim_modes[k]), pp[k].sessions, 100 * pp[k].join_mean,
           100 * pp[k].join_max, 100 * pp[k].join_opt, 100 * pp[k].leave_mean,
           100 * pp[k].leave_max, 100 * pp[k].leave_opt, pp[k].load_agreed, pp[k].load_join,
           pp[k].load_leave);
  printf("\nWorst changed / optimum over the positions:\n\n"
         "  mode        |    join   leave\n");
  for (int k = 0; k < SIM_NUM_MODES; k++)
    printf("  %-11s | %7.2f %7.2f\n", ap_mode_name(io_sim_modes[k]), pp[k].join_ratio,
           pp[k].leave_ratio);
  if (no_grid) return SIM_EXIT_OK;
  printf("\nWorst case over servers %u..%u (step %u) x clients %u..%u (every count to 30,\n"
         "every 10th beyond), each cell averaged over %u positions:\n\n",
         gs.v[0], gs.v[1], step, gc.v[0], gc.v[1], positions);
  printf("  mode        | worst join  at (N, C)   optimum | worst leave at (N, C)   optimum |"
         " mean join  leave\n");
  for (int k = 0; k < SIM_NUM_MODES; k++)
    printf("  %-11s | %7.2f%% (%4u, %4u) %7.2f%% | %7.2f%% (%4u, %4u) %7.2f%% |  %6.2f%% "
           "%6.2f%%\n",
           ap_mode_name(io_sim_modes[k]), 100 * pw[k].join, pw[k].join_n, pw[k].join_c,
           100 * pw[k].join_opt, 100 * pw[k].leave, pw[k].leave_n, pw[k].leave_c,
           100 * pw[k].leave_opt, pw[k].cells ? 100 * pw[k].join_sum / pw[k].cells : 0,
           pw[k].cells ? 100 * pw[k].leave_sum / pw[k].cells : 0);
  printf("\nWorst changed / optimum over the same cells (both position-averaged):\n\n"
         "  mode        |    join   leave\n");
  for (int k = 0; k < SIM_NUM_MODES; k++)
    printf("  %-11s | %7.2f %7.2f\n", ap_mode_name(io_sim_modes[k]), pw[k].join_ratio,
           pw[k].leave_ratio);
  printf("\nCells of the %zu over 2x the optimum (stable's churn target), with the range of\n"
         "C*A/N they lie in (cells with optimum 0 skipped):\n\n"
         "  mode        | join > 2                | leave > 2               | either\n",
         pw[0].cells);
  for (int k = 0; k < SIM_NUM_MODES; k++) {
    printf("  %-11s | ", ap_mode_name(io_sim_modes[k]));
    io_sim_misses_text(&pw[k].join_over, 23);
    printf(" | ");
    io_sim_misses_text(&pw[k].leave_over, 23);
    printf(" | ");
    io_sim_misses_text(&pw[k].client_change_over, 0);
    printf("\n");
  }
  return SIM_EXIT_OK;
}
