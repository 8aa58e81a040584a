/* Small helpers for the interop programs' command lines. Every parser names
 * the flag in its error message (written to stderr). */
#ifndef APERTURE_INTEROP_FLAGS_H
#define APERTURE_INTEROP_FLAGS_H

#include <stddef.h>

/* If argv[*i] is `--name=value` or `--name value`, stores the value in *out,
 * advances *i past a separate value and returns 1. Returns 0 when argv[*i]
 * is another flag, -1 when the value is missing. */
int io_flag_match(int argc, char **argv, int *i, const char *name, const char **out);

/* Parses a decimal integer in [min, max] for flag `name`. Returns 0 or -1
 * (with a message naming the flag). */
int io_flag_long(const char *name, const char *value, long min, long max, long *out);

/* Parses a decimal floating point number in [min, max]. Returns 0 or -1. */
int io_flag_double(const char *name, const char *value, double min, double max, double *out);

/* One flag of a program's table: its value is stored through `value`
 * (long*, double* or const char** pointing into argv). */
typedef enum flag_kind { FLAG_LONG, FLAG_DOUBLE, FLAG_STRING } flag_kind;

typedef struct flag_spec {
  const char *name; /* without the leading "--" */
  flag_kind kind;
  void *value;
  double min, max; /* accepted range of FLAG_LONG and FLAG_DOUBLE */
} flag_spec;

/* Matches argv[*i] against every spec (as io_flag_match) and parses its value
 * (io_flag_long, io_flag_double). Returns 1 when a spec matched and its value is
 * stored, 0 when none matched, -1 on a missing or bad value (message
 * printed) or a NULL argument. */
int io_flag_parse_one(int argc, char **argv, int *i, const flag_spec *specs, size_t n);

#endif
