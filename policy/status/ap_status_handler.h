/*
 * ap_status_handler: the transport-free part of the status service. Turns
 * serialized request bytes into a gRPC status and serialized response bytes,
 * reading the instance registry. No gRPC calls, so it can be fuzzed alone.
 * Thread-safe (it only reads registry snapshots).
 */
#ifndef AP_STATUS_HANDLER_H
#define AP_STATUS_HANDLER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Full method names served. */
#define AP_STATUS_METHOD_GET_RING_STATE "/aperture.v1.ApertureStatus/GetRingState"
#define AP_STATUS_METHOD_HEALTH_CHECK "/grpc.health.v1.Health/Check"
#define AP_STATUS_SERVICE_NAME "aperture.v1.ApertureStatus"

/* Largest request accepted (bytes); bigger ones get RESOURCE_EXHAUSTED. The
 * admin server also sets it as the channel's max receive size. */
#define AP_STATUS_MAX_REQUEST_BYTES (64 * 1024)
/* Endpoints per channel when the request asks for 0, and the hard caps. */
#define AP_STATUS_DEFAULT_MAX_ENDPOINTS 1000u
#define AP_STATUS_HARD_MAX_ENDPOINTS 10000u
#define AP_STATUS_RESPONSE_ENDPOINT_BUDGET 20000u

/* The outcome of one request. `code` is a grpc_status_code value; `body`
 * (malloc'd, owned by the reply) is the serialized response when code is 0. */
typedef struct ap_status_reply {
  int code;
  char message[256];
  uint8_t *body;
  size_t body_len;
} ap_status_reply;

/* Handles GetRingState request bytes (`len` may be 0; `req` may be NULL
 * only when len is 0). Always fills *reply (malformed input becomes
 * INVALID_ARGUMENT, oversized RESOURCE_EXHAUSTED). Every string of the
 * response is well-formed UTF-8: a byte of an instance's string that is
 * not is sent as U+FFFD ('?' in the fixed-size fingerprint, pick_metric
 * and peer_keys). Free with ap_status_reply_clear(). */
void ap_status_handle_get_ring_state(const uint8_t *req, size_t len,
                                     ap_status_reply *reply);

/* Handles grpc.health.v1.Health/Check: "" and "aperture.v1.ApertureStatus"
 * are SERVING, other names NOT_FOUND. */
void ap_status_handle_health_check(const uint8_t *req, size_t len,
                                   ap_status_reply *reply);

/* Frees the body and resets the reply. NULL is ignored. */
void ap_status_reply_clear(ap_status_reply *reply);

#ifdef __cplusplus
}
#endif

#endif /* AP_STATUS_HANDLER_H */
