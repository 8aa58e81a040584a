/*
 * ap_error: result codes and error messages of the aperture core.
 *
 * Every fallible core function returns AP_OK (0) or a negative ap_result and,
 * when its `err` argument is not NULL, writes a message naming what was
 * wrong. The codes equal the public aperture_status values.
 */
#ifndef AP_ERROR_H
#define AP_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ap_result {
  AP_OK = 0,
  AP_EINVAL = -1,   /* an argument is invalid */
  AP_ERANGE = -2,   /* a size or value is outside the supported range */
  AP_ENOMEM = -3,   /* an allocation failed */
  AP_ESTATE = -4,   /* not possible in the current state */
  AP_EUNAVAIL = -5, /* nothing available (e.g. no healthy endpoint) */
  AP_EINTERNAL = -6 /* unexpected failure in a dependency */
} ap_result;

typedef struct ap_error {
  int code;          /* an ap_result */
  char message[256]; /* NUL-terminated */
} ap_error;

/* Writes `code` and a printf-style message into `err` (ignored when NULL)
 * and returns `code`, so callers can `return ap_error_set(err, ...)`. */
int ap_error_set(ap_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Resets `err` (when not NULL) to AP_OK with an empty message. */
void ap_error_clear(ap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AP_ERROR_H */
