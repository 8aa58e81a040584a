/*
 * ap_membership: debounced ring membership (removal grace, coalescing).
 *
 * Members are kept sorted by strcmp so an update is one merge of two sorted
 * lists. Applying a list never fails half-way: the strings it needs are
 * copied first, then the merge only moves pointers.
 */
#include "policy/core/membership/ap_membership.h"
#include "policy/core/membership/ap_membership_testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/ap_limits.h"

typedef struct member {
  char *address; /* owned */
  double weight;
  int draining;
  uint64_t drain_deadline_ms;
} member;

/* An input entry: borrowed address (the caller's, or a held copy). */
typedef struct listed {
  const char *address;
  double weight;
} listed;

struct ap_membership {
  ap_membership_params params;
  member *members; /* strcmp order */
  size_t count;
  size_t draining;
  /* The update held for the coalescing window (owned strings). */
  int has_held;
  listed *held;
  size_t held_count;
  /* Clock checks and the coalescing window. */
  int has_time;
  uint64_t last_now_ms;
  int has_ring_change;
  uint64_t last_ring_change_ms;
  uint64_t ring_version;
};

void ap_membership_params_init(ap_membership_params *params) {
  if (params == NULL) return;
  params->removal_grace_ms = 0;
  params->coalesce_ms = 0;
  params->max_members = 0;
}

int ap_membership_create(const ap_membership_params *params,
                         ap_membership **out, ap_error *err) {
  if (out != NULL) *out = NULL;
  if (params == NULL) {
    return ap_error_set(err, AP_EINVAL, "params is NULL");
  }
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out is NULL");
  if (params->removal_grace_ms > AP_MEMBERSHIP_MAX_MS) {
    return ap_error_set(err, AP_ERANGE,
                        "removal_grace_ms %llu is above the maximum %llu",
                        (unsigned long long)params->removal_grace_ms,
                        (unsigned long long)AP_MEMBERSHIP_MAX_MS);
  }
  if (params->coalesce_ms > AP_MEMBERSHIP_MAX_MS) {
    return ap_error_set(err, AP_ERANGE,
                        "coalesce_ms %llu is above the maximum %llu",
                        (unsigned long long)params->coalesce_ms,
                        (unsigned long long)AP_MEMBERSHIP_MAX_MS);
  }
  if (params->max_members > AP_MAX_ENDPOINTS) {
    return ap_error_set(err, AP_ERANGE, "max_members %zu is above the maximum %zu",
                        params->max_members, AP_MAX_ENDPOINTS);
  }
  ap_membership *m = calloc(1, sizeof(*m));
  if (m == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory creating a membership");
  }
  m->params = *params;
  if (m->params.max_members == 0) m->params.max_members = AP_MAX_ENDPOINTS;
  *out = m;
  ap_error_clear(err);
  return AP_OK;
}

static void free_held(ap_membership *m) {
  for (size_t i = 0; i < m->held_count; ++i) {
    free((char *)m->held[i].address);
  }
  free(m->held);
  m->held = NULL;
  m->held_count = 0;
  m->has_held = 0;
}

void ap_membership_destroy(ap_membership *membership) {
  if (membership == NULL) return;
  for (size_t i = 0; i < membership->count; ++i) {
    free(membership->members[i].address);
  }
  free(membership->members);
  free_held(membership);
  free(membership);
}

static int check_time(const ap_membership *m, uint64_t now_ms, ap_error *err) {
  if (now_ms > AP_MEMBERSHIP_MAX_TIME_MS) {
    return ap_error_set(err, AP_EINVAL,
                        "now_ms %llu is above the maximum %llu",
                        (unsigned long long)now_ms,
                        (unsigned long long)AP_MEMBERSHIP_MAX_TIME_MS);
  }
  if (m->has_time && now_ms < m->last_now_ms) {
    return ap_error_set(err, AP_EINVAL,
                        "now_ms %llu is before the previous call's %llu "
                        "(the clock must be monotonic)",
                        (unsigned long long)now_ms,
                        (unsigned long long)m->last_now_ms);
  }
  return AP_OK;
}

static void note_time(ap_membership *m, uint64_t now_ms) {
  m->has_time = 1;
  m->last_now_ms = now_ms;
}

/* End of the coalescing window opened by the last ring change; 0 if none. */
static uint64_t window_end(const ap_membership *m) {
  if (m->params.coalesce_ms == 0 || !m->has_ring_change) return 0;
  return m->last_ring_change_ms + m->params.coalesce_ms;
}

static int compare_listed(const void *a, const void *b) {
  return strcmp(((const listed *)a)->address, ((const listed *)b)->address);
}

/* Validates the caller's list and returns it sorted in *out (malloc'd, NULL
 * when n == 0; the addresses stay the caller's). */
static int sort_list(const char *const *addresses, const double *weights,
                     size_t n, listed **out, ap_error *err) {
  *out = NULL;
  if (n > AP_MAX_ENDPOINTS) {
    return ap_error_set(err, AP_ERANGE, "n %zu is above the maximum %zu", n,
                        AP_MAX_ENDPOINTS);
  }
  if (n == 0) return AP_OK;
  if (addresses == NULL) {
    return ap_error_set(err, AP_EINVAL, "addresses is NULL with n = %zu", n);
  }
  for (size_t i = 0; i < n; ++i) {
    if (addresses[i] == NULL || addresses[i][0] == '\0') {
      return ap_error_set(err, AP_EINVAL, "addresses[%zu] is %s", i,
                          addresses[i] == NULL ? "NULL" : "empty");
    }
    if (weights != NULL && !(isfinite(weights[i]) && weights[i] > 0)) {
      return ap_error_set(err, AP_EINVAL,
                          "weights[%zu] (%s) is %g: must be finite and > 0",
                          i, addresses[i], weights[i]);
    }
  }
  listed *list = malloc(n * sizeof(*list));
  if (list == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory sorting %zu addresses",
                        n);
  }
  for (size_t i = 0; i < n; ++i) {
    list[i].address = addresses[i];
    list[i].weight = weights != NULL ? weights[i] : 1.0;
  }
  qsort(list, n, sizeof(*list), compare_listed);
  for (size_t i = 1; i < n; ++i) {
    if (strcmp(list[i - 1].address, list[i].address) == 0) {
      int rc = ap_error_set(err, AP_EINVAL, "duplicate address '%s'",
                            list[i].address);
      free(list);
      return rc;
    }
  }
  *out = list;
  return AP_OK;
}

static char *copy_string(const char *s) {
  size_t len = strlen(s) + 1;
  char *copy = malloc(len);
  if (copy != NULL) memcpy(copy, s, len);
  return copy;
}

/* Keeps `list` (sorted, n entries) to be applied at the window's end. */
static int hold(ap_membership *m, const listed *list, size_t n,
                ap_error *err) {
  listed *held = NULL;
  if (n > 0) {
    held = malloc(n * sizeof(*held));
    if (held == NULL) {
      return ap_error_set(err, AP_ENOMEM, "out of memory holding an update");
    }
    for (size_t i = 0; i < n; ++i) {
      held[i].weight = list[i].weight;
      held[i].address = copy_string(list[i].address);
      if (held[i].address == NULL) {
        for (size_t k = 0; k < i; ++k) free((char *)held[k].address);
        free(held);
        return ap_error_set(err, AP_ENOMEM, "out of memory holding an update");
      }
    }
  }
  free_held(m);
  m->held = held;
  m->held_count = n;
  m->has_held = 1;
  return AP_OK;
}

static void record_changes(ap_membership *m, unsigned changes,
                           uint64_t now_ms) {
  if (changes & AP_MEMBERSHIP_RING_CHANGED) {
    ++m->ring_version;
    m->has_ring_change = 1;
    m->last_ring_change_ms = now_ms;
  }
}

/* 1 when `list` (sorted) is exactly the listed (non-draining) members with
 * their weights: applying it would change nothing. */
static int same_as_listed(const ap_membership *m, const listed *list,
                          size_t n) {
  if (n != m->count - m->draining) return 0;
  size_t j = 0;
  for (size_t i = 0; i < m->count; ++i) {
    const member *e = &m->members[i];
    if (e->draining) continue;
    if (strcmp(e->address, list[j].address) != 0 ||
        e->weight != list[j].weight) {
      return 0;
    }
    ++j;
  }
  return 1;
}

typedef struct drain_slot {
  uint64_t deadline_ms;
  size_t index;
} drain_slot;

static int compare_drain_slots(const void *a, const void *b) {
  const drain_slot *x = a, *y = b;
  if (x->deadline_ms != y->deadline_ms)
    return x->deadline_ms < y->deadline_ms ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Keeps live + draining within max_members: the draining members that
 * would leave first (earliest deadline, then address order) leave now.
 * Live members are never dropped (the update already bounds them). Returns
 * the change bits; on allocation failure drops the draining members from
 * the end, still within the bound. */
static unsigned cap_draining(ap_membership *m) {
  if (m->count <= m->params.max_members || m->draining == 0) return 0;
  size_t excess = m->count - m->params.max_members;
  if (excess > m->draining) excess = m->draining;
  drain_slot *slots = malloc(m->draining * sizeof(*slots));
  size_t d = 0;
  for (size_t i = 0; i < m->count; ++i) {
    if (!m->members[i].draining) continue;
    if (slots != NULL) slots[d] = (drain_slot){m->members[i].drain_deadline_ms, i};
    ++d;
  }
  if (slots != NULL) {
    qsort(slots, d, sizeof(*slots), compare_drain_slots);
    for (size_t k = 0; k < excess; ++k) m->members[slots[k].index].draining = 2;
    free(slots);
  } else {
    size_t left = excess;
    for (size_t i = m->count; i > 0 && left > 0; --i) {
      if (m->members[i - 1].draining) {
        m->members[i - 1].draining = 2;
        --left;
      }
    }
  }
  size_t out = 0;
  for (size_t i = 0; i < m->count; ++i) {
    if (m->members[i].draining == 2) {
      free(m->members[i].address);
      continue;
    }
    m->members[out++] = m->members[i];
  }
  m->count = out;
  m->draining -= excess;
  return AP_MEMBERSHIP_RING_CHANGED;
}

/* Makes `list` (sorted) the resolver's view at now_ms: new addresses join,
 * listed ones take their weight and stop draining, missing ones start
 * draining (or leave, with no grace or once their grace has expired). */
static int apply(ap_membership *m, const listed *list, size_t n,
                 uint64_t now_ms, unsigned *changes, ap_error *err) {
  const size_t capacity = m->count + n;
  member *next = capacity > 0 ? malloc(capacity * sizeof(*next)) : NULL;
  char **fresh = n > 0 ? calloc(n, sizeof(*fresh)) : NULL;
  if ((capacity > 0 && next == NULL) || (n > 0 && fresh == NULL)) {
    free(next);
    free(fresh);
    return ap_error_set(err, AP_ENOMEM, "out of memory applying an update");
  }
  /* Pass 1: copy the addresses that are not members yet. */
  for (size_t i = 0, j = 0; j < n; ++j) {
    while (i < m->count && strcmp(m->members[i].address, list[j].address) < 0) {
      ++i;
    }
    if (i < m->count && strcmp(m->members[i].address, list[j].address) == 0) {
      continue;
    }
    fresh[j] = copy_string(list[j].address);
    if (fresh[j] == NULL) {
      for (size_t k = 0; k < j; ++k) free(fresh[k]);
      free(fresh);
      free(next);
      return ap_error_set(err, AP_ENOMEM, "out of memory applying an update");
    }
  }
  /* Pass 2: merge; cannot fail. */
  unsigned changed = 0;
  size_t out = 0, draining = 0, i = 0, j = 0;
  const uint64_t grace = m->params.removal_grace_ms;
  while (i < m->count || j < n) {
    int cmp;
    if (i == m->count) {
      cmp = 1;
    } else if (j == n) {
      cmp = -1;
    } else {
      cmp = strcmp(m->members[i].address, list[j].address);
    }
    if (cmp == 0) { /* still listed */
      member kept = m->members[i++];
      if (kept.weight != list[j].weight) changed |= AP_MEMBERSHIP_RING_CHANGED;
      if (kept.draining) changed |= AP_MEMBERSHIP_DRAINING_CHANGED;
      kept.weight = list[j++].weight;
      kept.draining = 0;
      kept.drain_deadline_ms = 0;
      next[out++] = kept;
    } else if (cmp > 0) { /* joins */
      member joined = {fresh[j], list[j].weight, 0, 0};
      ++j;
      next[out++] = joined;
      changed |= AP_MEMBERSHIP_RING_CHANGED;
    } else { /* not listed */
      member gone = m->members[i++];
      if (!gone.draining && grace > 0) {
        gone.draining = 1;
        gone.drain_deadline_ms = now_ms + grace;
        changed |= AP_MEMBERSHIP_DRAINING_CHANGED;
      }
      if (gone.draining && gone.drain_deadline_ms > now_ms) {
        ++draining;
        next[out++] = gone;
      } else {
        free(gone.address);
        changed |= AP_MEMBERSHIP_RING_CHANGED;
      }
    }
  }
  free(fresh);
  free(m->members);
  m->members = next;
  m->count = out;
  m->draining = draining;
  changed |= cap_draining(m);
  record_changes(m, changed, now_ms);
  *changes = changed;
  return AP_OK;
}

/* Removes the draining members whose grace has expired at now_ms. */
static unsigned expire(ap_membership *m, uint64_t now_ms) {
  size_t out = 0;
  unsigned changed = 0;
  for (size_t i = 0; i < m->count; ++i) {
    member *e = &m->members[i];
    if (e->draining && e->drain_deadline_ms <= now_ms) {
      free(e->address);
      --m->draining;
      changed = AP_MEMBERSHIP_RING_CHANGED;
      continue;
    }
    m->members[out++] = *e;
  }
  m->count = out;
  record_changes(m, changed, now_ms);
  return changed;
}

int ap_membership_update(ap_membership *membership,
                         const char *const *addresses, const double *weights,
                         size_t n, uint64_t now_ms, unsigned *changes,
                         ap_error *err) {
  unsigned ignored;
  if (changes == NULL) changes = &ignored;
  *changes = 0;
  if (membership == NULL) {
    return ap_error_set(err, AP_EINVAL, "membership is NULL");
  }
  int rc = check_time(membership, now_ms, err);
  if (rc != AP_OK) return rc;
  listed *list = NULL;
  rc = sort_list(addresses, weights, n, &list, err);
  if (rc != AP_OK) return rc;
  if (now_ms < window_end(membership)) {
    if (same_as_listed(membership, list, n)) {
      /* The latest list wins and it changes nothing: drop what was held. */
      free_held(membership);
    } else {
      rc = hold(membership, list, n, err);
      if (rc == AP_OK) *changes = AP_MEMBERSHIP_HELD;
    }
  } else {
    rc = apply(membership, list, n, now_ms, changes, err);
    /* This list supersedes anything held. */
    if (rc == AP_OK) free_held(membership);
  }
  free(list);
  if (rc != AP_OK) return rc;
  note_time(membership, now_ms);
  ap_error_clear(err);
  return AP_OK;
}

int ap_membership_tick(ap_membership *membership, uint64_t now_ms,
                       unsigned *changes, ap_error *err) {
  unsigned ignored;
  if (changes == NULL) changes = &ignored;
  *changes = 0;
  if (membership == NULL) {
    return ap_error_set(err, AP_EINVAL, "membership is NULL");
  }
  int rc = check_time(membership, now_ms, err);
  if (rc != AP_OK) return rc;
  if (now_ms >= window_end(membership)) {
    if (membership->has_held) {
      rc = apply(membership, membership->held, membership->held_count, now_ms,
                 changes, err);
      if (rc != AP_OK) return rc;
      free_held(membership);
    } else if (membership->draining > 0) {
      *changes = expire(membership, now_ms);
    }
  }
  note_time(membership, now_ms);
  ap_error_clear(err);
  return AP_OK;
}

uint64_t ap_membership_next_deadline(const ap_membership *membership) {
  if (membership == NULL) return AP_MEMBERSHIP_NO_DEADLINE;
  const uint64_t end = window_end(membership);
  uint64_t next = AP_MEMBERSHIP_NO_DEADLINE;
  if (membership->has_held) next = end;
  for (size_t i = 0; i < membership->count; ++i) {
    const member *e = &membership->members[i];
    if (!e->draining) continue;
    uint64_t due = e->drain_deadline_ms > end ? e->drain_deadline_ms : end;
    if (due < next) next = due;
  }
  return next;
}

size_t ap_membership_count(const ap_membership *membership) {
  return membership != NULL ? membership->count : 0;
}

size_t ap_membership_draining_count(const ap_membership *membership) {
  return membership != NULL ? membership->draining : 0;
}

int ap_membership_get(const ap_membership *membership, size_t index,
                      ap_membership_entry *entry, ap_error *err) {
  if (membership == NULL) {
    return ap_error_set(err, AP_EINVAL, "membership is NULL");
  }
  if (entry == NULL) return ap_error_set(err, AP_EINVAL, "entry is NULL");
  if (index >= membership->count) {
    return ap_error_set(err, AP_ERANGE, "index %zu is not below count %zu",
                        index, membership->count);
  }
  const member *e = &membership->members[index];
  entry->address = e->address;
  entry->weight = e->weight;
  entry->draining = e->draining;
  entry->drain_deadline_ms = e->drain_deadline_ms;
  ap_error_clear(err);
  return AP_OK;
}

int ap_membership_find(const ap_membership *membership, const char *address,
                       size_t *index, ap_error *err) {
  if (membership == NULL) {
    return ap_error_set(err, AP_EINVAL, "membership is NULL");
  }
  if (address == NULL) return ap_error_set(err, AP_EINVAL, "address is NULL");
  if (index == NULL) return ap_error_set(err, AP_EINVAL, "index is NULL");
  size_t lo = 0, hi = membership->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int cmp = strcmp(membership->members[mid].address, address);
    if (cmp == 0) {
      *index = mid;
      ap_error_clear(err);
      return AP_OK;
    }
    if (cmp < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return ap_error_set(err, AP_EUNAVAIL, "'%s' is not a member", address);
}

int ap_membership_has_held(const ap_membership *membership) {
  return membership != NULL && membership->has_held;
}

uint64_t ap_membership_ring_version(const ap_membership *membership) {
  return membership != NULL ? membership->ring_version : 0;
}
