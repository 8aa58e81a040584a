/* sim_args: strict flag parsing (see sim_args.h). */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "interop/sim/sim_args.h"

#include <errno.h>
#include <math.h>
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

/* Whole-string unsigned integer; rejects signs, blanks and trailing text. */
static int parse_uint(const char *s, double min, double max, uint32_t *out) {
  if (s == NULL || *s < '0' || *s > '9') return -1;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return -1;
  if ((double)v < min || (double)v > max) return -1;
  *out = (uint32_t)v;
  return 0;
}

static int parse_double(const char *s, double min, double max, double *out) {
  if (s == NULL || *s == '\0') return -1;
  errno = 0;
  char *end = NULL;
  double v = strtod(s, &end);
  /* ERANGE on underflow (a subnormal like 1e-320) still gives a usable
   * value; on overflow v is infinite and rejected below. */
  if ((errno != 0 && errno != ERANGE) || *end != '\0' || !isfinite(v))
    return -1;
  if (v < min || v > max) return -1;
  *out = v;
  return 0;
}

/* Comma-separated list, each item parsed by `item`. */
static int parse_list(const char *s, sim_flag *f) {
  char buf[1024];
  if (s == NULL || strlen(s) >= sizeof buf || *s == '\0') return -1;
  strcpy(buf, s);
  size_t n = 0;
  char *save = NULL;
  /* strtok_r would skip empty items ("1,,2"); reject them instead. */
  if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
    return -1;
  for (char *tok = strtok_r(buf, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    if (n == SIM_LIST_MAX) return -1;
    if (f->kind == SIM_FLAG_LIST) {
      sim_list *l = f->value;
      if (parse_uint(tok, f->min, f->max, &l->v[n]) != 0) return -1;
    } else {
      sim_dlist *l = f->value;
      if (parse_double(tok, f->min, f->max, &l->v[n]) != 0) return -1;
    }
    n++;
  }
  if (f->kind == SIM_FLAG_LIST)
    ((sim_list *)f->value)->n = n;
  else
    ((sim_dlist *)f->value)->n = n;
  return 0;
}

static const char *expectation(const sim_flag *f, char *buf, size_t len) {
  switch (f->kind) {
    case SIM_FLAG_UINT:
      snprintf(buf, len, "an integer in [%.0f, %.0f]", f->min, f->max);
      break;
    case SIM_FLAG_DOUBLE:
      snprintf(buf, len, "a number in [%g, %g]", f->min, f->max);
      break;
    case SIM_FLAG_LIST:
      snprintf(buf, len,
               "a comma-separated list of up to %d integers in [%.0f, %.0f]",
               SIM_LIST_MAX, f->min, f->max);
      break;
    case SIM_FLAG_DLIST:
      snprintf(buf, len,
               "a comma-separated list of up to %d numbers in [%g, %g]",
               SIM_LIST_MAX, f->min, f->max);
      break;
    default:
      snprintf(buf, len, "a value");
  }
  return buf;
}

int io_sim_args_parse(int argc, char **argv, sim_flag *flags, size_t nflags,
                   const char *usage) {
  const char *verb = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
      return io_sim_args_fail(verb, usage, "help requested");
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
      return io_sim_args_fail(verb, usage, "unexpected argument '%s'", arg);
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    sim_flag *f = NULL;
    for (size_t k = 0; k < nflags; k++) {
      if (strlen(flags[k].name) == name_len &&
          strncmp(flags[k].name, name, name_len) == 0) {
        f = &flags[k];
        break;
      }
    }
    if (f == NULL)
      return io_sim_args_fail(verb, usage, "unknown flag --%.*s", (int)name_len,
                           name);
    if (f->seen)
      return io_sim_args_fail(verb, usage, "--%s given twice", f->name);
    f->seen = 1;
    if (f->kind == SIM_FLAG_BOOL) {
      if (eq != NULL)
        return io_sim_args_fail(verb, usage, "--%s takes no value", f->name);
      *(int *)f->value = 1;
      continue;
    }
    const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
    if (val == NULL)
      return io_sim_args_fail(verb, usage, "--%s needs a value", f->name);
    int bad = 0;
    switch (f->kind) {
      case SIM_FLAG_UINT:
        bad = parse_uint(val, f->min, f->max, f->value);
        break;
      case SIM_FLAG_DOUBLE:
        bad = parse_double(val, f->min, f->max, f->value);
        break;
      case SIM_FLAG_STRING:
        *(const char **)f->value = val;
        break;
      case SIM_FLAG_LIST:
      case SIM_FLAG_DLIST:
        bad = parse_list(val, f);
        break;
      default:
        bad = -1;
    }
    if (bad) {
      char want[160];
      return io_sim_args_fail(verb, usage, "--%s: expected %s, got '%s'",
                           f->name, expectation(f, want, sizeof want), val);
    }
  }
  return 0;
}
