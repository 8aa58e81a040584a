/*
 * ap_load: what the pick compares, per endpoint, under each pick metric
 * (the service config's "pickMetric"):
 *
 *   outstanding  calls in flight (the default, unchanged).
 *   peakEwma     Finagle's latency-aware cost: a peak-sensitive moving
 *                average of call latency times (outstanding + 1). A sample
 *                above the current average replaces it at once; a sample
 *                below it is blended in with weight 1 - exp(-dt / tau),
 *                dt the time since the previous sample, tau
 *                AP_LOAD_LATENCY_TAU_NS (10 s): v' = v w + x (1 - w),
 *                w = exp(-dt / tau). The average changes only with samples
 *                (reads never decay it): a slow endpoint still gets the
 *                calls where both P2C draws are itself, and their samples
 *                bring its average down once it is fast again.
 *   orca         server-reported CPU utilization u (ORCA), smoothed by an
 *                EWMA with time constant AP_LOAD_UTIL_TAU_NS (500 ms):
 *                cost = (outstanding + 1) / (1 - min(u, 0.95)). The factor
 *                is the M/M/1 queueing stretch 1 / (1 - rho): it is 1 for
 *                an idle server, 2 at half load, 10 at 90%; the cap at
 *                0.95 (factor 20) keeps a saturated or over-reporting
 *                (u >= 1) server finite so it still gets the odd call and
 *                can report that it recovered.
 *
 * Fallback: peakEwma before an endpoint's first latency sample, and orca
 * without a utilization report or with one older than
 * AP_LOAD_UTIL_STALE_NS (5 s), use the outstanding count. Costs of two
 * candidates are only compared in one unit: ap_load_pair_scale() falls
 * back for both when either of them has to (ap_load_pair_scale).
 *
 * Concurrency: every field of ap_load_state is read and written with
 * atomic operations only (GCC/Clang __atomic builtins, lock-free on
 * 64-bit targets); no function takes a lock or allocates. The calls in
 * flight are two exact counts, calls started and calls ended (atomic
 * adds), so a call costs exactly two atomic read-modify-writes on the
 * state's cache line: one when it starts, one when it ends. The started
 * count doubles as the endpoint's count of picks, and the calls in
 * flight keep the state alive (lifetime, below), so a caller needs no
 * other per-call counter or reference. The averages and their stamps use
 * relaxed loads and stores, no read-modify-write: two samples recorded at
 * the same instant on two threads may overwrite each other (one sample
 * lost, never a torn value), which an average over thousands of calls
 * does not notice. Time is always an explicit now_ns (a monotonic clock
 * in nanoseconds: ap_load_now_ns(), or ap_load_coarse_now_ns() for
 * utilization), so the arithmetic is testable without sleeping.
 *
 * Lifetime (optional): a state embedded in a heap object shared by owners
 * (who pick calls onto it) and by calls in flight (which may end after
 * every owner is gone) is freed when both are done. When the owners are
 * done they call ap_load_release() once; after that no call may start.
 * Exactly one of ap_load_release() and the ends of the calls still in
 * flight then returns 1, and that caller frees the object: release
 * returns 1 when nothing is in flight, otherwise the end that brings the
 * calls in flight to 0 does. Each learns it from the result of its own
 * atomic add, so no caller reads the state after its end or its release
 * unless it is the one that frees. Without ap_load_release() the ends
 * always return 0. The ends and the release are release-acquire
 * operations: everything a call or an owner wrote into the object happens
 * before the free. After the release only the ends of the calls in flight
 * may touch the state (the counts no longer mean anything then).
 */
#ifndef AP_LOAD_H
#define AP_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"
#include "policy/core/ap_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ap_pick_metric {
  AP_PICK_OUTSTANDING = 0,
  AP_PICK_PEAK_EWMA = 1,
  AP_PICK_ORCA = 2,
  AP_PICK_METRIC_COUNT
} ap_pick_metric;

#define AP_LOAD_LATENCY_TAU_NS 10000000000LL /* peakEwma decay: 10 s */
#define AP_LOAD_UTIL_TAU_NS 500000000LL      /* utilization EWMA: 500 ms */
#define AP_LOAD_UTIL_STALE_NS 5000000000LL   /* older reports: ignored */
#define AP_LOAD_UTIL_CAP 0.95                /* u above this counts as it */

/* Parses a pick metric name: "outstanding", "peakEwma" or "orca" (exact,
 * case-sensitive). Errors: AP_EINVAL (out NULL; name NULL or unknown, the
 * message listing the accepted names). */
int ap_pick_metric_parse(const char *name, ap_pick_metric *out, ap_error *err);

/* The config name of a metric ("outstanding", "peakEwma", "orca");
 * "unknown" for any other value. */
const char *ap_pick_metric_name(ap_pick_metric metric);

/* One endpoint's load. Private fields: use the functions below only.
 * Zero-initialized (or ap_load_init) means no call, no sample, no report.
 * Lives as long as every call that records into it (see Lifetime). */
typedef struct ap_load_state {
  uint64_t started;          /* calls started */
  uint64_t ended;            /* calls ended (see ap_load_release) */
  uint64_t latency_bits;     /* the peak EWMA in ns, a double's bits */
  int64_t latency_stamp_ns;  /* time of the last latency sample */
  uint64_t util_bits;        /* the smoothed utilization, a double's bits */
  int64_t util_stamp_ns;     /* time of the last utilization report */
  uint32_t flags;            /* which of the two have a sample */
  uint32_t reserved;
} ap_load_state;

/* Resets `s` to the zero state (NULL is ignored). Not atomic: only before
 * the state is shared. */
void ap_load_init(ap_load_state *s);

/* The monotonic clock (CLOCK_MONOTONIC) in nanoseconds: call latency. */
int64_t ap_load_now_ns(void);

/* The same clock at scheduler-tick resolution (CLOCK_MONOTONIC_COARSE,
 * 1-4 ms, at most one tick behind ap_load_now_ns()), several times
 * cheaper to read: for utilization, whose 500 ms average and 5 s
 * staleness do not need more. */
int64_t ap_load_coarse_now_ns(void);

/* A call started: calls started + 1 (one atomic add). Returns the calls
 * in flight before it, never negative (0 for NULL, which is ignored). Not
 * after ap_load_release(). */
int64_t ap_load_call_start(ap_load_state *s);

/* A call that started at start_ns finished at now_ns: the latency
 * now_ns - start_ns recorded into the peak EWMA, then the call ended as by
 * ap_load_call_end() (the state is not touched after that). A latency
 * below 0 (clock misuse) records nothing but still ends the call. Returns
 * what ap_load_call_end() returns; NULL is ignored (0). */
int ap_load_call_finish(ap_load_state *s, int64_t start_ns, int64_t now_ns);

/* A call ended (with no latency sample: not timed, or abandoned before it
 * reported its end): calls ended + 1 (one atomic add, release-acquire).
 * Returns 1 when the caller must free the object holding the state: the
 * owners released it (ap_load_release) and this was the last call in
 * flight; 0 otherwise (always 0 without ap_load_release). NULL is ignored
 * (0). More ends than starts are misuse: the count stays at 0 calls in
 * flight. */
int ap_load_call_end(ap_load_state *s);

/* The owners are done with the state: no call starts on it from now on
 * (every start must happen before this call), and nothing but the ends of
 * the calls in flight touches it. Call once. Returns 1 when no call is in
 * flight, and the caller frees the object holding the state now; 0 when
 * calls are in flight, and the end of the last of them returns 1 instead
 * (see Lifetime above). NULL: 0. */
int ap_load_release(ap_load_state *s);

/* Calls started so far (0 for NULL): every ap_load_call_start(). Inline:
 * the call tracker reads it on every call. */
static inline uint64_t ap_load_calls_started(const ap_load_state *s) {
  return s == NULL ? 0 : __atomic_load_n(&s->started, __ATOMIC_RELAXED);
}

/* Records a latency sample of latency_ns at now_ns into the peak EWMA
 * without touching outstanding. Errors: AP_EINVAL (s NULL, latency_ns < 0);
 * nothing is recorded then. */
int ap_load_record_latency(ap_load_state *s, int64_t latency_ns,
                           int64_t now_ns, ap_error *err);

/* Records a server-reported utilization u (>= 0, finite; values above 1
 * are kept, the cost caps them) at now_ns: the first report sets the
 * average, later ones blend in with weight 1 - exp(-dt / 500 ms). Errors:
 * AP_EINVAL (s NULL, u negative or not finite: gRPC reports -1 for
 * "absent"); nothing is recorded then. */
int ap_load_record_utilization(ap_load_state *s, double u, int64_t now_ns,
                               ap_error *err);

/* Calls in flight: started - ended (0 for NULL; never negative). Two
 * atomic loads, no write; inline, as every pick and call end reads it.
 * Ended first, with acquire: the starts of the calls it counts happened
 * before their ends, so `started` read after it is at least as large (no
 * negative count from a racing end). */
static inline int64_t ap_load_outstanding(const ap_load_state *s) {
  if (s == NULL) return 0;
  const uint64_t ended = __atomic_load_n(&s->ended, __ATOMIC_ACQUIRE);
  const uint64_t started = __atomic_load_n(&s->started, __ATOMIC_RELAXED);
  return started > ended ? (int64_t)(started - ended) : 0;
}

/* The peak EWMA of latency in ns; *out = 0 and return 0 when there is no
 * sample yet (or s/out NULL), 1 otherwise. */
int ap_load_latency_ns(const ap_load_state *s, double *out);

/* The smoothed utilization; *out = -1 and return 0 when there is no
 * report, or the last one is older than 5 s at now_ns (stale), or s/out
 * is NULL; 1 otherwise. */
int ap_load_utilization(const ap_load_state *s, int64_t now_ns, double *out);

/* The metric multiplier of the cost at now_ns, what the picker passes to
 * ap_p2c_choose_fair_scaled() beside the outstanding count:
 *   peakEwma: latency_ns          orca: 1 / (1 - min(u, 0.95))
 * so that cost = (outstanding + 1) * scale. Writes *scale and returns the
 * metric used; AP_PICK_OUTSTANDING with *scale = 1 for the outstanding
 * metric and on fallback. Errors: AP_EINVAL (s or scale NULL, unknown
 * metric; *scale, when writable, set to 1). */
int ap_load_scale(const ap_load_state *s, ap_pick_metric metric,
                  int64_t now_ns, double *scale);

/* The multipliers of two candidates in one unit: both under `metric` when
 * both have a usable sample, else both 1 (P2C then compares outstanding
 * counts). Returns the metric used, or AP_EINVAL (a NULL argument, unknown
 * metric; scales set to 1 where writable). */
int ap_load_pair_scale(const ap_load_state *a, const ap_load_state *b,
                       ap_pick_metric metric, int64_t now_ns, double *scale_a,
                       double *scale_b);

#ifdef __cplusplus
}
#endif

#endif /* AP_LOAD_H */
