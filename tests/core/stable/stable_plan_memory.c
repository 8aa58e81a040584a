/*
 * Builds one stable plan of N endpoints and C clients (ordinal keys, equal
 * weights, min aperture A) and prints its size and build time; run it
 * under /usr/bin/time -f %M for the build's peak memory (docs/modes.md,
 * "Stable fleet size").
 *   stable_plan_memory N C [A]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "policy/core/stable/ap_stable.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: stable_plan_memory N C [A]\n");
    return 2;
  }
  const size_t n = strtoul(argv[1], NULL, 10), c = strtoul(argv[2], NULL, 10);
  const uint32_t a = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 12u;
  uint64_t *ek = malloc((n ? n : 1) * sizeof(uint64_t));
  uint64_t *ck = malloc((c ? c : 1) * sizeof(uint64_t));
  if (ek == NULL || ck == NULL) return 1;
  for (size_t k = 0; k < n; ++k) ek[k] = ap_stable_ordinal_key(k);
  for (size_t k = 0; k < c; ++k) ck[k] = ap_stable_ordinal_key(1000000 + k);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ap_stable_plan *plan = NULL;
  ap_error err;
  const int rc = ap_stable_plan_create(ek, NULL, n, ck, c, a, &plan, &err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc != AP_OK) {
    fprintf(stderr, "stable_plan_memory: %s\n", err.message);
    return 1;
  }
  size_t sessions = 0;
  for (size_t i = 0; i < c; ++i) sessions += ap_stable_plan_row_size(plan, i);
  printf("endpoints %zu clients %zu min_aperture %u sessions %zu build_s %.2f\n", n, c,
         a, sessions,
         (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
  ap_stable_plan_destroy(plan);
  free(ek);
  free(ck);
  return 0;
}
