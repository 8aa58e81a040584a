/*
 * ap_number: strtod_l with a "C" locale object made once per process, so
 * that no setlocale() anywhere in the process changes what parses.
 */
#define _GNU_SOURCE

#include "policy/core/ap_number.h"

#include <errno.h>
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

int ap_check_weight(double weight, ap_error *err) {
  if (!(weight >= AP_MIN_WEIGHT && weight <= AP_MAX_WEIGHT))
    return ap_error_set(err, AP_ERANGE, "must be a number in [%g, %g], got %.17g",
                        AP_MIN_WEIGHT, AP_MAX_WEIGHT, weight);
  return AP_OK;
}
