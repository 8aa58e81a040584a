/*
 * ap_number: number parsing that does not depend on the process's locale
 * (strtod reads "1.5" as 1 under a locale whose decimal separator is a
 * comma), the one unsigned-integer parser every config field, environment
 * variable and address port goes through, and the bounds a configured
 * endpoint weight must respect.
 */
#ifndef AP_NUMBER_H
#define AP_NUMBER_H

#include <stdint.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Endpoint weights accepted from configuration. Within these bounds, a ring
 * of AP_MAX_ENDPOINTS endpoints has a finite total (<= 1e12) and every pick
 * weight (intersection > 1e-12 times weight, divided by at most
 * AP_MAX_PEERS windows) stays a normal double (>= 1e-24), so the ring and
 * the pick table never refuse a configured weight. */
#define AP_MIN_WEIGHT 1e-6
#define AP_MAX_WEIGHT 1e6

/* Parses the whole of `text` as a decimal number with '.' as the decimal
 * separator whatever the locale (the syntax of a JSON number, plus what
 * strtod accepts in the "C" locale). AP_EINVAL for NULL arguments, empty
 * text, trailing characters or a value that is not finite (the message
 * quotes the text). */
int ap_parse_double(const char *text, double *out, ap_error *err);

/* Parses the whole of `text` as an unsigned decimal integer in [lo, hi]:
 * digits only (no sign, space, decimal point or exponent), so "-0", " 7",
 * "1.0" and "1e3" are refused. AP_EINVAL for NULL arguments, lo > hi, empty
 * text or any character that is not a digit; AP_ERANGE for a value outside
 * [lo, hi] or above UINT64_MAX. The message is "must be an integer in
 * [lo, hi], got <text>". *out is written only on success. */
int ap_parse_uint(const char *text, uint64_t lo, uint64_t hi, uint64_t *out,
                  ap_error *err);

/* AP_OK when `weight` is within [AP_MIN_WEIGHT, AP_MAX_WEIGHT]; else
 * AP_ERANGE with a message that gives the bounds. */
int ap_check_weight(double weight, ap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AP_NUMBER_H */
