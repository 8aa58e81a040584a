/* ap_error: status codes and bounded error messages. */
#include "policy/core/ap_error.h"
#include "policy/core/ap_error_testing.h"

#include <stdarg.h>
#include <stdio.h>

int ap_error_set(ap_error *err, int code, const char *fmt, ...) {
  if (err == NULL) return code;
  err->code = code;
  err->message[0] = '\0';
  if (fmt != NULL) {
    va_list args;
    va_start(args, fmt);
    /* vsnprintf truncates and always NUL-terminates a non-empty buffer. */
    vsnprintf(err->message, sizeof(err->message), fmt, args);
    va_end(args);
  }
  return code;
}

void ap_error_clear(ap_error *err) {
  if (err == NULL) return;
  err->code = AP_OK;
  err->message[0] = '\0';
}

const char *ap_result_name(int code) {
  switch (code) {
    case AP_OK: return "OK";
    case AP_EINVAL: return "EINVAL";
    case AP_ERANGE: return "ERANGE";
    case AP_ENOMEM: return "ENOMEM";
    case AP_ESTATE: return "ESTATE";
    case AP_EUNAVAIL: return "EUNAVAIL";
    case AP_EINTERNAL: return "EINTERNAL";
    default: return "UNKNOWN";
  }
}
