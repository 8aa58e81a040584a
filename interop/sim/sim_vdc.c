/* sim vdc: the first K binary Van der Corput values (ap_vdc). */
#include <stdio.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "policy/core/ring/ap_vdc.h"

static const char kUsage[] = "sim vdc --count K [--json]   (K in [1, 100000])";

int io_sim_verb_vdc(int argc, char **argv) {
  uint32_t count = 0;
  int json = 0;
  sim_flag flags[] = {
      {"count", SIM_FLAG_UINT, &count, 1, 100000, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                          kUsage);
  if (rc) return rc;
  if (!flags[0].seen) return io_sim_args_fail(argv[0], kUsage, "--count is required");
  if (json) {
    printf("{\"values\":[");
    for (uint32_t i = 0; i < count; i++)
      printf("%s%.17g", i ? "," : "", ap_vdc(i));
    printf("]}\n");
    return SIM_EXIT_OK;
  }
  printf("      i | binary (reversed)          | vdc(i)\n");
  printf("  ------+----------------------------+-----------\n");
  for (uint32_t i = 0; i < count; i++) {
    char bits[33];
    int n = 0;
    /* Digits after the binary point: i's bits, lowest first. */
    for (uint32_t x = i; x != 0 && n < 32; x >>= 1) bits[n++] = (char)('0' + (x & 1));
    bits[n] = '\0';
    printf("  %5u | 0.%-25s | %.9f\n", i, n ? bits : "0", ap_vdc(i));
  }
  return SIM_EXIT_OK;
}
