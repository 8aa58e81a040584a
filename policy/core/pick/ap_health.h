/*
 * ap_health: whether an endpoint that looks READY should get new calls.
 *
 * A gray failure keeps the endpoint's connection up: a frozen process, a
 * silent link, a server that never answers. Its subchannel stays READY and
 * every call sent there waits for its deadline. Healthy servers look like
 * that now and then too: a share of their calls is slow (the latency
 * tail), and a client whose deadline is inside the tail sees those calls
 * fail. The rules below tell the two apart by evidence, each from a signal
 * cheap enough for the hot path:
 *   - stuck (a soft signal): calls in flight and none of the endpoint's
 *     calls ended (nor did it go idle) for the stuck threshold: nothing is
 *     moving there, deadline or not. New calls avoid it until a call ends
 *     there, in any status: a tail call that ends is progress. The
 *     threshold follows the endpoint's own latency: `stuck_latency_factor`
 *     times the EWMA of its successful calls' latencies
 *     (ap_health_record_latency()), at least `stuck_call_min_ms` and at
 *     most `stuck_call_ms`; `stuck_call_ms` alone before the first sample
 *     or when the factor is 0. A member that answers in 3 ms is found
 *     stuck 25 ms into a freeze instead of a second: that is the window in
 *     which new calls still land on it. Being stuck ejects nothing.
 *   - a silence: a run of failed calls (the caller decides which statuses
 *     count) that began with a call failing after a silence longer than
 *     the stuck threshold, as every call held by a frozen or unreachable
 *     server does at its deadline, and as a tail call does when the
 *     deadline is inside the tail. Its first failure is no evidence. Its
 *     second (a call held beside it, or the next call sent there; no
 *     success between) ejects the endpoint while its peers are quiet:
 *     their calls' failure share, which the policy's sweep measures
 *     (ap_health_sweep()), is known and below AP_HEALTH_QUIET_PPM
 *     (ap_health_group.h). A member that stops among peers that answer
 *     stands out at once; when the peers' calls fail too (their tail),
 *     only the failure run below ejects.
 *   - the failure run: `eject_after_failures` calls in a row that failed
 *     eject the endpoint, silences or not (Finagle's failure accrual).
 * The first ejection lasts `ejection_ms`; after it the endpoint is on
 * probation: it takes one call at a time; a success reinstates it, a
 * failure ejects it again for twice as long as the last time, up to
 * `max_ejection_ms` (each probe that meets the fault costs a call). Any
 * success reinstates it at once and resets the doubling (a server that
 * thawed answers the calls it was holding), and so does ap_health_reset()
 * (the caller's new connection to it).
 * The bound: an ejection takes a slot of the endpoint's group, at most
 * `max_ejection_percent` of the aperture's members (at least one), held
 * until the endpoint is reinstated; with none free the endpoint is not
 * ejected but put on probation, and tries again at its next failure
 * (ap_health_group.h).
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
 * other; it never touches the group. A failure is two atomic adds (the
 * run and the endpoint's failure count).
 */
#ifndef AP_HEALTH_H
#define AP_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"
#include "policy/core/pick/ap_health_group.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest accepted value of each field (about a day, in ms / calls). */
#define AP_HEALTH_MAX_MS 86400000u
#define AP_HEALTH_MAX_FAILURES 1000000u

#define AP_HEALTH_MAX_LATENCY_FACTOR 1000u
#define AP_HEALTH_MAX_EJECTION_PERCENT 100u

typedef struct ap_health_config {
  uint32_t eject_after_failures; /* failures in a row that eject; 0: never
                                    (nor does a stuck spell) */
  uint32_t ejection_ms;          /* first ejection before probation, >= 1 */
  uint32_t max_ejection_ms;      /* cap of the doubling, >= ejection_ms */
  uint32_t stuck_call_ms;        /* no call ended this long with calls in
                                    flight: stuck; 0: never. The cap of the
                                    latency-relative threshold */
  uint32_t stuck_call_min_ms;    /* floor of the latency-relative threshold */
  uint32_t stuck_latency_factor; /* threshold = factor x latency EWMA;
                                    0: stuck_call_ms only */
  uint32_t max_ejection_percent; /* at most this share of the aperture's
                                    members out at once (at least one);
                                    0: never eject */
} ap_health_config;

/* Defaults: 5 failures in a row, 3000 ms first ejection doubling up to
 * 6000 ms, stuck after 8x the latency EWMA, within [25, 1000] ms, at most
 * 50% of the aperture's members out (2 of 4, 6 of 12, 50 of 100: a
 * partition that cuts a client off from two of four members ejects both,
 * and at least half of an aperture keeps its calls). The
 * first ejection outlasts the policy's default keepalive (policy/lb/config/
 * config.h: a ping after keepaliveMs 200 without a byte, at most 1 s after
 * the transport's previous ping, unanswered for keepaliveTimeoutMs 1000:
 * closed within about 2.2 s): a frozen or cut off member's connection
 * closes before its first probe, so no probe pays for it. */
void ap_health_config_init(ap_health_config *config);

/* The fields a service config gave, for ap_health_config_fit_defaults(). */
#define AP_HEALTH_GAVE_MAX_EJECTION_MS 1u
#define AP_HEALTH_GAVE_STUCK_CALL_MIN_MS 2u

/* Moves the defaults of the fields a config did not give (`given`: the
 * AP_HEALTH_GAVE_* bits of those it did) so that they fit the fields it
 * gave: without maxEjectionMs, an ejectionMs above the cap raises the cap
 * to it (ejections that never double); without stuckCallMinMs, a nonzero
 * stuckCallMs below the floor lowers the floor to it (a fixed threshold).
 * Call before ap_health_config_validate(). NULL is ignored. */
void ap_health_config_fit_defaults(ap_health_config *config, unsigned given);

/* Every rule over the fields, the cross-field ones included: each field
 * within its range (ejectionMs and maxEjectionMs at least 1; at most
 * AP_HEALTH_MAX_FAILURES failures, AP_HEALTH_MAX_MS, and
 * AP_HEALTH_MAX_LATENCY_FACTOR, AP_HEALTH_MAX_EJECTION_PERCENT),
 * maxEjectionMs at least ejectionMs,
 * stuckCallMinMs at most a nonzero stuckCallMs. AP_OK, or AP_EINVAL with
 * every violation in the message, in field order, as "<field>: <what is
 * wrong>" entries separated by "; ", the fields spelt as the service
 * config spells them (e.g. "maxEjectionMs: must be at least ejectionMs
 * (3000), got 1000"); entries past the message's length are left out
 * (both cross-field entries always fit). NULL config is AP_EINVAL. */
int ap_health_config_validate(const ap_health_config *config, ap_error *err);

/* 1 when the config can change anything: ejection (eject_after_failures)
 * or stuck detection (stuck_call_ms) is on; 0 when both are off (health
 * switched off: callers may skip every health call, the clock included).
 * NULL: 0. Inline: every pick's call tracker asks. */
static inline int ap_health_config_active(const ap_health_config *config) {
  return config != NULL && (config->eject_after_failures != 0 || config->stuck_call_ms != 0);
}

typedef enum ap_health_state {
  AP_HEALTH_OK = 0,        /* usable */
  AP_HEALTH_EJECTED = 1,   /* out (a slot held); not usable until probation */
  AP_HEALTH_PROBATION = 2, /* usable for one call at a time: after an
                              ejection, or at the bound */
  AP_HEALTH_STUCK = 3      /* calls in flight and nothing ends */
} ap_health_state;

/* Lower-case name: "ok", "ejected", "probation", "stuck"; "unknown". */
const char *ap_health_state_name(ap_health_state state);

typedef struct ap_health ap_health;

/* Bytes an endpoint's health takes inside its owner's object: two cache
 * lines, so that the call path's reads sit next to the owner's own line
 * and share no line with another endpoint's writes. */
#define AP_HEALTH_FOOTPRINT 128

/* A new endpoint's health, built in memory the caller owns (`size` at
 * least AP_HEALTH_FOOTPRINT, aligned to 64 bytes; nothing is allocated):
 * usable, no failures, in `group` (the other members of its aperture: the
 * bound and the peers' failure share; it takes a reference, and NULL
 * means an endpoint alone: no bound, and its peers always quiet). NULL
 * when `memory` is NULL, misaligned or too small. End it with
 * ap_health_fini(): it gives back a slot it holds and its group
 * reference; the memory stays the caller's. */
ap_health *ap_health_init_at(void *memory, size_t size, ap_health_group *group);
void ap_health_fini(ap_health *health);

/* A call starts on the endpoint; `outstanding_before` is its calls in
 * flight before this one (an idle endpoint starts its stuck clock here).
 * NULL health is ignored. */
void ap_health_on_start(ap_health *health, int64_t outstanding_before,
                        int64_t now_ms);

/* A call on the endpoint ended; `failed` nonzero when its status counts as
 * a failure (see top). Any end is progress. A success reinstates and ends
 * the run; a failure adds to the run and, by the rules at the top, may
 * eject the endpoint. NULL health or config is ignored. */
void ap_health_on_finish(ap_health *health, int failed,
                         const ap_health_config *config, int64_t now_ms);

/* A call ended as a success, or in a status that does not count as a
 * failure, and left the endpoint with no call in flight: ends the failure
 * run and any ejection or probation, as ap_health_on_finish() does,
 * without the clock. The progress time needs none here: nothing is in
 * flight to be stuck, and the next call's start stamps it
 * (ap_health_on_start). NULL is ignored. */
void ap_health_on_idle_success(ap_health *health);

/* Callers time one call in AP_HEALTH_LATENCY_SAMPLE for the latency EWMA
 * (two clock reads a sample): before the first sample the threshold is
 * stuckCallMs. */
#define AP_HEALTH_LATENCY_SAMPLE 16

/* A successful call's latency (ms, the caller's clock; negative values are
 * ignored) into the endpoint's EWMA (weight 1/8 a sample), which sets its
 * stuck threshold. Concurrent updates may lose a sample; never a torn
 * value. */
void ap_health_record_latency(ap_health *health, int64_t latency_ms);

/* The stuck threshold in ms for this endpoint now (see top); 0 when stuck
 * detection is off or for NULL config. */
uint32_t ap_health_stuck_threshold_ms(const ap_health *health,
                                      const ap_health_config *config);

/* The sweep (the policy calls it every AP_HEALTH_SWEEP_MS, in one thread
 * at a time, with its aperture's members): each member's failure share
 * over its last window of at least AP_HEALTH_MIN_VOLUME ended calls
 * (`calls_ended[i]`: calls ended on members[i] since it exists; its
 * counted failures are its health's own), kept until its next whole
 * window; the group's peer failure share is the lower median of the
 * members' shares once at least half of them have one, unknown (-1)
 * before. NULL members are skipped. AP_OK; AP_EINVAL on a NULL group, or
 * NULL arrays with n > 0; AP_ENOMEM. */
int ap_health_sweep(ap_health_group *group, ap_health *const *members,
                    const uint64_t *calls_ended, size_t n, ap_error *err);

/* A fresh start: the caller made a new connection to the endpoint (its
 * subchannel became READY again). Ends any ejection or probation (giving
 * back its slot), the failure run and the doubling; keeps the counters
 * and the latency EWMA. NULL is ignored. */
void ap_health_reset(ap_health *health, int64_t now_ms);

/* Why the endpoint was last ejected: "failures" (a failure run), "stuck"
 * (a second failure in a run that began after a silence, the peers
 * quiet), "probe" (a probe after an ejection failed), "none" (never, or
 * reset since). NULL: "none". */
const char *ap_health_ejection_reason(const ap_health *health);

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

/* 1 when a new call may go there: OK, or PROBATION with nothing in flight
 * (after an ejection, or at the bound). */
int ap_health_usable(ap_health_state state, int64_t outstanding);

/* Ejections so far (0 for NULL). */
uint64_t ap_health_ejections(const ap_health *health);

/* Milliseconds of the monotonic clock (coarse: a few ms of resolution,
 * a few ns to read). */
int64_t ap_health_now_ms(void);

#ifdef __cplusplus
}
#endif

#endif /* AP_HEALTH_H */
