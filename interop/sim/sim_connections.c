/*
 * sim connections: total client->server connections of a fleet, full mesh
 * vs aperture (seed 001: 500 gateways x 1000 origins, subset 20 ->
 * 500,000 vs 10,000). The per-mode totals are the sizes of the physical
 * apertures the core computes, so boundary-straddling windows show up.
 */
#include <stdio.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "interop/sim/sim_model.h"

static const char kUsage[] =
    "sim connections [--clients 500] [--servers 1000] [--subset 20] [--json]";

int io_sim_verb_connections(int argc, char **argv) {
  uint32_t clients = 500, servers = 1000, subset = 20;
  int json = 0;
  sim_flag flags[] = {
      {"clients", SIM_FLAG_UINT, &clients, 1, 100000, 0},
      {"servers", SIM_FLAG_UINT, &servers, 1, 100000, 0},
      {"subset", SIM_FLAG_UINT, &subset, 1, 100000, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                          kUsage);
  if (rc) return rc;
  /* Mesh apertures hold every server: bound the work. */
  if ((double)clients * servers > 5e7)
    return io_sim_args_fail(argv[0], kUsage,
                         "--clients x --servers = %.0f exceeds 50,000,000",
                         (double)clients * servers);

  ap_error err;
  ap_ring *ring = NULL;
  double totals[SIM_NUM_MODES] = {0};
  rc = ap_ring_create(NULL, servers, &ring, &err);
  for (int m = 0; rc == AP_OK && m < SIM_NUM_MODES; m++) {
    size_t members = 0;
    rc = io_sim_service_accumulate(ring, io_sim_modes[m], clients, subset, 0, 1.0,
                                NULL, NULL, &members, &err);
    totals[m] = (double)members;
  }
  ap_ring_destroy(ring);
  if (rc != AP_OK) {
    fprintf(stderr, "sim connections: %s\n", err.message);
    return SIM_EXIT_FAIL;
  }
  uint32_t logical = subset < servers ? subset : servers;
  double mesh = (double)clients * servers;
  double nominal = (double)clients * logical;
  if (json) {
    printf("{\"clients\":%u,\"servers\":%u,\"subset\":%u,\"mesh\":%.0f,"
           "\"aperture\":%.0f,\"nominal\":%.0f,\"modes\":[",
           clients, servers, subset, mesh, totals[0], nominal);
    for (int m = 0; m < SIM_NUM_MODES; m++)
      printf("%s{\"mode\":\"%s\",\"connections\":%.0f,\"per_client\":%.6g}",
             m ? "," : "", ap_mode_name(io_sim_modes[m]), totals[m],
             totals[m] / clients);
    printf("]}\n");
    return SIM_EXIT_OK;
  }
  printf("%u clients x %u servers, subset (min aperture) %u\n\n", clients,
         servers, subset);
  printf("  full mesh (clients x servers)   %12.0f\n", mesh);
  printf("  aperture  (clients x subset)    %12.0f   (%.1fx fewer)\n",
         nominal, mesh / nominal);
  printf("\n  mode        | connections | per client | vs mesh\n");
  printf("  ------------+-------------+------------+--------\n");
  for (int m = 0; m < SIM_NUM_MODES; m++)
    printf("  %-11s | %11.0f | %10.2f | %6.2f%%\n", ap_mode_name(io_sim_modes[m]),
           totals[m], totals[m] / clients, 100.0 * totals[m] / mesh);
  return SIM_EXIT_OK;
}
