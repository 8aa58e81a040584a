/*
 * sim vnodes: seed 004's table on the core's consistent-hash ring. N nodes
 * with V virtual nodes each; a node's load is its share of the hash space
 * (ap_hash_ring_share: keys are uniform, so load = width owned). Averaged
 * over fixed seeds (seed s names the nodes "seed<s>-node<k>").
 * Columns: imbalance = max/mean, CV = population sd / mean (both averaged
 * over seeds), 1/sqrt(V), CV*sqrt(V), and the formula sqrt((1-1/N)/V).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "interop/sim/sim_model.h"
#include "policy/affinity/ap_hash_ring.h"

static const char kUsage[] =
    "sim vnodes [--nodes 10] [--seeds 20] [--vnodes 1,2,4,16,64,256] [--json]";

typedef struct vnode_row {
  uint32_t v;
  double imbalance, cv, rms_cv;
} vnode_row;

static int measure(uint32_t nodes, uint32_t seeds, uint32_t v, vnode_row *row,
                   ap_error *err) {
  char **names = calloc(nodes, sizeof *names);
  double *share = calloc(nodes, sizeof *share);
  int rc = (names && share) ? AP_OK : ap_error_set(err, AP_ENOMEM, "out of memory");
  double sum_imb = 0, sum_cv = 0, sum_cv2 = 0;
  for (uint32_t s = 0; rc == AP_OK && s < seeds; s++) {
    for (uint32_t k = 0; rc == AP_OK && k < nodes; k++) {
      names[k] = malloc(48);
      if (names[k] == NULL)
        rc = ap_error_set(err, AP_ENOMEM, "out of memory");
      else
        snprintf(names[k], 48, "seed%u-node%u", s, k);
    }
    ap_hash_ring *ring = NULL;
    if (rc == AP_OK)
      rc = ap_hash_ring_create((const char *const *)names, NULL, nodes, v,
                               &ring, err);
    if (rc == AP_OK) {
      for (uint32_t k = 0; k < nodes; k++) share[k] = ap_hash_ring_share(ring, k);
      sim_stats st = io_sim_stats_of(share, nodes);
      sum_imb += st.max_over_mean;
      sum_cv += st.cv;
      sum_cv2 += st.cv * st.cv;
    }
    ap_hash_ring_destroy(ring);
    for (uint32_t k = 0; k < nodes && names; k++) {
      free(names[k]);
      names[k] = NULL;
    }
  }
  free(names);
  free(share);
  row->v = v;
  row->imbalance = sum_imb / seeds;
  row->cv = sum_cv / seeds;
  row->rms_cv = sqrt(sum_cv2 / seeds);
  return rc;
}

int io_sim_verb_vnodes(int argc, char **argv) {
  uint32_t nodes = 10, seeds = 20;
  sim_list vnodes = {{1, 2, 4, 16, 64, 256}, 6};
  int json = 0;
  sim_flag flags[] = {
      {"nodes", SIM_FLAG_UINT, &nodes, 2, 10000, 0},
      {"seeds", SIM_FLAG_UINT, &seeds, 1, 1000, 0},
      {"vnodes", SIM_FLAG_LIST, &vnodes, 1, 4096, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                          kUsage);
  if (rc) return rc;
  double points = 0, widest = 0;
  for (size_t i = 0; i < vnodes.n; i++) {
    points += (double)nodes * seeds * vnodes.v[i];
    if ((double)nodes * vnodes.v[i] > widest) widest = (double)nodes * vnodes.v[i];
  }
  if (widest > 4e6 || points > 5e7)
    return io_sim_args_fail(argv[0], kUsage,
                         "--nodes x --seeds x --vnodes is too large (at most "
                         "4,000,000 points per ring, 50,000,000 in all)");
  vnode_row rows[SIM_LIST_MAX];
  ap_error err;
  for (size_t i = 0; i < vnodes.n; i++) {
    rc = measure(nodes, seeds, vnodes.v[i], &rows[i], &err);
    if (rc != AP_OK) {
      fprintf(stderr, "sim vnodes: %s\n", err.message);
      return SIM_EXIT_FAIL;
    }
  }
  if (json) {
    printf("{\"nodes\":%u,\"seeds\":%u,\"rows\":[", nodes, seeds);
    for (size_t i = 0; i < vnodes.n; i++) {
      double v = rows[i].v;
      printf("%s{\"v\":%u,\"imbalance\":%.15g,\"cv\":%.15g,\"rms_cv\":%.15g,"
             "\"inv_sqrt_v\":%.15g,\"cv_sqrt_v\":%.15g,\"formula\":%.15g}",
             i ? "," : "", rows[i].v, rows[i].imbalance, rows[i].cv,
             rows[i].rms_cv, 1 / sqrt(v), rows[i].cv * sqrt(v),
             sqrt((1 - 1.0 / nodes) / v));
    }
    printf("]}\n");
    return SIM_EXIT_OK;
  }
  printf("%u nodes on the consistent-hash ring; load = share of the hash "
         "space owned.\nAveraged over %u fixed seeds. Fair share per node = "
         "%.1f%%.\n\n",
         nodes, seeds, 100.0 / nodes);
  printf("     V | imbalance max/mean | CV (sd/mean) | 1/sqrt(V) | CV*sqrt(V) "
         "| sqrt((1-1/N)/V) | RMS CV\n");
  printf("  -----+--------------------+--------------+-----------+-----------"
         "-+-----------------+-------\n");
  for (size_t i = 0; i < vnodes.n; i++) {
    double v = rows[i].v;
    printf("  %4u | %18.3f | %12.3f | %9.3f | %10.3f | %15.3f | %6.3f\n",
           rows[i].v, rows[i].imbalance, rows[i].cv, 1 / sqrt(v),
           rows[i].cv * sqrt(v), sqrt((1 - 1.0 / nodes) / v), rows[i].rms_cv);
  }
  return SIM_EXIT_OK;
}
