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
 * (owned by the reply; from ap_pages.h, so that a large one goes
 * back to the system when freed) is the serialized response when code is
 * 0. */
typedef struct ap_status_reply {
  int code;
  char message[256];
  uint8_t *body;
  size_t body_len;
} ap_status_reply;

/* Handles GetRingState request bytes (`len` may be 0; `req` may be NULL
 * only when len is 0): the three steps below on this thread. Always fills
 * *reply (malformed input becomes
 * INVALID_ARGUMENT, oversized RESOURCE_EXHAUSTED). Every string of the
 * response is well-formed UTF-8: a byte of an instance's string that is
 * not is sent as U+FFFD ('?' in the fixed-size fingerprint, pick_metric
 * and peer_keys). Free with ap_status_reply_clear(). */
void ap_status_handle_get_ring_state(const uint8_t *req, size_t len,
                                     ap_status_reply *reply);

/* The steps of a GetRingState answer, for a caller that runs them on
 * different threads (the status server copies where the channels' own
 * threads run, and does the build's CPU work at the idle scheduling
 * class):
 *   1. ap_status_work_start() decodes the request (NULL, with the error in
 *      *reply, when it is bad); ap_status_work_estimate() is then the most
 *      its answer should take to build, for addresses of up to 48 bytes;
 *   2. ap_status_work_copy() copies the page of each matching instance
 *      from the registry: it takes the registry lock and each instance's
 *      published state, the only shared things an answer touches; 0 with
 *      the error in *reply when it fails;
 *   3. ap_status_work_answer() builds and packs the answer from the copy
 *      into *reply and frees the work. It allocates what the build needs
 *      first, then hands the CPU work (filling the messages and measuring
 *      them; packing them) to hooks->run in two steps that allocate
 *      nothing, free nothing and take no lock, not even the allocator's:
 *      a thread at a low priority that held one would make the threads
 *      waiting for it wait for the CPU too.
 * ap_status_work_free() frees a work at any step (NULL is ignored). */
typedef struct ap_status_work ap_status_work;

/* Runs fn(arg) where the caller wants the build's CPU work done (the
 * server: on a thread at the idle class) and returns once it is done. */
typedef void (*ap_status_run_fn)(void *ctx, void (*fn)(void *arg), void *arg);

/* Asked by step 3 before it allocates the packed answer: whether `need`
 * bytes (the copy, the messages and the packed answer together) may be
 * used. On no it fills *reply with the refusal (a gRPC status and
 * message) and returns 0. */
typedef int (*ap_status_fits_fn)(void *ctx, size_t need, ap_status_reply *reply);

typedef struct ap_status_answer_hooks {
  ap_status_run_fn run;   /* NULL: on the calling thread */
  ap_status_fits_fn fits; /* NULL: always */
  void *ctx;              /* passed to both */
} ap_status_answer_hooks;

ap_status_work *ap_status_work_start(const uint8_t *req, size_t len, ap_status_reply *reply);
size_t ap_status_work_estimate(const ap_status_work *work);
int ap_status_work_copy(ap_status_work *work, ap_status_reply *reply);
/* `hooks` may be NULL (all on this thread, no limit); *need (may be NULL)
 * gets the bytes the answer took at its peak, 0 when building failed
 * before it was measured. */
void ap_status_work_answer(ap_status_work *work, const ap_status_answer_hooks *hooks,
                           ap_status_reply *reply, size_t *need);
void ap_status_work_free(ap_status_work *work);

/* Handles grpc.health.v1.Health/Check: "" and "aperture.v1.ApertureStatus"
 * are SERVING, other names NOT_FOUND. */
void ap_status_handle_health_check(const uint8_t *req, size_t len,
                                   ap_status_reply *reply);

/* Frees the body and resets the reply. NULL is ignored. */
void ap_status_reply_clear(ap_status_reply *reply);

/* Frees a reply's body taken over by its caller (e.g. handed to gRPC as a
 * slice's memory, this as the slice's destroy function). NULL is ignored. */
void ap_status_body_free(void *body);

#ifdef __cplusplus
}
#endif

#endif /* AP_STATUS_HANDLER_H */
