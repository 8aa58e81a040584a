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

/* The period of now_ms: now_ms / AP_HEALTH_PEER_WINDOW_MS (negative
 * times are period 0). */
int64_t ap_health_group_period(int64_t now_ms);

/* One more member had a call fail after a silence in `period` (the
 * caller counts each member once a period). A count of an older period
 * than the group's latest two is dropped. NULL is ignored. */
void ap_health_group_count_silent(ap_health_group *group, int64_t period);

/* Members counted silent in `period` (0 for NULL, or a period the group
 * no longer holds). */
uint32_t ap_health_group_silent(const ap_health_group *group, int64_t period);

/* 1 when a member's silence stands out: at most half of the aperture's
 * members (the caller among them) had a call fail after a silence in the
 * current or the previous period, 0 when more did (the latency tail of the
 * service). A NULL group stands out: 1. */
int ap_health_group_silence_stands_out(const ap_health_group *group, int64_t now_ms);

#ifdef __cplusplus
}
#endif

#endif /* AP_HEALTH_GROUP_INTERNAL_H */
