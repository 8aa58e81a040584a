/*
 * aperture: a deterministic-aperture load-balancing policy for gRPC C-core.
 *
 * Public C API of libaperture.so. A channel uses the policy through its
 * service config:
 *
 *   {"loadBalancingConfig": [{"aperture": {"mode": "continuous"}}]}
 *
 * The policy must be registered before gRPC builds its core configuration
 * (before the first channel or server is created). Loading libaperture.so
 * registers it automatically (also via LD_PRELOAD) unless the environment
 * variable APERTURE_NO_AUTOREGISTER is set to a non-empty value other than
 * "0"; programs can also call aperture_register() right after grpc_init().
 *
 * Every function returns APERTURE_OK (0) on success or a negative
 * aperture_status; when `err` is not NULL it receives a message that says
 * what was wrong. No function aborts on bad input.
 */
#ifndef APERTURE_H
#define APERTURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define APERTURE_API __attribute__((visibility("default")))
#else
#define APERTURE_API
#endif

/* Result codes shared by every aperture function (same values as the
 * core's ap_result). */
typedef enum aperture_status {
  APERTURE_OK = 0,
  APERTURE_EINVAL = -1,   /* an argument is invalid */
  APERTURE_ERANGE = -2,   /* a size or value is out of the supported range */
  APERTURE_ENOMEM = -3,   /* an allocation failed */
  APERTURE_ESTATE = -4,   /* the call is not possible in the current state */
  APERTURE_EUNAVAIL = -5, /* a resource (address, port, endpoint) is unavailable */
  APERTURE_EINTERNAL = -6 /* an unexpected failure inside gRPC */
} aperture_status;

/* Error details filled by a failing call. */
typedef struct aperture_error {
  int code;           /* an aperture_status */
  char message[256];  /* NUL-terminated, human readable */
} aperture_error;

/* Registers the "aperture" LB policy with gRPC. Idempotent: a second call
 * returns APERTURE_OK. Returns APERTURE_ESTATE (without aborting) when gRPC
 * has already built its configuration, i.e. a channel or server was created
 * before the call. Safe while other threads create channels: the answer
 * matches gRPC's configuration whichever comes first. */
APERTURE_API int aperture_register(aperture_error *err);

/* Reports whether the policy is in gRPC's configuration (1) or not (0);
 * before gRPC builds it, whether it will be. */
APERTURE_API int aperture_is_registered(void);

/* Channel args (integers) giving one channel its own coordinate, e.g. a
 * process that is peer 3 of 40 for one service and 0 of 7 for another:
 *   grpc_arg args[] = {
 *     {GRPC_ARG_INTEGER, (char *)APERTURE_ARG_PEER_INDEX, {.integer = 3}},
 *     {GRPC_ARG_INTEGER, (char *)APERTURE_ARG_PEER_COUNT, {.integer = 40}}};
 * (C++: grpc::ChannelArguments::SetInt). Both or neither, with
 * 0 <= index < count <= 1000000; invalid values are ignored and the status
 * (last_status) says why. They rank below peerIndex/peerCount in the
 * service config and above every process-wide source. */
#define APERTURE_ARG_PEER_INDEX "aperture.peer_index"
#define APERTURE_ARG_PEER_COUNT "aperture.peer_count"

/* Sets the process coordinate used by channels whose config gives none:
 * this client is peer `peer_index` of `peer_count` (0 <= index < count).
 * Precedence: service config > channel args (APERTURE_ARG_PEER_INDEX /
 * APERTURE_ARG_PEER_COUNT) > this call > APERTURE_PEER_INDEX /
 * APERTURE_PEER_COUNT > host name ordinal (APERTURE_PEER_FROM_HOSTNAME=1 with
 * APERTURE_PEER_COUNT). Affects policies built or updated after the call. */
APERTURE_API int aperture_set_coordinate(uint32_t peer_index,
                                         uint32_t peer_count,
                                         aperture_error *err);

/* Forgets a coordinate set by aperture_set_coordinate(). */
APERTURE_API void aperture_clear_coordinate(void);


/* ======================================================================
 * Status service (module policy/status). Serves aperture.v1.ApertureStatus
 * (proto/aperture/v1/status.proto) and grpc.health.v1.Health/Check from the
 * live policy instances of this process. Reading it never blocks the data
 * path: it copies each instance's last published state, only the channels
 * and the page of endpoints a request asks for, without holding the lock
 * that channel creation and shutdown take. At most APERTURE_STATUS_MAX_CALLS
 * (environment, 1..1024, default 8; read when a server or service starts)
 * GetRingState calls are computed at once, each on a thread of its own;
 * calls past the bound get RESOURCE_EXHAUSTED.
 * ====================================================================== */

struct grpc_server; /* from <grpc/grpc.h> */

/* An admin gRPC server with its own completion queue and thread. */
typedef struct aperture_status_server aperture_status_server;

/* Starts an admin server listening on `address` (NULL means "127.0.0.1:0":
 * loopback, ephemeral port). Listening on a non-loopback address, e.g.
 * "0.0.0.0:9901", is allowed but must be asked for explicitly; the server
 * is plaintext and unauthenticated. Requests above 64 KiB are refused with
 * RESOURCE_EXHAUSTED, unknown methods get UNIMPLEMENTED; at most 32
 * connections at once (one more is closed when accepted), each with at most
 * 16 streams at once, closed after 10 s without a call and after 60 s (plus
 * a 10 s grace) in any case; GetRingState answers hold at most 10 MiB at
 * once, built or not yet read (docs/status.md, "Under load"). Calls
 * grpc_init()
 * (balanced by aperture_status_server_stop). On success *out owns the server:
 * stop it with aperture_status_server_stop(). Returns APERTURE_EINVAL on bad
 * arguments or an invalid APERTURE_STATUS_MAX_CALLS (the message names it),
 * APERTURE_EUNAVAIL when the address cannot be bound. */
APERTURE_API int aperture_status_server_start(const char *address,
                                              aperture_status_server **out,
                                              aperture_error *err);

/* The TCP port the server listens on (useful with port 0); -1 for NULL. */
APERTURE_API int aperture_status_server_port(
    const aperture_status_server *server);

/* Shuts the server down: cancels calls in flight, waits for them, joins its
 * thread and frees it. NULL is ignored. */
APERTURE_API void aperture_status_server_stop(aperture_status_server *server);

/* The status service on a grpc_server the application owns. */
typedef struct aperture_status_service aperture_status_service;

/* Registers aperture.v1.ApertureStatus/GetRingState and a private callback
 * completion queue on `server`; the same as aperture_status_register_with()
 * with flags 0, so grpc.health.v1.Health/Check stays the application's
 * (the application's server is healthy or not by its own measure). */
APERTURE_API int aperture_status_register(struct grpc_server *server,
                                          aperture_status_service **out,
                                          aperture_error *err);

/* Also registers grpc.health.v1.Health/Check, answering SERVING for the
 * empty service name (opt-in: only for a server that has no health service
 * of its own and whose health is just "the process is up"). */
#define APERTURE_STATUS_WITH_HEALTH 1u

/* Registers the status methods on `server`, plus Health/Check when flags
 * has APERTURE_STATUS_WITH_HEALTH (other bits: APERTURE_EINVAL). Must be
 * called before grpc_server_start(): gRPC offers no way to check that, and
 * registering on a started server is undefined in gRPC itself. Fails with
 * APERTURE_ESTATE when a method is already registered on this server; *out
 * is set even then (the queue is already attached to the server) and must
 * be passed to aperture_status_service_destroy() once the server is shut
 * down or destroyed. The application keeps driving its own queues;
 * completions of these methods run on gRPC's callback threads, so nothing
 * else is needed. Unregistered methods are left to the application. The
 * message size limits are the server's (requests above 64 KiB are still
 * refused with RESOURCE_EXHAUSTED). APERTURE_STATUS_MAX_CALLS bounds the
 * calls this service computes at once, as on the admin server; an invalid
 * value fails with APERTURE_EINVAL. */
APERTURE_API int aperture_status_register_with(struct grpc_server *server,
                                               unsigned flags,
                                               aperture_status_service **out,
                                               aperture_error *err);

/* Starts serving; call after grpc_server_start(). */
APERTURE_API int aperture_status_service_start(aperture_status_service *service,
                                               aperture_error *err);

/* Frees the service. Call after the application's server has finished
 * shutting down (the grpc_server_shutdown_and_notify tag arrived) and
 * before grpc_server_destroy() or after it; it waits for the service's own
 * callbacks to finish. NULL is ignored. */
APERTURE_API void aperture_status_service_destroy(
    aperture_status_service *service);

/* ==================== end of the status service block ================= */

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_H */
