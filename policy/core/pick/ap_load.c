#define _GNU_SOURCE /* clock_gettime */
#include "policy/core/pick/ap_load.h"
#include "policy/core/pick/ap_load_testing.h"

#include "policy/core/pick/ap_pick.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

/* flags */
#define HAS_LATENCY 1u
#define HAS_UTIL 2u

static const char *const kMetricNames[AP_PICK_METRIC_COUNT] = {
    "outstanding", "peakEwma", "orca"};

int ap_pick_metric_parse(const char *name, ap_pick_metric *out,
                         ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  if (name != NULL) {
    for (size_t i = 0; i < AP_PICK_METRIC_COUNT; ++i) {
      if (strcmp(name, kMetricNames[i]) == 0) {
        *out = (ap_pick_metric)i;
        return AP_OK;
      }
    }
  }
  return ap_error_set(err, AP_EINVAL,
                      "pick metric \"%.64s\" is unknown; accepted: "
                      "outstanding, peakEwma, orca",
                      name == NULL ? "(null)" : name);
}

const char *ap_pick_metric_name(ap_pick_metric metric) {
  if ((unsigned)metric >= AP_PICK_METRIC_COUNT) return "unknown";
  return kMetricNames[metric];
}

void ap_load_init(ap_load_state *s) {
  if (s != NULL) memset(s, 0, sizeof(*s));
}

int64_t ap_load_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec;
}

int64_t ap_load_coarse_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec;
}

static double bits_to_double(uint64_t bits) {
  double d;
  memcpy(&d, &bits, sizeof(d));
  return d;
}

static uint64_t double_to_bits(double d) {
  uint64_t bits;
  memcpy(&bits, &d, sizeof(bits));
  return bits;
}

/* ap_load_release() adds RELEASED - started to `ended`: from then on it
 * holds RELEASED minus the calls in flight, and the end that brings it to
 * RELEASED exactly is the last one. That end learns it from the result of
 * its own add, so no other end reads the state after its add (the last
 * one may free it at any moment). Before the release `ended` is a count,
 * far below RELEASED. */
#define RELEASED (UINT64_C(1) << 63)

int64_t ap_load_call_start(ap_load_state *s) {
  if (s == NULL) return 0;
  const uint64_t before =
      __atomic_fetch_add(&s->started, 1, __ATOMIC_RELAXED);
  /* The line is ours after the add: this load costs next to nothing. It
   * may already count the end of a call started after this one's add
   * (started and ended are two words): then the calls in flight before
   * were at most that few, and 0 is the answer. */
  const uint64_t ended = __atomic_load_n(&s->ended, __ATOMIC_RELAXED);
  return before > ended ? (int64_t)(before - ended) : 0;
}

int ap_load_call_end(ap_load_state *s) {
  if (s == NULL) return 0;
  /* Release: this call's writes into the object happen before the free;
   * acquire: so do the other calls' and the owners', for the one that
   * frees. */
  return __atomic_add_fetch(&s->ended, 1, __ATOMIC_ACQ_REL) == RELEASED;
}

int ap_load_call_finish(ap_load_state *s, int64_t start_ns, int64_t now_ns) {
  if (s == NULL) return 0;
  if (now_ns >= start_ns) {
    ap_load_record_latency(s, now_ns - start_ns, now_ns, NULL);
  }
  return ap_load_call_end(s);
}

int ap_load_release(ap_load_state *s) {
  if (s == NULL) return 0;
  /* Final: every start happened before the owners released. */
  const uint64_t started = __atomic_load_n(&s->started, __ATOMIC_RELAXED);
  return __atomic_add_fetch(&s->ended, RELEASED - started, __ATOMIC_ACQ_REL) ==
         RELEASED;
}

uint64_t ap_load_calls_ended(const ap_load_state *s) {
  return s == NULL ? 0 : __atomic_load_n(&s->ended, __ATOMIC_RELAXED);
}

/* Sets *stamp to now_ns when that is later and returns the time since
 * the stamp it replaced (0 when now_ns is not later). Load and store, no
 * read-modify-write: a racing thread may store a slightly older stamp,
 * which only lengthens the next dt a little. */
static int64_t advance_stamp(int64_t *stamp, int64_t now_ns) {
  const int64_t prev = __atomic_load_n(stamp, __ATOMIC_RELAXED);
  if (now_ns <= prev) return 0;
  __atomic_store_n(stamp, now_ns, __ATOMIC_RELAXED);
  return now_ns - prev;
}

/* Blends x into the double at *bits: the first sample (flag not yet set)
 * stores x; a peak (peak and x above the value) replaces; otherwise
 * v w + x (1 - w) with w = exp(-dt / tau) (computed only then). */
static void blend(uint64_t *bits, uint32_t *flags, uint32_t flag, double x,
                  int64_t dt, double tau, int peak) {
  const int had = (__atomic_load_n(flags, __ATOMIC_ACQUIRE) & flag) != 0;
  double next = x;
  if (had) {
    const double old = bits_to_double(__atomic_load_n(bits, __ATOMIC_RELAXED));
    if (!(peak && x > old)) {
      const double w = exp(-(double)dt / tau);
      next = old * w + x * (1.0 - w);
    }
  }
  __atomic_store_n(bits, double_to_bits(next), __ATOMIC_RELAXED);
  if (!had) __atomic_fetch_or(flags, flag, __ATOMIC_RELEASE);
}

int ap_load_record_latency(ap_load_state *s, int64_t latency_ns,
                           int64_t now_ns, ap_error *err) {
  if (s == NULL) return ap_error_set(err, AP_EINVAL, "state must not be NULL");
  if (latency_ns < 0) {
    return ap_error_set(err, AP_EINVAL, "latency_ns is %lld, must be >= 0",
                        (long long)latency_ns);
  }
  const int64_t dt = advance_stamp(&s->latency_stamp_ns, now_ns);
  blend(&s->latency_bits, &s->flags, HAS_LATENCY, (double)latency_ns, dt,
        (double)AP_LOAD_LATENCY_TAU_NS, 1);
  return AP_OK;
}

int ap_load_record_utilization(ap_load_state *s, double u, int64_t now_ns,
                               ap_error *err) {
  if (s == NULL) return ap_error_set(err, AP_EINVAL, "state must not be NULL");
  if (!isfinite(u) || u < 0) {
    return ap_error_set(err, AP_EINVAL,
                        "utilization is %g, must be finite and >= 0", u);
  }
  const int64_t dt = advance_stamp(&s->util_stamp_ns, now_ns);
  blend(&s->util_bits, &s->flags, HAS_UTIL, u, dt,
        (double)AP_LOAD_UTIL_TAU_NS, 0);
  return AP_OK;
}

int ap_load_latency_ns(const ap_load_state *s, double *out) {
  if (out == NULL) return 0;
  *out = 0;
  if (s == NULL) return 0;
  if ((__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) & HAS_LATENCY) == 0) {
    return 0;
  }
  *out = bits_to_double(__atomic_load_n(&s->latency_bits, __ATOMIC_RELAXED));
  return 1;
}

int ap_load_utilization(const ap_load_state *s, int64_t now_ns, double *out) {
  if (out == NULL) return 0;
  *out = -1;
  if (s == NULL) return 0;
  if ((__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) & HAS_UTIL) == 0) return 0;
  const int64_t stamp = __atomic_load_n(&s->util_stamp_ns, __ATOMIC_RELAXED);
  if (now_ns - stamp > AP_LOAD_UTIL_STALE_NS) return 0;
  *out = bits_to_double(__atomic_load_n(&s->util_bits, __ATOMIC_RELAXED));
  return 1;
}

int ap_load_scale(const ap_load_state *s, ap_pick_metric metric,
                  int64_t now_ns, double *scale) {
  if (scale == NULL) return AP_EINVAL;
  *scale = 1;
  if (s == NULL || (unsigned)metric >= AP_PICK_METRIC_COUNT) return AP_EINVAL;
  double v = 0;
  switch (metric) {
    case AP_PICK_PEAK_EWMA:
      if (ap_load_latency_ns(s, &v)) {
        *scale = v;
        return AP_PICK_PEAK_EWMA;
      }
      break;
    case AP_PICK_ORCA:
      if (ap_load_utilization(s, now_ns, &v)) {
        if (v > AP_LOAD_UTIL_CAP) v = AP_LOAD_UTIL_CAP;
        *scale = 1.0 / (1.0 - v);
        return AP_PICK_ORCA;
      }
      break;
    default:
      break;
  }
  return AP_PICK_OUTSTANDING;
}

int ap_load_cost(const ap_load_state *s, ap_pick_metric metric,
                 int64_t now_ns, double *cost) {
  if (cost == NULL) return AP_EINVAL;
  *cost = 0;
  double scale = 1;
  const int used = ap_load_scale(s, metric, now_ns, &scale);
  if (used < 0) return used;
  const double n = (double)ap_load_outstanding(s);
  *cost = used == AP_PICK_OUTSTANDING ? n : (n + 1.0) * scale;
  return used;
}

int ap_load_pair_scale(const ap_load_state *a, const ap_load_state *b,
                       ap_pick_metric metric, int64_t now_ns, double *scale_a,
                       double *scale_b) {
  if (scale_a != NULL) *scale_a = 1;
  if (scale_b != NULL) *scale_b = 1;
  if (a == NULL || b == NULL || scale_a == NULL || scale_b == NULL ||
      (unsigned)metric >= AP_PICK_METRIC_COUNT) {
    return AP_EINVAL;
  }
  const int used_a = ap_load_scale(a, metric, now_ns, scale_a);
  const int used_b = ap_load_scale(b, metric, now_ns, scale_b);
  if (used_a == used_b) return used_a;
  *scale_a = 1;
  *scale_b = 1;
  return AP_PICK_OUTSTANDING;
}
