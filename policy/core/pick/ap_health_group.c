/* ap_health_group: the bound on members out and the peers' silences. */
#include "policy/core/pick/ap_health_group.h"
#include "policy/core/pick/ap_health_group_internal.h"

#include <stdatomic.h>
#include <stdlib.h>

/* A period's silent members: (period << 20) | count, so a period's first
 * count replaces the older period's word in one compare-and-swap. */
#define COUNT_BITS 20
#define COUNT_MASK ((UINT64_C(1) << COUNT_BITS) - 1)

struct ap_health_group {
  _Atomic uint32_t refs;
  _Atomic uint32_t members;
  _Atomic uint32_t out;         /* members holding a slot */
  _Atomic uint64_t silent[2];   /* by period parity */
};

ap_health_group *ap_health_group_create(void) {
  ap_health_group *g = malloc(sizeof *g);
  if (g == NULL) return NULL;
  atomic_init(&g->refs, 1);
  atomic_init(&g->members, 0);
  atomic_init(&g->out, 0);
  atomic_init(&g->silent[0], 0);
  atomic_init(&g->silent[1], 0);
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

int64_t ap_health_group_period(int64_t now_ms) {
  return now_ms > 0 ? now_ms / AP_HEALTH_PEER_WINDOW_MS : 0;
}

void ap_health_group_count_silent(ap_health_group *group, int64_t period) {
  if (group == NULL || period < 0) return;
  _Atomic uint64_t *word = &group->silent[period & 1];
  uint64_t seen = atomic_load_explicit(word, memory_order_relaxed);
  for (;;) {
    const int64_t held = (int64_t)(seen >> COUNT_BITS);
    uint64_t next;
    if (held == period) {
      if ((seen & COUNT_MASK) == COUNT_MASK) return; /* saturated */
      next = seen + 1;
    } else if (held < period) {
      next = ((uint64_t)period << COUNT_BITS) | 1; /* a newer period starts over */
    } else {
      return; /* older than what the word holds */
    }
    if (atomic_compare_exchange_weak_explicit(word, &seen, next, memory_order_relaxed,
                                              memory_order_relaxed))
      return;
  }
}

uint32_t ap_health_group_silent(const ap_health_group *group, int64_t period) {
  if (group == NULL || period < 0) return 0;
  const uint64_t v = atomic_load_explicit(&group->silent[period & 1], memory_order_relaxed);
  return (int64_t)(v >> COUNT_BITS) == period ? (uint32_t)(v & COUNT_MASK) : 0;
}

int ap_health_group_silence_stands_out(const ap_health_group *group, int64_t now_ms) {
  if (group == NULL) return 1;
  const int64_t period = ap_health_group_period(now_ms);
  uint32_t silent = ap_health_group_silent(group, period);
  const uint32_t before = period > 0 ? ap_health_group_silent(group, period - 1) : 0;
  if (before > silent) silent = before;
  uint32_t members = atomic_load_explicit(&group->members, memory_order_relaxed);
  if (members == 0) members = 1;
  return silent <= members / 2;
}
