/*
 * ap_health: whether an endpoint that looks READY should get new calls.
 *
 * A gray failure keeps the endpoint's connection up: a frozen process, a
 * silent link, a server that never answers. Its subchannel stays READY and
 * every call sent there waits for its deadline. Two signals take such an
 * endpoint out of the pick, each cheap enough for the hot path:
 *   - ejection: `eject_after_failures` calls in a row that failed as the
 *     transport or the server fails (the caller decides which statuses
 *     count) eject it for `ejection_ms`. After that it is on probation: it
 *     takes one call at a time; a success reinstates it, a failure ejects
 *     it again. Any success reinstates it at once (a server that thawed
 *     answers the calls it was holding). Finagle's failure accrual, with a
 *     fixed probation interval so a healed endpoint is back within
 *     ejection_ms.
 *   - stuck calls: calls in flight and none of the endpoint's calls ended
 *     (nor did it go idle) for `stuck_call_ms`: nothing is moving there,
 *     deadline or not.
 * An endpoint that is not usable is only avoided, never refused: when no
 * member of an aperture is usable the pick still sends calls, so ejection
 * cannot lose calls or starve a fleet whose every server is slow.
 *
 * Times are milliseconds of a monotonic clock the caller reads
 * (ap_health_now_ms()) and passes in, so tests control time. State lives in
 * atomics: every function here is lock-free and allocation-free except
 * create/destroy, and any thread may call any of them at once. The call
 * hooks write only what changes: a success on a healthy endpoint reads the
 * failure run and the ejection and stores nothing but the progress time,
 * and that only when the clock's millisecond moved since the last one, so
 * calls ending on several cores do not keep taking the line from each
 * other. A failure is one atomic add (the run).
 */
#ifndef AP_HEALTH_H
#define AP_HEALTH_H

#include <stdint.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest accepted value of each field (about a day, in ms / calls). */
#define AP_HEALTH_MAX_MS 86400000u
#define AP_HEALTH_MAX_FAILURES 1000000u

typedef struct ap_health_config {
  uint32_t eject_after_failures; /* failures in a row that eject; 0: never */
  uint32_t ejection_ms;          /* ejection before probation, >= 1 */
  uint32_t stuck_call_ms;        /* no call ended this long with calls in
                                    flight: stuck; 0: never */
} ap_health_config;

/* Defaults: 5 failures in a row, 1000 ms ejection, stuck after 1000 ms. */
void ap_health_config_init(ap_health_config *config);

/* AP_OK, or AP_EINVAL naming the field ("ejectAfterFailures",
 * "ejectionMs", "stuckCallMs" as the service config spells them) that is
 * out of range. NULL config is AP_EINVAL. */
int ap_health_config_validate(const ap_health_config *config, ap_error *err);

typedef enum ap_health_state {
  AP_HEALTH_OK = 0,        /* usable */
  AP_HEALTH_EJECTED = 1,   /* failed in a row; not usable until probation */
  AP_HEALTH_PROBATION = 2, /* ejection over: usable for one call at a time */
  AP_HEALTH_STUCK = 3      /* calls in flight and nothing ends */
} ap_health_state;

/* Lower-case name: "ok", "ejected", "probation", "stuck"; "unknown". */
const char *ap_health_state_name(ap_health_state state);

typedef struct ap_health ap_health;

/* A new endpoint's health: usable, no failures. NULL when out of memory.
 * Free with ap_health_destroy(). */
ap_health *ap_health_create(void);
void ap_health_destroy(ap_health *health);

/* A call starts on the endpoint; `outstanding_before` is its calls in
 * flight before this one (an idle endpoint starts its stuck clock here).
 * NULL health is ignored. */
void ap_health_on_start(ap_health *health, int64_t outstanding_before,
                        int64_t now_ms);

/* A call on the endpoint ended; `failed` nonzero when its status counts as
 * a failure (see top). Updates the failure run, ejects or reinstates.
 * NULL health or config is ignored. */
void ap_health_on_finish(ap_health *health, int failed,
                         const ap_health_config *config, int64_t now_ms);

/* The endpoint's state for a new call, given its calls in flight now.
 * NULL health or config is AP_HEALTH_OK. */
ap_health_state ap_health_check(const ap_health *health, int64_t outstanding,
                                const ap_health_config *config,
                                int64_t now_ms);

/* The same, reading the clock only when the answer depends on it (an
 * ejection to time, or calls in flight with stuck detection on): *now_ms
 * is the reading, -1 for "not read yet", and keeps it for the next call,
 * so a pick reads the clock at most once and often not at all. NULL now_ms
 * reads the clock every time. */
ap_health_state ap_health_check_lazy(const ap_health *health, int64_t outstanding,
                                     const ap_health_config *config, int64_t *now_ms);

/* 1 when a new call may go there: OK, or PROBATION with nothing in flight. */
int ap_health_usable(ap_health_state state, int64_t outstanding);

/* Ejections so far (0 for NULL). */
uint64_t ap_health_ejections(const ap_health *health);

/* Failures in the current run (0 for NULL). */
uint32_t ap_health_failure_run(const ap_health *health);

/* Milliseconds of the monotonic clock (coarse: a few ms of resolution,
 * a few ns to read). */
int64_t ap_health_now_ms(void);

#ifdef __cplusplus
}
#endif

#endif /* AP_HEALTH_H */
