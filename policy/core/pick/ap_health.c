/* ap_health: stuck detection, ejection on a failure run or on a silence
 * while the peers answer, within the group's bound; the peers' sweep. */
#define _GNU_SOURCE /* CLOCK_MONOTONIC_COARSE */
#include "policy/core/pick/ap_health.h"
#include "policy/core/pick/ap_health_group_internal.h"
#include "policy/core/pick/ap_health_testing.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { REASON_NONE = 0, REASON_FAILURES = 1, REASON_STUCK = 2, REASON_PROBE = 3 };

#define AP_HEALTH_LINE 64

struct ap_health {
  _Atomic int64_t progress_ms;      /* last call end, or idle -> busy */
  /* 0: in. Otherwise (until_ms << 1) | slot: ejected until until_ms (>= 1),
   * on probation from then on; slot 1 when it holds one of the group's
   * slots (an ejection and its probation), 0 on probation without one
   * (after a silence, or at the bound). One word, so the slot is given
   * back exactly once by whoever ends the ejection. */
  _Atomic int64_t ejection;
  _Atomic uint32_t failure_run;
  _Atomic uint32_t ejection_len_ms; /* the current or last ejection */
  _Atomic uint32_t reason;          /* REASON_* of the last ejection */
  _Atomic uint32_t latency_x16;     /* EWMA of latency, ms * 16; 0: none */
  _Atomic uint64_t ejections;
  _Atomic uint32_t silent_run;      /* 1: the run began after a silence */
  _Atomic uint64_t failures;        /* counted failures since creation */
  ap_health_group *group;           /* NULL: alone */
  /* Only ap_health_sweep() reads and writes these (one thread at a time):
   * the counts at the start of the member's current window, and its
   * failure share over its last whole window (ppm; -1: none yet). */
  uint64_t window_calls, window_failures;
  int64_t share_ppm;
};

static int64_t pack(int64_t until_ms, int slot) {
  if (until_ms < 1) until_ms = 1; /* 0 means "in" */
  return (until_ms << 1) | (slot ? 1 : 0);
}
static int64_t until_of(int64_t ejection) { return ejection >> 1; }
static int holds_slot(int64_t ejection) { return (int)(ejection & 1); }

void ap_health_config_init(ap_health_config *config) {
  if (config == NULL) return;
  config->eject_after_failures = 5;
  config->ejection_ms = 3000;
  config->max_ejection_ms = 6000;
  config->stuck_call_ms = 1000;
  config->stuck_call_min_ms = 25;
  config->stuck_latency_factor = 8;
  config->max_ejection_percent = 50;
}

void ap_health_config_fit_defaults(ap_health_config *config, unsigned given) {
  if (config == NULL) return;
  if (!(given & AP_HEALTH_GAVE_MAX_EJECTION_MS) &&
      config->max_ejection_ms < config->ejection_ms)
    config->max_ejection_ms = config->ejection_ms;
  if (!(given & AP_HEALTH_GAVE_STUCK_CALL_MIN_MS) && config->stuck_call_ms > 0 &&
      config->stuck_call_min_ms > config->stuck_call_ms)
    config->stuck_call_min_ms = config->stuck_call_ms;
}

/* Appends one "<field>: <what is wrong>" entry to `list` ("; " between
 * entries); an entry that does not fit whole is left out. */
static void add_violation(char *list, size_t cap, const char *fmt, ...) {
  char entry[128];
  va_list args;
  va_start(args, fmt);
  const int n = vsnprintf(entry, sizeof entry, fmt, args);
  va_end(args);
  const size_t used = strlen(list);
  const size_t sep = used > 0 ? 2 : 0;
  if (n < 0 || (size_t)n >= sizeof entry || used + sep + (size_t)n >= cap) return;
  memcpy(list + used, "; ", sep);
  memcpy(list + used + sep, entry, (size_t)n + 1);
}

int ap_health_config_validate(const ap_health_config *config, ap_error *err) {
  if (config == NULL) return ap_error_set(err, AP_EINVAL, "config is NULL");
  const ap_health_config *c = config;
  char list[sizeof(((ap_error *)0)->message)] = ""; /* an ap_error's length */
  const size_t cap = sizeof list;
  if (c->eject_after_failures > AP_HEALTH_MAX_FAILURES)
    add_violation(list, cap, "ejectAfterFailures: must be at most %u, got %u",
                  AP_HEALTH_MAX_FAILURES, c->eject_after_failures);
  if (c->ejection_ms < 1 || c->ejection_ms > AP_HEALTH_MAX_MS)
    add_violation(list, cap, "ejectionMs: must be in [1, %u], got %u", AP_HEALTH_MAX_MS,
                  c->ejection_ms);
  if (c->max_ejection_ms > AP_HEALTH_MAX_MS)
    add_violation(list, cap, "maxEjectionMs: must be at most %u, got %u", AP_HEALTH_MAX_MS,
                  c->max_ejection_ms);
  else if (c->max_ejection_ms < c->ejection_ms)
    add_violation(list, cap, "maxEjectionMs: must be at least ejectionMs (%u), got %u",
                  c->ejection_ms, c->max_ejection_ms);
  if (c->stuck_call_ms > AP_HEALTH_MAX_MS)
    add_violation(list, cap, "stuckCallMs: must be at most %u, got %u", AP_HEALTH_MAX_MS,
                  c->stuck_call_ms);
  if (c->stuck_call_min_ms > AP_HEALTH_MAX_MS)
    add_violation(list, cap, "stuckCallMinMs: must be at most %u, got %u", AP_HEALTH_MAX_MS,
                  c->stuck_call_min_ms);
  else if (c->stuck_call_ms > 0 && c->stuck_call_min_ms > c->stuck_call_ms)
    add_violation(list, cap, "stuckCallMinMs: must be at most stuckCallMs (%u), got %u",
                  c->stuck_call_ms, c->stuck_call_min_ms);
  if (c->stuck_latency_factor > AP_HEALTH_MAX_LATENCY_FACTOR)
    add_violation(list, cap, "stuckLatencyFactor: must be at most %u, got %u",
                  AP_HEALTH_MAX_LATENCY_FACTOR, c->stuck_latency_factor);
  if (c->max_ejection_percent > AP_HEALTH_MAX_EJECTION_PERCENT)
    add_violation(list, cap, "maxEjectionPercent: must be at most %u, got %u",
                  AP_HEALTH_MAX_EJECTION_PERCENT, c->max_ejection_percent);
  if (list[0] != '\0') return ap_error_set(err, AP_EINVAL, "%s", list);
  return AP_OK;
}

const char *ap_health_state_name(ap_health_state state) {
  switch (state) {
    case AP_HEALTH_OK: return "ok";
    case AP_HEALTH_EJECTED: return "ejected";
    case AP_HEALTH_PROBATION: return "probation";
    case AP_HEALTH_STUCK: return "stuck";
  }
  return "unknown";
}

_Static_assert(sizeof(struct ap_health) <= AP_HEALTH_FOOTPRINT,
               "AP_HEALTH_FOOTPRINT must hold an ap_health");

ap_health *ap_health_init_at(void *memory, size_t size, ap_health_group *group) {
  if (memory == NULL || size < AP_HEALTH_FOOTPRINT || (uintptr_t)memory % AP_HEALTH_LINE != 0)
    return NULL;
  ap_health *h = memory;
  atomic_init(&h->progress_ms, ap_health_now_ms()); /* no false "stuck" before a start */
  atomic_init(&h->ejection, 0);
  atomic_init(&h->failure_run, 0);
  atomic_init(&h->ejection_len_ms, 0);
  atomic_init(&h->reason, REASON_NONE);
  atomic_init(&h->latency_x16, 0);
  atomic_init(&h->ejections, 0);
  atomic_init(&h->silent_run, 0);
  atomic_init(&h->failures, 0);
  h->group = group;
  h->window_calls = 0;
  h->window_failures = 0;
  h->share_ppm = -1;
  ap_health_group_ref(group);
  return h;
}

void ap_health_fini(ap_health *health) {
  if (health == NULL) return;
  const int64_t state = atomic_load_explicit(&health->ejection, memory_order_relaxed);
  if (holds_slot(state)) ap_health_group_give_slot(health->group);
  if (state != 0) ap_health_group_member_back(health->group);
  ap_health_group_unref(health->group);
}

ap_health *ap_health_create_in(ap_health_group *group) {
  /* Lines of its own: no other data's writes share them. */
  void *memory = aligned_alloc(AP_HEALTH_LINE, AP_HEALTH_FOOTPRINT);
  if (memory == NULL) return NULL;
  return ap_health_init_at(memory, AP_HEALTH_FOOTPRINT, group);
}

ap_health *ap_health_create(void) { return ap_health_create_in(NULL); }

void ap_health_destroy(ap_health *health) {
  if (health == NULL) return;
  ap_health_fini(health);
  free(health);
}

/* Stores now_ms as the last progress unless it is already there: many
 * calls end within one tick of the coarse clock, and a store of the same
 * value would still take the line from every other core. */
static void note_progress(ap_health *h, int64_t now_ms) {
  if (atomic_load_explicit(&h->progress_ms, memory_order_relaxed) != now_ms)
    atomic_store_explicit(&h->progress_ms, now_ms, memory_order_relaxed);
}

void ap_health_on_start(ap_health *health, int64_t outstanding_before, int64_t now_ms) {
  if (health == NULL || outstanding_before > 0) return;
  note_progress(health, now_ms);
}

uint32_t ap_health_stuck_threshold_ms(const ap_health *health, const ap_health_config *config) {
  if (config == NULL || config->stuck_call_ms == 0) return 0;
  const uint32_t x16 =
      health ? atomic_load_explicit(&health->latency_x16, memory_order_relaxed) : 0;
  if (config->stuck_latency_factor == 0 || x16 == 0) return config->stuck_call_ms;
  uint64_t t = ((uint64_t)x16 * config->stuck_latency_factor + 15) / 16;
  if (t < config->stuck_call_min_ms) t = config->stuck_call_min_ms;
  if (t > config->stuck_call_ms) t = config->stuck_call_ms;
  return (uint32_t)t;
}

/* On probation from now, without a slot (at the bound), unless a
 * concurrent end changed the state first. */
static void probation(ap_health *h, int64_t seen, int64_t now_ms) {
  if (seen != 0 && !holds_slot(seen) && until_of(seen) <= now_ms) return; /* already */
  const int was_in = seen == 0;
  if (atomic_compare_exchange_strong_explicit(&h->ejection, &seen, pack(now_ms, 0),
                                              memory_order_relaxed, memory_order_relaxed) &&
      was_in)
    ap_health_group_member_away(h->group);
}

/* Ejects from now unless a concurrent end changed the state first (one
 * ejection per run, counted once): the first for ejection_ms, each one
 * after a failed probe twice the last, up to max_ejection_ms. It takes a
 * slot of the group unless it holds one (a failed probe); with none free
 * it is on probation instead. */
static void eject(ap_health *h, int64_t seen, uint32_t reason, const ap_health_config *c,
                  int64_t now_ms) {
  uint64_t len = c->ejection_ms;
  if (reason == REASON_PROBE) {
    len = 2 * (uint64_t)atomic_load_explicit(&h->ejection_len_ms, memory_order_relaxed);
    if (len < c->ejection_ms) len = c->ejection_ms;
  }
  if (len > c->max_ejection_ms) len = c->max_ejection_ms >= c->ejection_ms ? c->max_ejection_ms
                                                                        : c->ejection_ms;
  const int had_slot = holds_slot(seen), was_in = seen == 0;
  if (!had_slot && !ap_health_group_take_slot(h->group, c->max_ejection_percent)) {
    probation(h, seen, now_ms); /* the bound: stays in, one call at a time */
    return;
  }
  if (atomic_compare_exchange_strong_explicit(&h->ejection, &seen,
                                              pack(now_ms + (int64_t)len, 1),
                                              memory_order_relaxed, memory_order_relaxed)) {
    atomic_store_explicit(&h->ejection_len_ms, (uint32_t)len, memory_order_relaxed);
    atomic_store_explicit(&h->reason, reason, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->ejections, 1, memory_order_relaxed);
    if (was_in) ap_health_group_member_away(h->group);
  } else if (!had_slot) {
    ap_health_group_give_slot(h->group);
  }
}

/* Back in: ends an ejection or a probation, giving back its slot. */
static void reinstate(ap_health *h) {
  const int64_t old = atomic_exchange_explicit(&h->ejection, 0, memory_order_relaxed);
  if (holds_slot(old)) ap_health_group_give_slot(h->group);
  if (old != 0) ap_health_group_member_back(h->group);
  atomic_store_explicit(&h->ejection_len_ms, 0, memory_order_relaxed);
}

void ap_health_on_finish(ap_health *health, int failed, const ap_health_config *config,
                         int64_t now_ms) {
  if (health == NULL || config == NULL) return;
  /* The last progress before this end (did the call end a silence?). Read,
   * then stored only when it changes (note_progress): a success on a
   * healthy endpoint writes nothing shared. Any end is progress. */
  const int64_t progress = atomic_load_explicit(&health->progress_ms, memory_order_relaxed);
  note_progress(health, now_ms);
  const int64_t state = atomic_load_explicit(&health->ejection, memory_order_relaxed);
  if (!failed) {
    if (atomic_load_explicit(&health->failure_run, memory_order_relaxed) != 0) {
      atomic_store_explicit(&health->failure_run, 0, memory_order_relaxed);
      atomic_store_explicit(&health->silent_run, 0, memory_order_relaxed);
    }
    if (state != 0) reinstate(health);
    return;
  }
  atomic_fetch_add_explicit(&health->failures, 1, memory_order_relaxed);
  const uint32_t run =
      atomic_fetch_add_explicit(&health->failure_run, 1, memory_order_relaxed) + 1;
  if (config->eject_after_failures == 0) return;
  /* Did this run begin after a silence? Then this failure, a later one in
   * the same run, is evidence of a stop while the peers answer. */
  const int after_silence = run >= 2 && atomic_load_explicit(&health->silent_run,
                                                             memory_order_relaxed) != 0;
  const uint32_t stuck = ap_health_stuck_threshold_ms(health, config);
  if (run == 1 && stuck > 0 && now_ms - progress > (int64_t)stuck)
    atomic_store_explicit(&health->silent_run, 1, memory_order_relaxed);
  const int stopped = after_silence && ap_health_group_peers_quiet(health->group);
  if (state != 0) {
    /* One during an ejection (a call sent before it) changes nothing. */
    if (now_ms < until_of(state)) return;
    if (holds_slot(state)) {
      eject(health, state, REASON_PROBE, config, now_ms); /* a failed probe: longer */
    } else if (run >= config->eject_after_failures || stopped) {
      /* on probation at the bound: a slot may be free now */
      eject(health, state, stopped ? REASON_STUCK : REASON_FAILURES, config, now_ms);
    }
    return;
  }
  if (stopped) {
    eject(health, 0, REASON_STUCK, config, now_ms);
  } else if (run >= config->eject_after_failures) {
    eject(health, 0, REASON_FAILURES, config, now_ms);
  }
}

static int by_value(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int ap_health_sweep(ap_health_group *group, ap_health *const *members,
                    const uint64_t *calls_ended, size_t n, ap_error *err) {
  if (group == NULL) return ap_error_set(err, AP_EINVAL, "group is NULL");
  if (n > 0 && (members == NULL || calls_ended == NULL))
    return ap_error_set(err, AP_EINVAL, "members or calls_ended is NULL with n = %zu", n);
  int64_t *shares = n > 0 ? malloc(n * sizeof *shares) : NULL;
  if (n > 0 && shares == NULL) return ap_error_set(err, AP_ENOMEM, "out of memory");
  size_t known = 0, counted = 0;
  for (size_t i = 0; i < n; ++i) {
    ap_health *h = members[i];
    if (h == NULL) continue;
    counted++;
    const uint64_t failures = atomic_load_explicit(&h->failures, memory_order_relaxed);
    /* a new call counter below the old one (a different counter): start over */
    if (calls_ended[i] < h->window_calls || failures < h->window_failures) {
      h->window_calls = calls_ended[i];
      h->window_failures = failures;
    }
    const uint64_t calls = calls_ended[i] - h->window_calls;
    if (calls >= AP_HEALTH_MIN_VOLUME) { /* a whole window: its share */
      uint64_t failed = failures - h->window_failures;
      if (failed > calls) failed = calls; /* failures counted before their calls ended */
      h->share_ppm = (int64_t)(failed * 1000000 / calls);
      h->window_calls = calls_ended[i];
      h->window_failures = failures;
    }
    if (h->share_ppm >= 0) shares[known++] = h->share_ppm;
  }
  int64_t peers = -1;
  /* the lower median, once at least half of the members have a share */
  if (known > 0 && 2 * known >= counted) {
    qsort(shares, known, sizeof *shares, by_value);
    peers = shares[(known - 1) / 2];
  }
  free(shares);
  ap_health_group_set_peer_failure_ppm(group, peers);
  return AP_OK;
}

int64_t ap_health_failure_share_ppm(const ap_health *health) {
  return health ? health->share_ppm : -1;
}

void ap_health_on_idle_success(ap_health *health) {
  if (health == NULL) return;
  if (atomic_load_explicit(&health->failure_run, memory_order_relaxed) != 0) {
    atomic_store_explicit(&health->failure_run, 0, memory_order_relaxed);
    atomic_store_explicit(&health->silent_run, 0, memory_order_relaxed);
  }
  if (atomic_load_explicit(&health->ejection, memory_order_relaxed) != 0) reinstate(health);
}

void ap_health_record_latency(ap_health *health, int64_t latency_ms) {
  if (health == NULL || latency_ms < 0) return;
  if (latency_ms > AP_HEALTH_MAX_MS) latency_ms = AP_HEALTH_MAX_MS;
  const uint64_t sample = (uint64_t)latency_ms * 16;
  const uint32_t old = atomic_load_explicit(&health->latency_x16, memory_order_relaxed);
  uint64_t next = old == 0 ? sample : (7 * (uint64_t)old + sample + 4) / 8;
  if (next == 0) next = 1; /* 0 means "no sample": a sub-ms EWMA stays 1/16 ms */
  if (next > UINT32_MAX) next = UINT32_MAX;
  /* Unchanged (a steady latency): no store, so the line stays shared. */
  if (next != old) atomic_store_explicit(&health->latency_x16, (uint32_t)next, memory_order_relaxed);
}

double ap_health_latency_ms(const ap_health *health) {
  const uint32_t x16 =
      health ? atomic_load_explicit(&health->latency_x16, memory_order_relaxed) : 0;
  return x16 == 0 ? -1.0 : (double)x16 / 16.0;
}

void ap_health_reset(ap_health *health, int64_t now_ms) {
  if (health == NULL) return;
  atomic_store_explicit(&health->progress_ms, now_ms, memory_order_relaxed);
  atomic_store_explicit(&health->failure_run, 0, memory_order_relaxed);
  atomic_store_explicit(&health->silent_run, 0, memory_order_relaxed);
  reinstate(health);
  atomic_store_explicit(&health->reason, REASON_NONE, memory_order_relaxed);
}

const char *ap_health_ejection_reason(const ap_health *health) {
  switch (health ? atomic_load_explicit(&health->reason, memory_order_relaxed) : REASON_NONE) {
    case REASON_FAILURES: return "failures";
    case REASON_STUCK: return "stuck";
    case REASON_PROBE: return "probe";
  }
  return "none";
}

int ap_health_holds_slot(const ap_health *health) {
  return health ? holds_slot(atomic_load_explicit(&health->ejection, memory_order_relaxed)) : 0;
}

uint32_t ap_health_ejection_length_ms(const ap_health *health) {
  return health ? atomic_load_explicit(&health->ejection_len_ms, memory_order_relaxed) : 0;
}

ap_health_state ap_health_check(const ap_health *health, int64_t outstanding,
                                const ap_health_config *config, int64_t now_ms) {
  if (health == NULL || config == NULL) return AP_HEALTH_OK;
  const int64_t state = atomic_load_explicit(&health->ejection, memory_order_relaxed);
  if (state != 0) return now_ms < until_of(state) ? AP_HEALTH_EJECTED : AP_HEALTH_PROBATION;
  if (config->stuck_call_ms > 0 && outstanding > 0) {
    const int64_t progress = atomic_load_explicit(&health->progress_ms, memory_order_relaxed);
    if (now_ms - progress > (int64_t)ap_health_stuck_threshold_ms(health, config))
      return AP_HEALTH_STUCK;
  }
  return AP_HEALTH_OK;
}

ap_health_state ap_health_check_lazy(const ap_health *health, int64_t outstanding,
                                     const ap_health_config *config, int64_t *now_ms) {
  if (health == NULL || config == NULL) return AP_HEALTH_OK;
  const int needs_clock =
      atomic_load_explicit(&health->ejection, memory_order_relaxed) != 0 ||
      (config->stuck_call_ms > 0 && outstanding > 0);
  if (!needs_clock) return AP_HEALTH_OK;
  int64_t now = now_ms != NULL ? *now_ms : -1;
  if (now < 0) {
    now = ap_health_now_ms();
    if (now_ms != NULL) *now_ms = now;
  }
  return ap_health_check(health, outstanding, config, now);
}

int ap_health_usable(ap_health_state state, int64_t outstanding) {
  return state == AP_HEALTH_OK || (state == AP_HEALTH_PROBATION && outstanding <= 0);
}

uint64_t ap_health_ejections(const ap_health *health) {
  return health ? atomic_load_explicit(&health->ejections, memory_order_relaxed) : 0;
}

uint32_t ap_health_failure_run(const ap_health *health) {
  return health ? atomic_load_explicit(&health->failure_run, memory_order_relaxed) : 0;
}

int64_t ap_health_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
