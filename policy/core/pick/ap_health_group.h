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
 *   - the peers' failure share: how often the aperture's members' calls
 *     fail, as ap_health_sweep() last measured it (the lower median of
 *     the members' shares, each over its last AP_HEALTH_MIN_VOLUME calls
 *     or more; the policy sweeps every AP_HEALTH_SWEEP_MS). A silence on a
 *     member counts as evidence only while that share is below
 *     AP_HEALTH_QUIET_PPM (ap_health.h): a member that stops among peers
 *     that answer stands out; when the peers' calls fail too (a service
 *     whose deadlines sit inside its latency tail), a silence says nothing
 *     of one member.
 * A member's health holds a reference on its group (ap_health_init_at).
 * Lock-free: the slots are one atomic count and the peers' share one
 * atomic word; the success path of a call touches neither.
 */
#ifndef AP_HEALTH_GROUP_H
#define AP_HEALTH_GROUP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How often the policy sweeps its members (ms). */
#define AP_HEALTH_SWEEP_MS 1000
/* Calls a member's share is taken over, at least (gRPC's outlier
 * detection asks 50 for its failure-percentage ejection). */
#define AP_HEALTH_MIN_VOLUME 50
/* Below this failure share of the peers (parts per million: 0.5%), a
 * silence counts as evidence. */
#define AP_HEALTH_QUIET_PPM 5000

typedef struct ap_health_group ap_health_group;

/* A new group with one reference (the caller's), no members yet (the
 * bound then counts the aperture as one member) and the peers' failure
 * share unknown. NULL when out of memory. */
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

/* 1 when no member of the group is ejected or on probation (every one of
 * them plainly in, as far as the last transitions tell): a pick may then
 * take an idle member as usable without reading its health. 0 otherwise,
 * and for NULL. One atomic load of a word every pick reads and only
 * ejections and reinstatements write. */
int ap_health_group_all_in(const ap_health_group *group);

/* How many members may be out at once at `members` members and
 * `max_ejection_percent` (0..100): floor(members x percent / 100), at
 * least 1 when percent is above 0 (as Envoy's and gRPC's outlier
 * detection); 0 when percent is 0 (no member is ever ejected). members 0
 * counts as 1. */
uint32_t ap_health_max_members_out(uint32_t members, uint32_t max_ejection_percent);

/* The peers' failure share in parts per million as the last sweep
 * measured it; -1 while unknown (no sweep yet had enough calls) and for
 * NULL. */
int64_t ap_health_group_peer_failure_ppm(const ap_health_group *group);

/* 1 when a silence counts as evidence: the group is NULL (a member alone)
 * or its peers' failure share is known and below AP_HEALTH_QUIET_PPM; 0
 * otherwise. */
int ap_health_group_peers_quiet(const ap_health_group *group);

#ifdef __cplusplus
}
#endif

#endif /* AP_HEALTH_GROUP_H */
