/*
 * ap_membership_testing: what tests read of a membership's state. Only tests
 * include this header; no product code calls these.
 */
#ifndef AP_MEMBERSHIP_TESTING_H
#define AP_MEMBERSHIP_TESTING_H

#include "policy/core/membership/ap_membership.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of draining members; 0 for NULL. */
size_t ap_membership_draining_count(const ap_membership *membership);

/* Finds `address` among the effective members: AP_OK with *index set, or
 * AP_EUNAVAIL when it is not a member; AP_EINVAL for NULL arguments. */
int ap_membership_find(const ap_membership *membership, const char *address,
                       size_t *index, ap_error *err);

/* 1 when an update is held for the coalescing window; 0 otherwise. */
int ap_membership_has_held(const ap_membership *membership);

/* How many times the ring changed (AP_MEMBERSHIP_RING_CHANGED results)
 * since creation; 0 for NULL. */
uint64_t ap_membership_ring_version(const ap_membership *membership);

#ifdef __cplusplus
}
#endif

#endif /* AP_MEMBERSHIP_TESTING_H */
