/*
 * ap_limits: the sizes the core accepts anywhere. Every room checks its
 * inputs against these, so they live below all of them.
 */
#ifndef AP_LIMITS_H
#define AP_LIMITS_H

#include <stddef.h>

/* Largest number of endpoints the core accepts anywhere. */
#define AP_MAX_ENDPOINTS ((size_t)1000000)

/* Upper bound for min_aperture and peer_count (absurd sizes are rejected). */
#define AP_MAX_PEERS 1000000u

#endif /* AP_LIMITS_H */
