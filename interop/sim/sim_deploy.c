/*
 * sim deploy: a rolling deploy. Each of the N servers in turn (ring order,
 * which is identity order) is replaced by a server with a new identity,
 * which takes the last place in the order: one step per server, from the
 * fleet before to the fleet with that server swapped for the new one.
 * changed = sessions closed + opened, summed over the N steps, compared by
 * server identity; optimum = per step the sessions of the server that left
 * plus those of the one that came (each of them closed once and opened
 * once); load = worst expected load max / mean over every fleet on the way
 * (sim_model.h's model). Stable builds one plan per fleet from the
 * identities' keys (interop/common/sessions.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/common/sessions.h"
#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "interop/sim/sim_model.h"
#include "interop/sim/sim_print.h"

static const char kUsage[] =
    "sim deploy [--servers 100] [--clients 100] [--min-aperture 12] [--json]";

typedef struct deploy_result {
  double sessions; /* before the deploy */
  double changed, optimum, load_worst;
} deploy_result;

static uint64_t deploy_seed(uint32_t client, const void *ctx) {
  (void)ctx;
  return io_sim_client_seed(0, client);
}

static int run_deploy(ap_mode mode, uint32_t n, uint32_t clients, uint32_t a,
                      deploy_result *out, ap_error *err) {
  memset(out, 0, sizeof *out);
  uint32_t *ids = malloc((size_t)n * sizeof *ids);
  if (ids == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  for (uint32_t j = 0; j < n; j++) ids[j] = j;
  io_sessions before, after;
  int rc = io_sessions_compute_ids((int)mode, n, ids, clients, NULL, a, deploy_seed, NULL,
                                   &before, err);
  if (rc != AP_OK) {
    free(ids);
    return rc;
  }
  out->sessions = (double)before.total;
  out->load_worst = io_sessions_load_max(&before);
  for (uint32_t step = 0; step < n && rc == AP_OK; step++) {
    const uint32_t gone = ids[0], fresh = n + step;
    memmove(ids, ids + 1, (size_t)(n - 1) * sizeof *ids);
    ids[n - 1] = fresh;
    rc = io_sessions_compute_ids((int)mode, n, ids, clients, NULL, a, deploy_seed, NULL,
                                 &after, err);
    if (rc != AP_OK) break;
    size_t changed = io_sessions_changed(&before, &after);
    if (changed == (size_t)-1) rc = ap_error_set(err, AP_ENOMEM, "out of memory");
    out->changed += (double)changed;
    out->optimum += (double)(io_sessions_of_server(&before, gone) +
                             io_sessions_of_server(&after, fresh));
    double load = io_sessions_load_max(&after);
    if (load > out->load_worst) out->load_worst = load;
    io_sessions_free(&before);
    before = after;
  }
  io_sessions_free(&before);
  free(ids);
  return rc;
}

int io_sim_verb_deploy(int argc, char **argv) {
  uint32_t servers = 100, clients = 100, min_aperture = AP_DEFAULT_MIN_APERTURE;
  int json = 0;
  sim_flag flags[] = {
      {"servers", SIM_FLAG_UINT, &servers, 1, 2000, 0},
      {"clients", SIM_FLAG_UINT, &clients, 1, 2000, 0},
      {"min-aperture", SIM_FLAG_UINT, &min_aperture, 1, 2000, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0], kUsage);
  if (rc) return rc;
  /* N steps of a fleet whose mesh sessions number N x C. */
  if ((double)servers * servers * clients > 2e8)
    return io_sim_args_fail(argv[0], kUsage,
                            "--servers^2 x --clients = %.0f exceeds 200,000,000",
                            (double)servers * servers * clients);
  deploy_result r[SIM_NUM_MODES];
  for (int k = 0; k < SIM_NUM_MODES; k++) {
    ap_error err;
    rc = run_deploy(io_sim_modes[k], servers, clients, min_aperture, &r[k], &err);
    if (rc != AP_OK) {
      fprintf(stderr, "sim deploy: %s: %s\n", ap_mode_name(io_sim_modes[k]), err.message);
      return SIM_EXIT_FAIL;
    }
  }
  if (json) {
    printf("{");
    io_sim_json_point(servers, clients, min_aperture, "modes");
    for (int k = 0; k < SIM_NUM_MODES; k++)
      printf("%s{\"mode\":\"%s\",\"sessions\":%.0f,\"changed\":%.0f,\"optimum\":%.0f,"
             "\"ratio\":%.15g,\"load_worst\":%.15g}",
             k ? "," : "", ap_mode_name(io_sim_modes[k]), r[k].sessions, r[k].changed,
             r[k].optimum, r[k].optimum > 0 ? r[k].changed / r[k].optimum : 0,
             r[k].load_worst);
    printf("]}\n");
    return SIM_EXIT_OK;
  }
  io_sim_text_point(servers, clients, min_aperture);
  printf(" Rolling deploy: each server in turn\n"
         "replaced by one with a new identity (last in the order); changed = sessions\n"
         "closed + opened over all %u steps; optimum = the replaced and the new\n"
         "servers' sessions; load = worst expected load max/mean over every fleet.\n\n",
         servers);
  printf("  mode        | sessions |    changed |   optimum |   ratio | load worst\n");
  printf("  ------------+----------+------------+-----------+---------+-----------\n");
  for (int k = 0; k < SIM_NUM_MODES; k++)
    printf("  %-11s | %8.0f | %10.0f | %9.0f | %7.2f | %10.4f\n", ap_mode_name(io_sim_modes[k]),
           r[k].sessions, r[k].changed, r[k].optimum,
           r[k].optimum > 0 ? r[k].changed / r[k].optimum : 0, r[k].load_worst);
  return SIM_EXIT_OK;
}
