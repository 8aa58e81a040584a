/* The fleet runner's command line (fleet.c): the flags every scenario
 * reads (fleet_args) and the runner's own (--json, --svg, --network,
 * --scenario, --out-dir), checked before any process starts. */
#ifndef APERTURE_INTEROP_FLEET_FLAGS_H
#define APERTURE_INTEROP_FLEET_FLAGS_H

#include <stddef.h>

#include "interop/fleet/fleet_scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fleet_cli {
  fleet_args a;         /* what the scenarios read; defaults kept */
  int json;             /* --json */
  const char *svg_path; /* --svg; NULL: fleet.svg in the working directory */
  const char *network;  /* --network: "loopback" or "netns"; NULL: loopback */
  const char *scenario; /* --scenario; NULL: the default run */
  const char *out_dir;  /* --out-dir; NULL: a fresh temporary directory */
} fleet_cli;

/* Prints the usage to stderr, listing the scenarios names[0..n). */
void io_fleet_usage(const char *const *names, size_t n);

/* Reads argv into *cli (fields not given keep their values). Returns -1 to
 * go on, else the exit status: 0 after --help, 2 on a usage error (a bad
 * flag or value, an unknown mode or network), having printed why and the
 * usage. The scenario name is checked by the caller, against names. */
int io_fleet_parse_flags(int argc, char **argv, const char *const *names, size_t n,
                         fleet_cli *cli);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_FLEET_FLAGS_H */
