/*
 * sim_args: the simulator verbs' command lines on the common flag parser
 * (interop/common/flags.h): strict `--name value` or `--name=value`, every
 * number range-checked, every error naming the flag and followed by the
 * verb's usage.
 */
#ifndef APERTURE_INTEROP_SIM_ARGS_H
#define APERTURE_INTEROP_SIM_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "interop/common/flags.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The simulator's names for the common parser's table (interop/common/flags.h). */
#define SIM_LIST_MAX FLAG_LIST_MAX

typedef flag_kind sim_flag_kind;
#define SIM_FLAG_UINT FLAG_UINT32         /* value: uint32_t*, range [min, max] */
#define SIM_FLAG_DOUBLE FLAG_DOUBLE       /* value: double*, finite, range [min, max] */
#define SIM_FLAG_STRING FLAG_STRING       /* value: const char** (points into argv) */
#define SIM_FLAG_BOOL FLAG_BOOL           /* value: int*, set to 1; takes no value */
#define SIM_FLAG_LIST FLAG_UINT32_LIST    /* value: sim_list*, comma-separated uints */
#define SIM_FLAG_DLIST FLAG_DOUBLE_LIST   /* value: sim_dlist*, comma-separated doubles */

typedef flag_uint_list sim_list;
typedef flag_double_list sim_dlist;

/* {name, kind, value, min, max, seen}: `seen` is set to 1 by
 * io_sim_args_parse when the flag is given. */
typedef flag_spec sim_flag;

/* Parses argv[1..argc) (argv[0] is the verb) into `flags`. On any error
 * prints "sim VERB: --flag: what is wrong" and `usage` to stderr and returns
 * SIM_EXIT_USAGE; returns 0 on success. */
int io_sim_args_parse(int argc, char **argv, sim_flag *flags, size_t nflags,
                   const char *usage);

/* Prints "sim VERB: message" and `usage` to stderr; returns SIM_EXIT_USAGE.
 * For errors found after parsing (conflicting or missing flags). */
int io_sim_args_fail(const char *verb, const char *usage, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The flags of a verb that runs one point and a worst-case grid (churn,
 * peers): --servers, --clients, --min-aperture, --no-grid, --grid-servers
 * LO,HI, --grid-clients LO,HI, --grid-step, --grid-positions, --json. */
typedef struct sim_grid_args {
  uint32_t servers, clients, min_aperture;
  int no_grid, json;
  sim_list grid_servers, grid_clients;
  uint32_t grid_step, grid_positions;
} sim_grid_args;

/* A verb's ranges for those flags (each from its min to its max; the
 * others: --clients and --grid-clients from 1, --min-aperture from 1,
 * --grid-step 1..1000, --grid-positions 1..64). */
typedef struct sim_grid_limits {
  uint32_t servers_min, servers_max, clients_max, min_aperture_max;
  uint32_t grid_servers_min, grid_servers_max, grid_clients_max;
} sim_grid_limits;

/* Parses those flags into *a, which holds the verb's defaults on entry,
 * within `lim`, then checks that each grid list is LO,HI with LO <= HI.
 * Returns 0, or SIM_EXIT_USAGE after printing the error and `usage` (as
 * io_sim_args_parse does). */
int io_sim_grid_args_parse(int argc, char **argv, const sim_grid_limits *lim,
                           const char *usage, sim_grid_args *a);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_SIM_ARGS_H */
