/*
 * ap_membership: debounced ring membership.
 *
 * Turns the successive address lists of a resolver into the membership the
 * ring is built from, so that short absences and bursts of updates do not
 * rebuild the ring:
 *
 * - Removal grace: an address that leaves the resolver's list keeps its ring
 *   slot (same address, same weight) for `removal_grace_ms`, marked
 *   *draining*: the caller must not pick it (the health widening covers the
 *   gap). If it comes back within the grace (a restart at the same address),
 *   the ring does not change at all; when the grace expires it leaves.
 *   A zero grace removes it at once.
 * - Coalescing: after an update that changed the ring, further updates that
 *   arrive within `coalesce_ms` are held (the latest replaces any earlier
 *   held one) and applied together when the window ends, so a burst costs
 *   at most one rebuild per window. The first change after a quiet period is
 *   applied at once. Grace expiries wait for the window's end too. An
 *   update within the window that equals the current (non-draining)
 *   members drops what was held and changes nothing.
 * - Bounded draining: live and draining members together never exceed
 *   max_members (default AP_MAX_ENDPOINTS, the most a ring holds). When an
 *   update would go past it (a large list swap within the grace), the
 *   draining members that would leave first (earliest deadline, then
 *   address order) leave at once; live members are never dropped for
 *   draining ones.
 *
 * Time is a caller-supplied monotonic clock in milliseconds (never read
 * here): every call takes `now_ms`, which must not go backwards. The module
 * reports the next time something is due (ap_membership_next_deadline); the
 * caller schedules a timer for it and calls ap_membership_tick() then.
 *
 * The effective membership is listed in strcmp order of the addresses
 * (draining entries included); ring order is the caller's business
 * (ap_order_endpoints).
 *
 * Ownership: ap_membership_create() returns an object the caller frees with
 * ap_membership_destroy(). The membership copies every address it keeps;
 * the strings it hands out stay valid until the next update, tick or
 * destroy. Not thread-safe: one caller (e.g. the policy's serializer) at a
 * time; the const accessors may run concurrently with each other.
 */
#ifndef AP_MEMBERSHIP_H
#define AP_MEMBERSHIP_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest accepted removal_grace_ms and coalesce_ms: one day. */
#define AP_MEMBERSHIP_MAX_MS ((uint64_t)86400000)

/* Largest accepted now_ms (keeps now + AP_MEMBERSHIP_MAX_MS exact). */
#define AP_MEMBERSHIP_MAX_TIME_MS ((uint64_t)1 << 62)

/* ap_membership_next_deadline() when nothing is due. */
#define AP_MEMBERSHIP_NO_DEADLINE UINT64_MAX

/* Bits of the `changes` result of update and tick. */
enum {
  /* The set of addresses or a weight changed: rebuild the ring. */
  AP_MEMBERSHIP_RING_CHANGED = 1u << 0,
  /* Only draining flags changed (an address left within the grace or came
   * back): same ring, recompute what is pickable. */
  AP_MEMBERSHIP_DRAINING_CHANGED = 1u << 1,
  /* The update was held for the coalescing window (nothing changed yet;
   * schedule the next deadline). */
  AP_MEMBERSHIP_HELD = 1u << 2
};

typedef struct ap_membership_params {
  uint64_t removal_grace_ms; /* 0: a removed address leaves at once */
  uint64_t coalesce_ms;      /* 0: every update is applied at once */
  size_t max_members;        /* bound on live + draining members; 0 (the
                                default) = AP_MAX_ENDPOINTS, the ring's
                                limit, at most that */
} ap_membership_params;

/* One effective member. `address` belongs to the membership. */
typedef struct ap_membership_entry {
  const char *address;
  double weight;
  int draining;                /* 1: gone from the resolver, in its grace */
  uint64_t drain_deadline_ms;  /* when draining: when it leaves the ring */
} ap_membership_entry;

typedef struct ap_membership ap_membership;

/* Sets both durations to 0 (no grace, no coalescing) and max_members to 0
 * (the default bound). */
void ap_membership_params_init(ap_membership_params *params);

/* Creates an empty membership (no entries, nothing held) in *out.
 * AP_EINVAL for NULL params or out, AP_ERANGE for a duration above
 * AP_MEMBERSHIP_MAX_MS or max_members above AP_MAX_ENDPOINTS (the message
 * names the field), AP_ENOMEM.
 * On error *out is NULL (when out is not NULL). */
int ap_membership_create(const ap_membership_params *params,
                         ap_membership **out, ap_error *err);

/* Frees the membership and every string it owns. NULL is a no-op. */
void ap_membership_destroy(ap_membership *membership);

/* Offers the resolver's current list at time now_ms: addresses[0..n) with
 * weights[0..n) (NULL: all 1). n == 0 (addresses may then be NULL) means
 * the resolver returned no address: every member starts draining.
 * Writes into *changes (when not NULL) the AP_MEMBERSHIP_* bits of what
 * happened, 0 when nothing changed.
 * AP_EINVAL: NULL membership, NULL addresses with n > 0, a NULL or empty
 * address, a duplicate address, a weight that is not finite and > 0 (the
 * message names the index or the address), now_ms before the previous
 * call's or above AP_MEMBERSHIP_MAX_TIME_MS; AP_ERANGE: n >
 * AP_MAX_ENDPOINTS; AP_ENOMEM. On error nothing changes (*changes = 0). */
int ap_membership_update(ap_membership *membership,
                         const char *const *addresses, const double *weights,
                         size_t n, uint64_t now_ms, unsigned *changes,
                         ap_error *err);

/* Applies what is due at now_ms: a held update whose window has ended,
 * draining entries whose grace has expired. Calling it early or with
 * nothing due is harmless (*changes = 0). Errors as for the time and
 * membership arguments of ap_membership_update. */
int ap_membership_tick(ap_membership *membership, uint64_t now_ms,
                       unsigned *changes, ap_error *err);

/* The earliest time at which ap_membership_tick() has work, or
 * AP_MEMBERSHIP_NO_DEADLINE (also for a NULL membership). */
uint64_t ap_membership_next_deadline(const ap_membership *membership);

/* Number of effective members (draining included); 0 for NULL. */
size_t ap_membership_count(const ap_membership *membership);

/* The shim reads members with ap_membership_get; tests and the fuzzer
 * check the state machine through ap_membership_testing.h. */

/* Writes member `index` (strcmp order) into *entry.
 * AP_EINVAL for NULL arguments, AP_ERANGE for index >= count. */
int ap_membership_get(const ap_membership *membership, size_t index,
                      ap_membership_entry *entry, ap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AP_MEMBERSHIP_H */
