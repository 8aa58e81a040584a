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
