/*
 * ap_health_group_internal: what ap_health.c does with a member's group.
 * Only ap_health.c and the tests call these.
 */
#ifndef AP_HEALTH_GROUP_INTERNAL_H
#define AP_HEALTH_GROUP_INTERNAL_H

#include <stdint.h>

#include "policy/core/pick/ap_health_group.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Takes one slot when fewer than the bound (ap_health_max_members_out of
 * the group's members and max_ejection_percent) are out: 1, or 0 when
 * none is free. A NULL group has no bound: 1, unless the percent is 0. */
int ap_health_group_take_slot(ap_health_group *group, uint32_t max_ejection_percent);

/* Gives back a slot taken with ap_health_group_take_slot(). NULL is
 * ignored. */
void ap_health_group_give_slot(ap_health_group *group);

/* A member left "in" (ejected, or on probation) / came back in. NULL is
 * ignored. */
void ap_health_group_member_away(ap_health_group *group);
void ap_health_group_member_back(ap_health_group *group);

/* Stores the peers' failure share (ppm; -1: unknown), as a sweep measured
 * it. NULL is ignored. */
void ap_health_group_set_peer_failure_ppm(ap_health_group *group, int64_t ppm);

#ifdef __cplusplus
}
#endif

#endif /* AP_HEALTH_GROUP_INTERNAL_H */
