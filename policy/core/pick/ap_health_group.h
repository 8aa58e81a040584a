/*
 * ap_health_group: what the members of one aperture (one policy instance)
 * share about their health, so that no member is judged alone:
 *   - the bound: at most `max_ejection_percent` of the aperture's members
 *     are out at once (ap_health_config), at least one when it is above 0.
 *     A member takes a slot when it is ejected and gives it back when it
 *     is reinstated (a success, a new connection) or destroyed; it holds
 *     the slot through its probation after the ejection. A member whose
 *     ejection finds no slot free stays in: on probation, one call at a
 *     time, and it takes a slot at its next failure once one is free
 *     (ap_health.h). First come, first served: the members ejected first
 *     keep their slots.
 *   - the peers' silences: which members recently had a call fail after a
 *     silence longer than their stuck threshold (ap_health.h). A member
 *     whose calls fail so while most of its peers' do not stands out (a
 *     frozen process, a dead path); when most members of the aperture have
 *     such failures, they are the service's latency tail, and a silence is
 *     no evidence against one of them. "Recently" is the current or the
 *     previous period of AP_HEALTH_PEER_WINDOW_MS.
 * A member's health holds a reference on its group (ap_health_create_in).
 * Lock-free: the slots are one atomic count, the silences two atomic words
 * (one per period); the success path of a call touches neither.
 */
#ifndef AP_HEALTH_GROUP_H
#define AP_HEALTH_GROUP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The period over which the peers' silences are counted (ms). */
#define AP_HEALTH_PEER_WINDOW_MS 10000

typedef struct ap_health_group ap_health_group;

/* A new group with one reference (the caller's) and no members yet (the
 * bound then counts the aperture as one member). NULL when out of
 * memory. */
ap_health_group *ap_health_group_create(void);

/* Takes / drops a reference; the last drop frees the group. NULL is
 * ignored. */
void ap_health_group_ref(ap_health_group *group);
void ap_health_group_unref(ap_health_group *group);

/* The aperture's member count now (the caller's, on every change of the
 * aperture). Members already out keep their slots when it shrinks. NULL
 * is ignored. */
void ap_health_group_set_members(ap_health_group *group, uint32_t members);

/* The aperture's member count as last set (0 for NULL or never set). */
uint32_t ap_health_group_members(const ap_health_group *group);

/* Members holding a slot now: ejected, or on probation after an ejection
 * (0 for NULL). */
uint32_t ap_health_group_members_out(const ap_health_group *group);

/* How many members may be out at once at `members` members and
 * `max_ejection_percent` (0..100): floor(members x percent / 100), at
 * least 1 when percent is above 0 (as Envoy's and gRPC's outlier
 * detection); 0 when percent is 0 (no member is ever ejected). members 0
 * counts as 1. */
uint32_t ap_health_max_members_out(uint32_t members, uint32_t max_ejection_percent);

#ifdef __cplusplus
}
#endif

#endif /* AP_HEALTH_GROUP_H */
