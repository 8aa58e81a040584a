/* The `rpc-behavior` request header of gRPC's xDS interop tests: a comma
 * separated list of directives. Supported here:
 *   sleep-N        the server waits N milliseconds before answering;
 *   error-code-N   the server answers with status code N (0..16);
 *   hostname=H D   directive D applies only on the server whose hostname
 *                  is H (e.g. "hostname=s2 error-code-14": only s2 fails).
 * Unknown directives are ignored (other implementations define more). */
#ifndef APERTURE_INTEROP_RPC_BEHAVIOR_H
#define APERTURE_INTEROP_RPC_BEHAVIOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rpc_behavior {
  long sleep_ms;  /* 0 when absent; several sleep-N add up */
  int error_code; /* -1 when absent; the last error-code-N wins */
} rpc_behavior;

/* Largest accepted sleep, so a header cannot park a call for hours. */
#define RPC_BEHAVIOR_MAX_SLEEP_MS 60000L

/* Resets `b` to "no directive". */
void io_rpc_behavior_init(rpc_behavior *b);

/* Parses `len` bytes at `value` (not NUL terminated) and merges the
 * directives that apply to the server named `hostname` into `b` (NULL:
 * no "hostname=" directive applies). Returns 0, or -1 when b is NULL, value
 * is NULL with len > 0, a "hostname=" directive has no directive after the
 * name, or a known directive has a malformed or out-of-range number (b
 * then keeps the directives parsed before the bad one; a bad directive
 * for another host counts too, so a typo is never silent). */
int io_rpc_behavior_parse(rpc_behavior *b, const char *value, size_t len, const char *hostname);

#ifdef __cplusplus
}
#endif

#endif
