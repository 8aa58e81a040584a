/*
 * ap_status_limits: strict parsing of the concurrent-call bound (digits
 * only, no sign, no trailing text) so a typo fails loudly at start.
 */
#include "policy/status/ap_status_limits.h"

#include <stdio.h>
#include <string.h>

int ap_status_parse_max_calls(const char *text, unsigned *out, char *msg, size_t msg_size) {
  if (out == NULL) {
    if (msg_size > 0) snprintf(msg, msg_size, "ap_status_parse_max_calls: out is NULL");
    return -1;
  }
  if (text == NULL || text[0] == '\0') {
    *out = AP_STATUS_DEFAULT_MAX_CALLS;
    return 0;
  }
  unsigned long value = 0;
  size_t i = 0;
  for (; text[i] >= '0' && text[i] <= '9' && value <= AP_STATUS_MAX_CALLS_LIMIT; i++)
    value = value * 10 + (unsigned long)(text[i] - '0');
  if (i == 0 || text[i] != '\0' || value < 1 || value > AP_STATUS_MAX_CALLS_LIMIT) {
    if (msg_size > 0)
      snprintf(msg, msg_size, "%s must be an integer in 1..%u, got \"%.40s\"", AP_STATUS_MAX_CALLS_ENV,
               AP_STATUS_MAX_CALLS_LIMIT, text);
    return -1;
  }
  *out = (unsigned)value;
  return 0;
}
