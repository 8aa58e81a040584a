/*
 * ap_status_client: one unary gRPC call with raw request/response bytes on
 * the public C-core API (insecure channel). Used by aperturectl and by the
 * tests, which also send malformed bytes and unknown methods through it.
 */
#ifndef AP_STATUS_CLIENT_H
#define AP_STATUS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ap_status_call_result {
  int status;        /* grpc_status_code of the call */
  char details[512]; /* status message, NUL-terminated */
  uint8_t *body;     /* malloc'd response bytes (NULL when none); caller frees */
  size_t body_len;
} ap_status_call_result;

/* Calls `method` (e.g. "/aperture.v1.ApertureStatus/GetRingState") on
 * `address` ("127.0.0.1:PORT") with `len` request bytes, failing after
 * `timeout_ms`. Calls grpc_init()/grpc_shutdown() itself. Returns 0 when the
 * call ran (its gRPC status, possibly non-OK, is in *result), -1 on bad
 * arguments or when gRPC could not create the call (message in details). */
int ap_status_call(const char *address, const char *method, const uint8_t *req,
                   size_t len, int timeout_ms, ap_status_call_result *result);

/* Frees result->body and resets the result. NULL is ignored. */
void ap_status_call_result_clear(ap_status_call_result *result);

#ifdef __cplusplus
}
#endif

#endif /* AP_STATUS_CLIENT_H */
