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
 * core's ap_status). */
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
 * before the call. */
APERTURE_API int aperture_register(aperture_error *err);

/* Reports whether the policy is registered in this process (1) or not (0). */
APERTURE_API int aperture_is_registered(void);

/* Sets the process coordinate used by channels whose config gives none:
 * this client is peer `peer_index` of `peer_count` (0 <= index < count).
 * Precedence: service config > this call > APERTURE_PEER_INDEX /
 * APERTURE_PEER_COUNT > host name ordinal (APERTURE_PEER_FROM_HOSTNAME=1 with
 * APERTURE_PEER_COUNT). Affects policies built or updated after the call. */
APERTURE_API int aperture_set_coordinate(uint32_t peer_index,
                                         uint32_t peer_count,
                                         aperture_error *err);

/* Forgets a coordinate set by aperture_set_coordinate(). */
APERTURE_API void aperture_clear_coordinate(void);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_H */
