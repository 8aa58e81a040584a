/*
 * sim balance: per-server connections and expected request share for each
 * mode, (1) for one client service, (2) for several services of different
 * sizes sharing one backend set (seed 000's multi-service interference),
 * and (3) the SRE book's example: 300 clients, 300 backends, subset 30%.
 * Every client sends the same request rate (see sim_model.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "interop/sim/sim_balance_skew.h"
#include "interop/sim/sim_skew.h"
#include "interop/sim/sim_model.h"

static const char kUsage[] =
    "sim balance [--servers 100] [--clients 33] [--min-aperture 12] "
    "[--services 5,13,33,70] [--per-server] [--json]\n"
    "       [--client-rates SPEC [--seed 1] [--draws 1]]   SPEC: 8,1,1,1 | "
    "lognormal:CV | one:X";

/* One mode's per-server results for one scenario. */
typedef struct mode_result {
  ap_mode mode;
  double *conns; /* per server */
  double *load;  /* per server, fraction of all requests */
  sim_stats conn_stats, load_stats;
} mode_result;

typedef struct scenario {
  const char *name;
  uint32_t servers, min_aperture;
  const uint32_t *sizes; /* clients per service */
  size_t services;
  size_t nmodes;
  mode_result modes[SIM_NUM_MODES];
} scenario;

static void scenario_free(scenario *s) {
  for (size_t m = 0; m < s->nmodes; m++) {
    free(s->modes[m].conns);
    free(s->modes[m].load);
  }
}

static int run_mode(scenario *s, mode_result *r, ap_error *err) {
  r->conns = calloc(s->servers, sizeof *r->conns);
  r->load = calloc(s->servers, sizeof *r->load);
  if (r->conns == NULL || r->load == NULL)
    return ap_error_set(err, AP_ENOMEM, "out of memory");
  ap_ring *ring = NULL;
  int rc = ap_ring_create(NULL, s->servers, &ring, err);
  double clients_total = 0;
  for (size_t k = 0; rc == AP_OK && k < s->services; k++) {
    rc = io_sim_service_accumulate(ring, r->mode, s->sizes[k], s->min_aperture,
                                (uint32_t)k, 1.0, r->conns, r->load, NULL,
                                err);
    clients_total += s->sizes[k];
  }
  ap_ring_destroy(ring);
  if (rc != AP_OK) return rc;
  for (uint32_t i = 0; i < s->servers; i++) r->load[i] /= clients_total;
  r->conn_stats = io_sim_stats_of(r->conns, s->servers);
  r->load_stats = io_sim_stats_of(r->load, s->servers);
  return AP_OK;
}

static int run_scenario(scenario *s, const ap_mode *modes, size_t nmodes,
                        ap_error *err) {
  s->nmodes = 0;
  for (size_t m = 0; m < nmodes; m++) {
    mode_result *r = &s->modes[s->nmodes++];
    memset(r, 0, sizeof *r);
    r->mode = modes[m];
    int rc = run_mode(s, r, err);
    if (rc != AP_OK) return rc;
  }
  return AP_OK;
}

static void print_sizes(const scenario *s) {
  for (size_t k = 0; k < s->services; k++)
    printf("%s%u", k ? "," : "", s->sizes[k]);
}

static void print_table(const scenario *s, int per_server) {
  printf("%s: %u servers, services of ", s->name, s->servers);
  print_sizes(s);
  printf(" clients, min aperture %u\n\n", s->min_aperture);
  printf("  %-11s | %12s  %8s  %8s  %8s | %14s  %8s  %8s\n", "mode",
         "conns/server", "max/mean", "min/mean", "CV", "share max/mean",
         "min/mean", "CV");
  printf("  ------------+------------------------------------------+-----------"
         "----------------------\n");
  for (size_t m = 0; m < s->nmodes; m++) {
    const mode_result *r = &s->modes[m];
    printf("  %-11s | %12.2f  %8.3f  %8.3f  %8.4f | %14.3f  %8.3f  %8.4f\n",
           ap_mode_name(r->mode), r->conn_stats.mean,
           r->conn_stats.max_over_mean, r->conn_stats.min_over_mean,
           r->conn_stats.cv, r->load_stats.max_over_mean,
           r->load_stats.min_over_mean, r->load_stats.cv);
  }
  if (per_server) {
    printf("\n  per server: connections / request share relative to the mean\n"
           "  server");
    for (size_t m = 0; m < s->nmodes; m++)
      printf(" | %-15s", ap_mode_name(s->modes[m].mode));
    printf("\n");
    for (uint32_t i = 0; i < s->servers; i++) {
      printf("  %6u", i);
      for (size_t m = 0; m < s->nmodes; m++) {
        const mode_result *r = &s->modes[m];
        printf(" | %6.0f / %6.3f", r->conns[i],
               r->load[i] * s->servers);
      }
      printf("\n");
    }
  }
  printf("\n");
}

static void print_stats_json(const char *key, const sim_stats *st) {
  printf("\"%s\":{\"mean\":%.15g,\"max_mean\":%.15g,\"min_mean\":%.15g,"
         "\"cv\":%.15g}",
         key, st->mean, st->max_over_mean, st->min_over_mean, st->cv);
}

static void print_json(const char *key, const scenario *s) {
  printf("\"%s\":{\"servers\":%u,\"min_aperture\":%u,\"services\":[", key,
         s->servers, s->min_aperture);
  print_sizes(s);
  printf("],\"modes\":[");
  for (size_t m = 0; m < s->nmodes; m++) {
    const mode_result *r = &s->modes[m];
    printf("%s{\"mode\":\"%s\",", m ? "," : "", ap_mode_name(r->mode));
    print_stats_json("connections", &r->conn_stats);
    printf(",");
    print_stats_json("load", &r->load_stats);
    printf(",\"per_server_connections\":[");
    for (uint32_t i = 0; i < s->servers; i++)
      printf("%s%.0f", i ? "," : "", r->conns[i]);
    printf("],\"per_server_load\":[");
    for (uint32_t i = 0; i < s->servers; i++)
      printf("%s%.15g", i ? "," : "", r->load[i]);
    printf("]}");
  }
  printf("]}");
}

int io_sim_verb_balance(int argc, char **argv) {
  uint32_t servers = 100, clients = 33, min_aperture = AP_DEFAULT_MIN_APERTURE;
  sim_list services = {{5, 13, 33, 70}, 4};
  int per_server = 0, json = 0;
  const char *client_rates = NULL;
  uint32_t seed = 1, draws = 1;
  sim_flag flags[] = {
      {"servers", SIM_FLAG_UINT, &servers, 1, 10000, 0},
      {"clients", SIM_FLAG_UINT, &clients, 1, 10000, 0},
      {"min-aperture", SIM_FLAG_UINT, &min_aperture, 1, 10000, 0},
      {"services", SIM_FLAG_LIST, &services, 1, 10000, 0},
      {"per-server", SIM_FLAG_BOOL, &per_server, 0, 0, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
      {"client-rates", SIM_FLAG_STRING, &client_rates, 0, 0, 0},
      {"seed", SIM_FLAG_UINT, &seed, 0, 4294967295.0, 0},
      {"draws", SIM_FLAG_UINT, &draws, 1, 100, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                          kUsage);
  if (rc) return rc;
  double total_clients = 0;
  for (size_t k = 0; k < services.n; k++) total_clients += services.v[k];
  if (total_clients < clients) total_clients = clients;
  if (total_clients * servers > 5e7)
    return io_sim_args_fail(argv[0], kUsage,
                         "--servers x clients = %.0f exceeds 50,000,000",
                         total_clients * servers);
  sim_skew_table *skew = NULL;
  if (client_rates != NULL) {
    if ((double)servers * clients > SIM_SKEW_MAX_FLEET)
      return io_sim_args_fail(argv[0], kUsage,
                              "--client-rates: --servers x --clients = %.0f "
                              "exceeds %d",
                              (double)servers * clients, SIM_SKEW_MAX_FLEET);
    double probe[1];
    char why[160];
    if (io_sim_rates_parse(client_rates, 1, seed, probe, why, sizeof why) != 0)
      return io_sim_args_fail(argv[0], kUsage, "--client-rates: %s", why);
    sim_skew_args sa = {client_rates, seed, draws, servers, clients,
                        min_aperture};
    if (io_sim_balance_skew_run(&sa, &skew) != 0) return SIM_EXIT_FAIL;
  } else if (flags[7].seen || flags[8].seen) {
    return io_sim_args_fail(argv[0], kUsage,
                            "--seed and --draws need --client-rates");
  }

  static const uint32_t kSreSize[1] = {300};
  scenario single = {"one service", servers, min_aperture, &clients, 1, 0, {{0}}};
  scenario multi = {"services sharing the servers", servers, min_aperture,
                    services.v, services.n, 0, {{0}}};
  /* SRE book ch. 20: 300 clients, 300 backends, each client 30% = 90. */
  scenario sre = {"SRE book example (subset 30%)", 300, 90, kSreSize, 1, 0,
                  {{0}}};
  static const ap_mode kSreModes[2] = {AP_MODE_RANDOM, AP_MODE_CONTINUOUS};
  ap_error err;
  rc = run_scenario(&single, io_sim_modes, SIM_NUM_MODES, &err);
  if (rc == AP_OK) rc = run_scenario(&multi, io_sim_modes, SIM_NUM_MODES, &err);
  if (rc == AP_OK) rc = run_scenario(&sre, kSreModes, 2, &err);
  if (rc != AP_OK) {
    fprintf(stderr, "sim balance: %s\n", err.message);
  } else if (json) {
    printf("{");
    print_json("single", &single);
    printf(",");
    print_json("multi", &multi);
    printf(",");
    print_json("sre", &sre);
    if (skew != NULL) {
      printf(",");
      io_sim_balance_skew_json(skew);
    }
    printf("}\n");
  } else {
    print_table(&single, per_server);
    print_table(&multi, per_server);
    print_table(&sre, 0);
    printf("SRE book, random subsetting 300x300 at 30%%: least loaded backend "
           "63%% of average, most 121%%.\n");
    if (skew != NULL) {
      printf("\n");
      io_sim_balance_skew_text(skew);
    }
  }
  scenario_free(&single);
  scenario_free(&multi);
  scenario_free(&sre);
  io_sim_balance_skew_free(skew);
  return rc == AP_OK ? SIM_EXIT_OK : SIM_EXIT_FAIL;
}
