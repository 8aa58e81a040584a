/* The one command-line flag parser of the interop programs and the
 * simulator. Flags are `--name value` or `--name=value`; numbers are parsed
 * whole (no trailing text) and range-checked; every error names the flag. */
#ifndef APERTURE_INTEROP_FLAGS_H
#define APERTURE_INTEROP_FLAGS_H

#include <stddef.h>
#include <stdint.h>

/* If argv[*i] is `--name=value` or `--name value`, stores the value in *out,
 * advances *i past a separate value and returns 1. Returns 0 when argv[*i]
 * is another flag, -1 when the value is missing (message on stderr). */
int io_flag_match(int argc, char **argv, int *i, const char *name, const char **out);

/* Parses a decimal integer in [min, max] for flag `name`. Returns 0 or -1
 * (with a message naming the flag on stderr). */
int io_flag_long(const char *name, const char *value, long min, long max, long *out);

/* Parses a finite decimal floating point number in [min, max]. Returns 0 or
 * -1 (message on stderr). */
int io_flag_double(const char *name, const char *value, double min, double max, double *out);

#define FLAG_LIST_MAX 64

/* Comma-separated values of a FLAG_UINT32_LIST / FLAG_DOUBLE_LIST flag. */
typedef struct flag_uint_list {
  uint32_t v[FLAG_LIST_MAX];
  size_t n;
} flag_uint_list;

typedef struct flag_double_list {
  double v[FLAG_LIST_MAX];
  size_t n;
} flag_double_list;

/* What a flag's `value` points to. */
typedef enum flag_kind {
  FLAG_LONG,        /* long*: integer in [min, max] */
  FLAG_DOUBLE,      /* double*: finite number in [min, max] */
  FLAG_STRING,      /* const char**: points into argv */
  FLAG_UINT32,      /* uint32_t*: unsigned integer in [min, max] */
  FLAG_BOOL,        /* int*: set to 1; the flag takes no value */
  FLAG_UINT32_LIST, /* flag_uint_list*: items in [min, max] */
  FLAG_DOUBLE_LIST  /* flag_double_list*: items in [min, max] */
} flag_kind;

/* One flag of a program's table. */
typedef struct flag_spec {
  const char *name; /* without the leading "--" */
  flag_kind kind;
  void *value;
  double min, max; /* accepted range of numbers (list items included) */
  int seen;        /* set to 1 by io_flag_parse_all when given */
} flag_spec;

/* Matches argv[*i] against every spec (as io_flag_match) and parses its
 * value. Returns 1 when a spec matched and its value is stored, 0 when none
 * matched, -1 on a missing or bad value ("flag --NAME: ..." on stderr) or a
 * NULL argument. For programs that also match flags by hand. */
int io_flag_parse_one(int argc, char **argv, int *i, const flag_spec *specs, size_t n);

/* Parses all of argv[first..argc) strictly against `specs`: every argument
 * must be a known flag given at most once. Returns 0, or -1 with the reason
 * ("unknown flag --x", "--n: expected ..., got 'v'", "help requested" for
 * --help or -h) in err[0..err_len). */
int io_flag_parse_all(int argc, char **argv, int first, flag_spec *specs, size_t n, char *err,
                      size_t err_len);

#endif
