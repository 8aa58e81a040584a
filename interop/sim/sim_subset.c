/*
 * sim subset: one client's aperture. With --peers/--index it is the client
 * coordinate (any mode); with --offset/--width an explicit continuous
 * window. Prints every member in ring order from the window's start.
 */
#include <stdio.h>
#include <stdlib.h>

#include "interop/sim/sim.h"
#include "interop/sim/sim_args.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ring/ap_ring.h"
#include "interop/common/sessions.h"

static const char kUsage[] =
    "sim subset --servers N (--peers C --index I | --offset O --width W) "
    "[--min-aperture A] [--mode continuous|discrete|random|vdc|mesh|smooth|stable] "
    "[--seed S] [--json]";

static void print_table(const ap_aperture *a, uint32_t servers) {
  printf("mode %s, %u servers, logical aperture %u\n",
         ap_mode_name(ap_aperture_mode(a)), servers, ap_aperture_logical(a));
  printf("offset %.6f  width %.6f  physical aperture %zu\n",
         ap_aperture_offset(a), ap_aperture_width(a), ap_aperture_count(a));
  printf("\n  ring index | intersection | pick weight\n");
  printf("  -----------+--------------+------------\n");
  for (size_t k = 0; k < ap_aperture_count(a); k++) {
    const ap_member *m = ap_aperture_member(a, k);
    printf("  %10u | %12.6f | %11.6f\n", m->index, m->intersection,
           m->pick_weight);
  }
}

static void print_json(const ap_aperture *a) {
  printf("{\"mode\":\"%s\",\"offset\":%.15g,\"width\":%.15g,\"logical\":%u,"
         "\"endpoints\":[",
         ap_mode_name(ap_aperture_mode(a)), ap_aperture_offset(a),
         ap_aperture_width(a), ap_aperture_logical(a));
  for (size_t k = 0; k < ap_aperture_count(a); k++) {
    const ap_member *m = ap_aperture_member(a, k);
    printf("%s{\"index\":%u,\"weight\":%.15g,\"pick_weight\":%.15g}",
           k ? "," : "", m->index, m->intersection, m->pick_weight);
  }
  printf("]}\n");
}

int io_sim_verb_subset(int argc, char **argv) {
  uint32_t servers = 0, peers = 0, index = 0, seed = 0;
  uint32_t min_aperture = AP_DEFAULT_MIN_APERTURE;
  double offset = 0, width = 0;
  const char *mode_name = "continuous";
  int json = 0;
  sim_flag flags[] = {
      {"servers", SIM_FLAG_UINT, &servers, 1, 100000, 0},
      {"peers", SIM_FLAG_UINT, &peers, 1, AP_MAX_PEERS, 0},
      {"index", SIM_FLAG_UINT, &index, 0, AP_MAX_PEERS - 1, 0},
      {"offset", SIM_FLAG_DOUBLE, &offset, 0, 1, 0},
      {"width", SIM_FLAG_DOUBLE, &width, 0, 1, 0},
      {"min-aperture", SIM_FLAG_UINT, &min_aperture, 1, AP_MAX_PEERS, 0},
      {"mode", SIM_FLAG_STRING, &mode_name, 0, 0, 0},
      {"seed", SIM_FLAG_UINT, &seed, 0, 4294967295.0, 0},
      {"json", SIM_FLAG_BOOL, &json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                          kUsage);
  if (rc) return rc;
  const char *verb = argv[0];
  int coord = flags[1].seen || flags[2].seen;
  int window = flags[3].seen || flags[4].seen;
  if (!flags[0].seen) return io_sim_args_fail(verb, kUsage, "--servers is required");
  if (coord == window)
    return io_sim_args_fail(verb, kUsage,
                         "give either --peers and --index, or --offset and "
                         "--width");
  if (coord && !(flags[1].seen && flags[2].seen))
    return io_sim_args_fail(verb, kUsage, "--peers and --index go together");
  if (window && !(flags[3].seen && flags[4].seen))
    return io_sim_args_fail(verb, kUsage, "--offset and --width go together");
  if (coord && index >= peers)
    return io_sim_args_fail(verb, kUsage,
                         "--index %u must be below --peers %u", index, peers);
  if (window && offset >= 1.0)
    return io_sim_args_fail(verb, kUsage, "--offset must be in [0, 1), got %g",
                         offset);
  if (window && width <= 0.0)
    return io_sim_args_fail(verb, kUsage, "--width must be in (0, 1], got %g",
                         width);
  ap_error err;
  ap_mode mode;
  if (ap_mode_parse(mode_name, &mode, &err) != AP_OK)
    return io_sim_args_fail(verb, kUsage, "--mode: %s", err.message);
  if (window && flags[6].seen && mode != AP_MODE_CONTINUOUS)
    return io_sim_args_fail(verb, kUsage,
                         "--offset/--width give a continuous window; --mode "
                         "%s needs --peers/--index",
                         mode_name);

  ap_ring *ring = NULL;
  ap_aperture *a = NULL;
  rc = ap_ring_create(NULL, servers, &ring, &err);
  if (rc == AP_OK) {
    if (coord) {
      /* The service input (stable's plan), keyed by ordinals as everywhere
       * in the simulator. */
      ap_subset_params p;
      ap_stable_plan *plan = NULL;
      uint64_t *ekeys = io_ordinal_keys(NULL, servers);
      uint64_t *ckeys = io_ordinal_keys(NULL, peers);
      rc = ap_subset_params_for_client(mode, index, peers, min_aperture, seed,
                                       &p, &err);
      if (rc == AP_OK && (ekeys == NULL || ckeys == NULL))
        rc = ap_error_set(&err, AP_ENOMEM, "out of memory");
      if (rc == AP_OK)
        rc = io_service_plan_create((int)mode, servers, ekeys, NULL, peers, ckeys, min_aperture,
                                    &plan, &err);
      p.stable_plan = plan;
      if (rc == AP_OK) rc = ap_aperture_compute(ring, &p, &a, &err);
      ap_stable_plan_destroy(plan);
      free(ekeys);
      free(ckeys);
    } else {
      rc = ap_aperture_from_window(ring, offset, width, &a, &err);
    }
  }
  if (rc != AP_OK) {
    ap_ring_destroy(ring);
    /* The flags were checked above, so the core refusing them is a range
     * the simulator does not know about: still the caller's input. */
    fprintf(stderr, "sim subset: %s\n", err.message);
    return rc == AP_ENOMEM ? SIM_EXIT_FAIL : SIM_EXIT_USAGE;
  }
  if (json)
    print_json(a);
  else
    print_table(a, servers);
  ap_aperture_destroy(a);
  ap_ring_destroy(ring);
  return SIM_EXIT_OK;
}
