#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "interop/common/flags.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whole-string decimal integer in [min, max]; a sign only where the range
 * holds negatives, no blanks, no trailing text. */
static int parse_integer(const char *s, double min, double max, long long *out) {
  if (s == NULL) return -1;
  const char *digits = (s[0] == '-' && min < 0) ? s + 1 : s;
  if (*digits < '0' || *digits > '9') return -1;
  errno = 0;
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0') return -1;
  if ((double)v < min || (double)v > max) return -1;
  *out = v;
  return 0;
}

static int parse_number(const char *s, double min, double max, double *out) {
  if (s == NULL || *s == '\0') return -1;
  errno = 0;
  char *end = NULL;
  double v = strtod(s, &end);
  /* ERANGE on underflow (a subnormal like 1e-320) still gives a usable
   * value; on overflow v is infinite and rejected below. */
  if ((errno != 0 && errno != ERANGE) || *end != '\0' || !isfinite(v)) return -1;
  if (v < min || v > max) return -1;
  *out = v;
  return 0;
}

/* Comma-separated list; empty items ("1,,2") are rejected. */
static int parse_list(const flag_spec *f, const char *s) {
  char buf[1024];
  if (s == NULL || *s == '\0' || strlen(s) >= sizeof buf) return -1;
  strcpy(buf, s);
  if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,")) return -1;
  size_t n = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
    if (n == FLAG_LIST_MAX) return -1;
    if (f->kind == FLAG_UINT32_LIST) {
      long long v;
      if (parse_integer(tok, f->min, f->max, &v) != 0) return -1;
      ((flag_uint_list *)f->value)->v[n] = (uint32_t)v;
    } else {
      if (parse_number(tok, f->min, f->max, &((flag_double_list *)f->value)->v[n]) != 0) return -1;
    }
    n++;
  }
  if (f->kind == FLAG_UINT32_LIST)
    ((flag_uint_list *)f->value)->n = n;
  else
    ((flag_double_list *)f->value)->n = n;
  return 0;
}

/* Parses `value` for `f` and stores it; prints nothing. 0 or -1. */
static int parse_value(const flag_spec *f, const char *value) {
  if (f == NULL || f->value == NULL || value == NULL) return -1;
  long long v;
  switch (f->kind) {
    case FLAG_LONG:
      if (parse_integer(value, f->min, f->max, &v) != 0) return -1;
      *(long *)f->value = (long)v;
      return 0;
    case FLAG_UINT32:
      if (f->min < 0 || parse_integer(value, f->min, f->max, &v) != 0) return -1;
      *(uint32_t *)f->value = (uint32_t)v;
      return 0;
    case FLAG_DOUBLE:
      return parse_number(value, f->min, f->max, f->value);
    case FLAG_STRING:
      *(const char **)f->value = value;
      return 0;
    case FLAG_UINT32_LIST:
    case FLAG_DOUBLE_LIST:
      return parse_list(f, value);
    case FLAG_BOOL:
      return -1; /* takes no value */
  }
  return -1;
}

/* What `f` accepts ("an integer in [1, 10]"), written into buf. */
static const char *expectation(const flag_spec *f, char *buf, size_t len) {
  switch (f->kind) {
    case FLAG_LONG:
    case FLAG_UINT32:
      snprintf(buf, len, "an integer in [%.0f, %.0f]", f->min, f->max);
      break;
    case FLAG_DOUBLE:
      snprintf(buf, len, "a number in [%g, %g]", f->min, f->max);
      break;
    case FLAG_UINT32_LIST:
      snprintf(buf, len, "a comma-separated list of up to %d integers in [%.0f, %.0f]",
               FLAG_LIST_MAX, f->min, f->max);
      break;
    case FLAG_DOUBLE_LIST:
      snprintf(buf, len, "a comma-separated list of up to %d numbers in [%g, %g]", FLAG_LIST_MAX,
               f->min, f->max);
      break;
    default:
      snprintf(buf, len, "a value");
  }
  return buf;
}

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
  const flag_spec f = {name, FLAG_LONG, out, (double)min, (double)max, 0};
  if (parse_value(&f, value) != 0) {
    fprintf(stderr, "flag --%s: '%s' is not an integer in [%ld, %ld]\n", name, value, min, max);
    return -1;
  }
  return 0;
}

int io_flag_double(const char *name, const char *value, double min, double max, double *out) {
  const flag_spec f = {name, FLAG_DOUBLE, out, min, max, 0};
  if (parse_value(&f, value) != 0) {
    fprintf(stderr, "flag --%s: '%s' is not a number in [%g, %g]\n", name, value, min, max);
    return -1;
  }
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
      default:
        if (parse_value(f, v) == 0) return 1;
        {
          char want[160];
          fprintf(stderr, "flag --%s: '%s' is not %s\n", f->name, v,
                  expectation(f, want, sizeof want));
        }
        return -1;
    }
  }
  return 0;
}

int io_flag_parse_all(int argc, char **argv, int first, flag_spec *specs, size_t n, char *err,
                      size_t err_len) {
  if (argv == NULL || specs == NULL || err == NULL || err_len == 0) return -1;
  err[0] = '\0';
  for (int i = first; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      snprintf(err, err_len, "help requested");
      return -1;
    }
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
      snprintf(err, err_len, "unexpected argument '%s'", arg);
      return -1;
    }
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    flag_spec *f = NULL;
    for (size_t k = 0; k < n && f == NULL; k++) {
      if (strlen(specs[k].name) == name_len && strncmp(specs[k].name, name, name_len) == 0)
        f = &specs[k];
    }
    if (f == NULL) {
      snprintf(err, err_len, "unknown flag --%.*s", (int)name_len, name);
      return -1;
    }
    if (f->seen) {
      snprintf(err, err_len, "--%s given twice", f->name);
      return -1;
    }
    f->seen = 1;
    if (f->kind == FLAG_BOOL) {
      if (eq != NULL) {
        snprintf(err, err_len, "--%s takes no value", f->name);
        return -1;
      }
      *(int *)f->value = 1;
      continue;
    }
    const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
    if (val == NULL) {
      snprintf(err, err_len, "--%s needs a value", f->name);
      return -1;
    }
    if (parse_value(f, val) != 0) {
      char want[160];
      snprintf(err, err_len, "--%s: expected %s, got '%s'", f->name,
               expectation(f, want, sizeof want), val);
      return -1;
    }
  }
  return 0;
}
