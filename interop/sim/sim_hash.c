/*
 * sim hash: the consistent-hash ring (ap_hash_ring) used for request
 * affinity. For each vnode count: each member's share of a fixed key set
 * ("key-0".."key-(K-1)") against its weight share, and the fraction of keys
 * that move when a member joins (weight 1, named "joiner") or when member 0
 * leaves, against the ideal (the joiner's / leaver's weight share).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "policy/core/ap_hash.h"
#include "policy/affinity/ap_hash_ring.h"

static const char kUsage[] =
    "sim hash [--weights 1,2,1,1,1] [--vnodes 1,10,100,1000,10000] [--keys 100000] "
    "[--json]";

#define MAX_MEMBERS (SIM_LIST_MAX + 1)

typedef struct hash_row {
  uint32_t vnodes;
  double key_share[MAX_MEMBERS]; /* fraction of keys per member */
  double ring_share[MAX_MEMBERS];
  double worst_rel_error; /* max |key share / weight share - 1| */
  double moved_add, moved_remove;
} hash_row;

static int build(const char **names, const double *w, size_t n, uint32_t v,
                 ap_hash_ring **out, ap_error *err) {
  return ap_hash_ring_create(names, w, n, v, out, err);
}

static int measure(const char **names, const double *w, size_t n, uint32_t v,
                   const uint64_t *keys, uint32_t nkeys, hash_row *row,
                   ap_error *err) {
  ap_hash_ring *base = NULL, *grown = NULL, *shrunk = NULL;
  /* Member 0 leaves: the remaining members keep their names and weights. */
  int rc = build(names, w, n, v, &base, err);
  if (rc == AP_OK) rc = build(names, w, n + 1, v, &grown, err);
  if (rc == AP_OK && n > 1) rc = build(names + 1, w + 1, n - 1, v, &shrunk, err);
  if (rc == AP_OK) {
    double wsum = 0;
    for (size_t m = 0; m < n; m++) wsum += w[m];
    size_t hits[MAX_MEMBERS] = {0};
    size_t moved_add = 0, moved_remove = 0;
    for (uint32_t k = 0; k < nkeys; k++) {
      size_t owner = ap_hash_ring_lookup(base, keys[k]);
      hits[owner]++;
      if (ap_hash_ring_lookup(grown, keys[k]) != owner) moved_add++;
      if (shrunk && ap_hash_ring_lookup(shrunk, keys[k]) + 1 != owner)
        moved_remove++;
    }
    row->vnodes = v;
    row->worst_rel_error = 0;
    for (size_t m = 0; m < n; m++) {
      row->key_share[m] = (double)hits[m] / nkeys;
      row->ring_share[m] = ap_hash_ring_share(base, m);
      double rel = fabs(row->key_share[m] / (w[m] / wsum) - 1);
      if (rel > row->worst_rel_error) row->worst_rel_error = rel;
    }
    row->moved_add = (double)moved_add / nkeys;
    row->moved_remove = shrunk ? (double)moved_remove / nkeys : 1.0;
  }
  ap_hash_ring_destroy(base);
  ap_hash_ring_destroy(grown);
  ap_hash_ring_destroy(shrunk);
  return rc;
}

int io_sim_verb_hash(int argc, char **argv) {
  sim_dlist weights = {{1, 2, 1, 1, 1}, 5};
  sim_list vnodes = {{1, 10, 100, 1000, 10000}, 5};
  uint32_t nkeys = 100000;
  int json = 0;
  sim_flag flags[] = {
      {"weights", SIM_FLAG_DLIST, &weights, 0.001, 1000, 0},
      {"vnodes", SIM_FLAG_LIST, &vnodes, 1, 10000, 0},
      {"keys", SIM_FLAG_UINT, &nkeys, 1, 10000000, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                          kUsage);
  if (rc) return rc;
  size_t n = weights.n;
  double w[MAX_MEMBERS];
  double wsum = 0, wmax = 0;
  for (size_t m = 0; m < n; m++) {
    w[m] = weights.v[m];
    wsum += w[m];
    if (w[m] > wmax) wmax = w[m];
  }
  w[n] = 1.0; /* the joiner */
  for (size_t i = 0; i < vnodes.n; i++) {
    if ((wsum + 1) * vnodes.v[i] > 2e6 || wmax * vnodes.v[i] > 2e6)
      return io_sim_args_fail(argv[0], kUsage,
                           "--weights x --vnodes %u makes more than "
                           "2,000,000 ring points",
                           vnodes.v[i]);
  }
  char name_buf[MAX_MEMBERS][16];
  const char *names[MAX_MEMBERS];
  for (size_t m = 0; m < n; m++) {
    snprintf(name_buf[m], sizeof name_buf[m], "member-%zu", m);
    names[m] = name_buf[m];
  }
  names[n] = "joiner";
  uint64_t *keys = malloc((size_t)nkeys * sizeof *keys);
  hash_row *rows = calloc(vnodes.n, sizeof *rows);
  if (keys == NULL || rows == NULL) {
    free(keys);
    free(rows);
    fprintf(stderr, "sim hash: out of memory\n");
    return SIM_EXIT_FAIL;
  }
  for (uint32_t k = 0; k < nkeys; k++) {
    char key[24];
    snprintf(key, sizeof key, "key-%u", k);
    keys[k] = ap_hash_str(key, 0);
  }
  ap_error err;
  for (size_t i = 0; i < vnodes.n && rc == AP_OK; i++)
    rc = measure(names, w, n, vnodes.v[i], keys, nkeys, &rows[i], &err);
  free(keys);
  if (rc != AP_OK) {
    free(rows);
    fprintf(stderr, "sim hash: %s\n", err.message);
    return SIM_EXIT_FAIL;
  }
  double ideal_add = 1.0 / (wsum + 1), ideal_remove = w[0] / wsum;
  if (json) {
    printf("{\"keys\":%u,\"weights\":[", nkeys);
    for (size_t m = 0; m < n; m++) printf("%s%.15g", m ? "," : "", w[m]);
    printf("],\"ideal_moved_add\":%.15g,\"ideal_moved_remove\":%.15g,"
           "\"rows\":[",
           ideal_add, ideal_remove);
    for (size_t i = 0; i < vnodes.n; i++) {
      printf("%s{\"vnodes\":%u,\"key_share\":[", i ? "," : "", rows[i].vnodes);
      for (size_t m = 0; m < n; m++)
        printf("%s%.15g", m ? "," : "", rows[i].key_share[m]);
      printf("],\"ring_share\":[");
      for (size_t m = 0; m < n; m++)
        printf("%s%.15g", m ? "," : "", rows[i].ring_share[m]);
      printf("],\"worst_rel_error\":%.15g,\"moved_add\":%.15g,"
             "\"moved_remove\":%.15g}",
             rows[i].worst_rel_error, rows[i].moved_add, rows[i].moved_remove);
    }
    printf("]}\n");
    free(rows);
    return SIM_EXIT_OK;
  }
  printf("%zu members, %u fixed keys; vnodes = ring points per unit of "
         "weight.\n\n  key share per member (weight share in the header)\n",
         n, nkeys);
  printf("  vnodes |");
  for (size_t m = 0; m < n; m++) {
    char head[32];
    snprintf(head, sizeof head, "m%zu (w%g)", m, w[m]);
    printf(" %9s |", head);
  }
  printf(" %15s | %12s | %15s\n", "worst |s/w - 1|", "moved on add",
         "moved on remove");
  printf("  ideal  |");
  for (size_t m = 0; m < n; m++) printf(" %8.2f%% |", 100 * w[m] / wsum);
  printf(" %14.2f%% | %11.2f%% | %14.2f%%\n", 0.0, 100 * ideal_add,
         100 * ideal_remove);
  for (size_t i = 0; i < vnodes.n; i++) {
    printf("  %6u |", rows[i].vnodes);
    for (size_t m = 0; m < n; m++)
      printf(" %8.2f%% |", 100 * rows[i].key_share[m]);
    printf(" %14.2f%% | %11.2f%% | %14.2f%%\n", 100 * rows[i].worst_rel_error,
           100 * rows[i].moved_add, 100 * rows[i].moved_remove);
  }
  printf("\n  add: a weight-1 member joins; remove: member 0 leaves. Only "
         "the joiner's/leaver's keys move.\n");
  free(rows);
  return SIM_EXIT_OK;
}
