/* sim_args: the verbs' flags on the common parser (see sim_args.h). */
#include "interop/sim/sim_args.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/sim/sim.h"

int io_sim_args_fail(const char *verb, const char *usage, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "sim %s: ", verb);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n\nusage: %s\n", usage);
  va_end(ap);
  return SIM_EXIT_USAGE;
}

int io_sim_args_parse(int argc, char **argv, sim_flag *flags, size_t nflags, const char *usage) {
  /* The message quotes one argument at most, so it fits in their total. */
  size_t len = 256;
  for (int i = 1; i < argc; i++) len += strlen(argv[i]);
  char *err = malloc(len);
  if (err == NULL) return io_sim_args_fail(argv[0], usage, "out of memory");
  int rc = 0;
  if (io_flag_parse_all(argc, argv, 1, flags, nflags, err, len) != 0)
    rc = io_sim_args_fail(argv[0], usage, "%s", err);
  free(err);
  return rc;
}

int io_sim_grid_args_parse(int argc, char **argv, const sim_grid_limits *lim,
                           const char *usage, sim_grid_args *a) {
  if (argc < 1 || argv == NULL || lim == NULL || a == NULL)
    return io_sim_args_fail(argc >= 1 && argv ? argv[0] : "?", usage ? usage : "",
                            "bad arguments to the flag parser");
  sim_flag flags[] = {
      {"servers", SIM_FLAG_UINT, &a->servers, lim->servers_min, lim->servers_max, 0},
      {"clients", SIM_FLAG_UINT, &a->clients, 1, lim->clients_max, 0},
      {"min-aperture", SIM_FLAG_UINT, &a->min_aperture, 1, lim->min_aperture_max, 0},
      {"no-grid", SIM_FLAG_BOOL, &a->no_grid, 0, 0, 0},
      {"grid-servers", SIM_FLAG_LIST, &a->grid_servers, lim->grid_servers_min,
       lim->grid_servers_max, 0},
      {"grid-clients", SIM_FLAG_LIST, &a->grid_clients, 1, lim->grid_clients_max, 0},
      {"grid-step", SIM_FLAG_UINT, &a->grid_step, 1, 1000, 0},
      {"grid-positions", SIM_FLAG_UINT, &a->grid_positions, 1, 64, 0},
      {"json", SIM_FLAG_BOOL, &a->json, 0, 0, 0},
  };
  int rc = io_sim_args_parse(argc, argv, flags, sizeof flags / sizeof flags[0], usage);
  if (rc) return rc;
  const sim_list *gs = &a->grid_servers, *gc = &a->grid_clients;
  if (gs->n != 2 || gs->v[0] > gs->v[1])
    return io_sim_args_fail(argv[0], usage, "--grid-servers wants LO,HI with LO <= HI");
  if (gc->n != 2 || gc->v[0] > gc->v[1])
    return io_sim_args_fail(argv[0], usage, "--grid-clients wants LO,HI with LO <= HI");
  return 0;
}
