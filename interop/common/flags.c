#include "interop/common/flags.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int io_flag_match(int argc, char **argv, int *i, const char *name, const char **out) {
  const char *arg = argv[*i];
  if (arg[0] != '-' || arg[1] != '-') return 0;
  size_t n = strlen(name);
  if (strncmp(arg + 2, name, n) != 0) return 0;
  if (arg[2 + n] == '=') {
    *out = arg + 3 + n;
    return 1;
  }
  if (arg[2 + n] != '\0') return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "flag --%s: missing value\n", name);
    return -1;
  }
  *i += 1;
  *out = argv[*i];
  return 1;
}

int io_flag_long(const char *name, const char *value, long min, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < min || v > max) {
    fprintf(stderr, "flag --%s: '%s' is not an integer in [%ld, %ld]\n", name, value, min, max);
    return -1;
  }
  *out = v;
  return 0;
}

int io_flag_double(const char *name, const char *value, double min, double max, double *out) {
  char *end;
  errno = 0;
  double v = strtod(value, &end);
  if (errno != 0 || end == value || *end != '\0' || !(v >= min && v <= max)) {
    fprintf(stderr, "flag --%s: '%s' is not a number in [%g, %g]\n", name, value, min, max);
    return -1;
  }
  *out = v;
  return 0;
}

int io_flag_parse_one(int argc, char **argv, int *i, const flag_spec *specs, size_t n) {
  if (argv == NULL || i == NULL || specs == NULL || *i < 0 || *i >= argc) return -1;
  for (size_t k = 0; k < n; k++) {
    const flag_spec *f = &specs[k];
    const char *v;
    int r = io_flag_match(argc, argv, i, f->name, &v);
    if (r == 0) continue;
    if (r < 0) return -1;
    switch (f->kind) {
      case FLAG_LONG:
        return io_flag_long(f->name, v, (long)f->min, (long)f->max, f->value) == 0 ? 1 : -1;
      case FLAG_DOUBLE:
        return io_flag_double(f->name, v, f->min, f->max, f->value) == 0 ? 1 : -1;
      case FLAG_STRING:
        *(const char **)f->value = v;
        return 1;
    }
    return -1;
  }
  return 0;
}
