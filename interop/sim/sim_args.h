/*
 * sim_args: strict command-line flags for the simulator verbs. Flags are
 * `--name value` or `--name=value`; every number is range-checked and any
 * error names the flag. Nothing is parsed with atoi.
 */
#ifndef APERTURE_INTEROP_SIM_ARGS_H
#define APERTURE_INTEROP_SIM_ARGS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_LIST_MAX 64

typedef enum sim_flag_kind {
  SIM_FLAG_UINT,   /* value: uint32_t*, range [min, max] */
  SIM_FLAG_DOUBLE, /* value: double*, finite, range [min, max] */
  SIM_FLAG_STRING, /* value: const char** (points into argv) */
  SIM_FLAG_BOOL,   /* value: int*, set to 1; takes no value */
  SIM_FLAG_LIST,   /* value: sim_list*, comma-separated uints in [min, max] */
  SIM_FLAG_DLIST   /* value: sim_dlist*, comma-separated doubles in [min, max] */
} sim_flag_kind;

typedef struct sim_list {
  uint32_t v[SIM_LIST_MAX];
  size_t n;
} sim_list;

typedef struct sim_dlist {
  double v[SIM_LIST_MAX];
  size_t n;
} sim_dlist;

typedef struct sim_flag {
  const char *name; /* without the leading "--" */
  sim_flag_kind kind;
  void *value;
  double min, max;  /* accepted range of numbers (list items included) */
  int seen;         /* set to 1 by io_sim_args_parse when given */
} sim_flag;

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

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_SIM_ARGS_H */
