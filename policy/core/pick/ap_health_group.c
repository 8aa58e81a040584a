/* ap_health_group: the bound on members out and the peers' failure share. */
#include "policy/core/pick/ap_health_group.h"
#include "policy/core/pick/ap_health_group_internal.h"

#include <stdatomic.h>
#include <stdlib.h>

struct ap_health_group {
  _Atomic uint32_t refs;
  _Atomic uint32_t members;
  _Atomic uint32_t out;            /* members holding a slot */
  _Atomic uint32_t away;           /* members ejected or on probation */
  _Atomic int64_t peer_failure_ppm; /* -1: unknown */
};

ap_health_group *ap_health_group_create(void) {
  ap_health_group *g = malloc(sizeof *g);
  if (g == NULL) return NULL;
  atomic_init(&g->refs, 1);
  atomic_init(&g->members, 0);
  atomic_init(&g->out, 0);
  atomic_init(&g->away, 0);
  atomic_init(&g->peer_failure_ppm, -1);
  return g;
}

void ap_health_group_ref(ap_health_group *group) {
  if (group != NULL) atomic_fetch_add_explicit(&group->refs, 1, memory_order_relaxed);
}

void ap_health_group_unref(ap_health_group *group) {
  if (group != NULL && atomic_fetch_sub_explicit(&group->refs, 1, memory_order_acq_rel) == 1)
    free(group);
}

void ap_health_group_set_members(ap_health_group *group, uint32_t members) {
  if (group != NULL) atomic_store_explicit(&group->members, members, memory_order_relaxed);
}

uint32_t ap_health_group_members(const ap_health_group *group) {
  return group ? atomic_load_explicit(&group->members, memory_order_relaxed) : 0;
}

uint32_t ap_health_group_members_out(const ap_health_group *group) {
  return group ? atomic_load_explicit(&group->out, memory_order_relaxed) : 0;
}

uint32_t ap_health_max_members_out(uint32_t members, uint32_t max_ejection_percent) {
  if (max_ejection_percent == 0) return 0;
  if (max_ejection_percent > 100) max_ejection_percent = 100;
  if (members == 0) members = 1;
  const uint32_t bound = (uint32_t)((uint64_t)members * max_ejection_percent / 100);
  return bound > 0 ? bound : 1;
}

int ap_health_group_take_slot(ap_health_group *group, uint32_t max_ejection_percent) {
  if (max_ejection_percent == 0) return 0;
  if (group == NULL) return 1;
  const uint32_t bound = ap_health_max_members_out(
      atomic_load_explicit(&group->members, memory_order_relaxed), max_ejection_percent);
  uint32_t out = atomic_load_explicit(&group->out, memory_order_relaxed);
  while (out < bound) {
    if (atomic_compare_exchange_weak_explicit(&group->out, &out, out + 1, memory_order_relaxed,
                                              memory_order_relaxed))
      return 1;
  }
  return 0;
}

void ap_health_group_give_slot(ap_health_group *group) {
  if (group == NULL) return;
  uint32_t out = atomic_load_explicit(&group->out, memory_order_relaxed);
  while (out > 0 && !atomic_compare_exchange_weak_explicit(&group->out, &out, out - 1,
                                                           memory_order_relaxed,
                                                           memory_order_relaxed)) {
  }
}

int ap_health_group_all_in(const ap_health_group *group) {
  return group != NULL && atomic_load_explicit(&group->away, memory_order_relaxed) == 0;
}

void ap_health_group_member_away(ap_health_group *group) {
  if (group != NULL) atomic_fetch_add_explicit(&group->away, 1, memory_order_relaxed);
}

void ap_health_group_member_back(ap_health_group *group) {
  if (group == NULL) return;
  uint32_t away = atomic_load_explicit(&group->away, memory_order_relaxed);
  while (away > 0 && !atomic_compare_exchange_weak_explicit(&group->away, &away, away - 1,
                                                            memory_order_relaxed,
                                                            memory_order_relaxed)) {
  }
}

void ap_health_group_set_peer_failure_ppm(ap_health_group *group, int64_t ppm) {
  if (group != NULL)
    atomic_store_explicit(&group->peer_failure_ppm, ppm < 0 ? -1 : ppm, memory_order_relaxed);
}

int64_t ap_health_group_peer_failure_ppm(const ap_health_group *group) {
  return group ? atomic_load_explicit(&group->peer_failure_ppm, memory_order_relaxed) : -1;
}

int ap_health_group_peers_quiet(const ap_health_group *group) {
  if (group == NULL) return 1;
  const int64_t ppm = atomic_load_explicit(&group->peer_failure_ppm, memory_order_relaxed);
  return ppm >= 0 && ppm < AP_HEALTH_QUIET_PPM;
}
