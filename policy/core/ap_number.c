/*
 * ap_number: strtod_l with a "C" locale object made once per process, so
 * that no setlocale() anywhere in the process changes what parses.
 */
#define _GNU_SOURCE

#include "policy/core/ap_number.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

static locale_t g_c_locale = (locale_t)0;
static pthread_once_t g_c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void) {
  g_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

int ap_parse_double(const char *text, double *out, ap_error *err) {
  if (text == NULL || out == NULL)
    return ap_error_set(err, AP_EINVAL, "number: text or out is NULL");
  if (*text == '\0') return ap_error_set(err, AP_EINVAL, "number: empty text");
  pthread_once(&g_c_locale_once, make_c_locale);
  if (g_c_locale == (locale_t)0)
    return ap_error_set(err, AP_EINTERNAL, "number: cannot create the C locale");
  char *end = NULL;
  errno = 0;
  const double v = strtod_l(text, &end, g_c_locale);
  if (end == NULL || end == text || *end != '\0')
    return ap_error_set(err, AP_EINVAL, "\"%.64s\" is not a number", text);
  if (!isfinite(v))
    return ap_error_set(err, AP_EINVAL, "\"%.64s\" is not a finite number", text);
  *out = v;
  return AP_OK;
}

int ap_parse_uint(const char *text, uint64_t lo, uint64_t hi, uint64_t *out,
                  ap_error *err) {
  if (text == NULL || out == NULL)
    return ap_error_set(err, AP_EINVAL, "integer: text or out is NULL");
  if (lo > hi)
    return ap_error_set(err, AP_EINVAL,
                        "integer: empty range [%" PRIu64 ", %" PRIu64 "]", lo, hi);
  int code = *text == '\0' ? AP_EINVAL : AP_OK;
  uint64_t v = 0;
  for (const char *c = text; code == AP_OK && *c != '\0'; c++) {
    if (*c < '0' || *c > '9') {
      code = AP_EINVAL;
    } else if (v > (UINT64_MAX - (uint64_t)(*c - '0')) / 10) {
      code = AP_ERANGE; /* above UINT64_MAX */
    } else {
      v = v * 10 + (uint64_t)(*c - '0');
    }
  }
  if (code == AP_OK && (v < lo || v > hi)) code = AP_ERANGE;
  if (code != AP_OK)
    return ap_error_set(err, code,
                        "must be an integer in [%" PRIu64 ", %" PRIu64 "], got %.64s",
                        lo, hi, text);
  *out = v;
  return AP_OK;
}

int ap_check_weight(double weight, ap_error *err) {
  if (!(weight >= AP_MIN_WEIGHT && weight <= AP_MAX_WEIGHT))
    return ap_error_set(err, AP_ERANGE, "must be a number in [%g, %g], got %.17g",
                        AP_MIN_WEIGHT, AP_MAX_WEIGHT, weight);
  return AP_OK;
}
