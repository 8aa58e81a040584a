/*
 * What tests and the status flood program read and change of a status
 * service's limits (ap_status_limits.h): shorter limits, so that a test of
 * seconds sees a connection age out, and the figures the bounds are about.
 */
#ifndef AP_STATUS_SERVER_TESTING_H
#define AP_STATUS_SERVER_TESTING_H

#include <stddef.h>

#include "policy/include/aperture.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits for the services started afterwards; a 0 field keeps the
 * default. */
typedef struct ap_status_test_limits {
  size_t budget_bytes;      /* AP_STATUS_ANSWER_BUDGET_BYTES */
  unsigned max_connections; /* AP_STATUS_MAX_CONNECTIONS (admin server) */
  int idle_ms;              /* AP_STATUS_CONNECTION_IDLE_MS */
  int age_ms;               /* AP_STATUS_CONNECTION_AGE_MS */
  int grace_ms;             /* AP_STATUS_CONNECTION_GRACE_MS */
} ap_status_test_limits;

/* Sets them (NULL: every default). Not thread-safe with starting
 * services. */
void ap_status_set_limits_for_testing(const ap_status_test_limits *limits);

/* The admin server's connections open now, and those refused at its cap
 * so far (0 for NULL). */
size_t ap_status_server_connections(aperture_status_server *server);
size_t ap_status_server_refused_connections(aperture_status_server *server);

/* Bytes of the answer budget held now by a server's or a service's calls
 * (0 for NULL). */
size_t ap_status_server_held_bytes(const aperture_status_server *server);
size_t ap_status_service_held_bytes(const aperture_status_service *service);

#ifdef __cplusplus
}
#endif

#endif /* AP_STATUS_SERVER_TESTING_H */
