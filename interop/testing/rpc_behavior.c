#include "interop/testing/rpc_behavior.h"

#include <string.h>

void io_rpc_behavior_init(rpc_behavior *b) {
  if (b == NULL) return;
  b->sleep_ms = 0;
  b->error_code = -1;
}

/* Parses a decimal number filling exactly [s, s+len). */
static int parse_number(const char *s, size_t len, long max, long *out) {
  if (len == 0 || len > 9) return -1;
  long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  if (v > max) return -1;
  *out = v;
  return 0;
}

static int starts_with(const char *s, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  return len >= n && memcmp(s, prefix, n) == 0;
}

/* Applies one directive to `b` when `applies`; -1 when it is malformed. */
static int apply_directive(rpc_behavior *b, const char *tok, size_t tlen, int applies) {
  long n;
  if (starts_with(tok, tlen, "sleep-")) {
    if (parse_number(tok + 6, tlen - 6, RPC_BEHAVIOR_MAX_SLEEP_MS, &n) != 0) return -1;
    if (applies) {
      b->sleep_ms += n;
      if (b->sleep_ms > RPC_BEHAVIOR_MAX_SLEEP_MS) b->sleep_ms = RPC_BEHAVIOR_MAX_SLEEP_MS;
    }
  } else if (starts_with(tok, tlen, "error-code-")) {
    if (parse_number(tok + 11, tlen - 11, 16, &n) != 0) return -1;
    if (applies) b->error_code = (int)n;
  }
  return 0;
}

int io_rpc_behavior_parse(rpc_behavior *b, const char *value, size_t len, const char *hostname) {
  if (b == NULL || (value == NULL && len > 0)) return -1;
  size_t pos = 0;
  while (pos < len) {
    size_t end = pos;
    while (end < len && value[end] != ',') end++;
    const char *tok = value + pos;
    size_t tlen = end - pos;
    while (tlen > 0 && (*tok == ' ' || *tok == '\t')) { tok++; tlen--; }
    while (tlen > 0 && (tok[tlen - 1] == ' ' || tok[tlen - 1] == '\t')) tlen--;
    int applies = 1;
    if (starts_with(tok, tlen, "hostname=")) {
      /* "hostname=H D": the name runs to the first space */
      const char *name = tok + 9;
      size_t nlen = 0;
      while (nlen < tlen - 9 && name[nlen] != ' ' && name[nlen] != '\t') nlen++;
      const char *rest = name + nlen;
      size_t rlen = tlen - 9 - nlen;
      while (rlen > 0 && (*rest == ' ' || *rest == '\t')) { rest++; rlen--; }
      if (nlen == 0 || rlen == 0) return -1;
      applies = hostname != NULL && strlen(hostname) == nlen && memcmp(hostname, name, nlen) == 0;
      tok = rest;
      tlen = rlen;
    }
    if (apply_directive(b, tok, tlen, applies) != 0) return -1;
    pos = end + 1;
  }
  return 0;
}
