/*
 * ap_skew: even load when the clients are not alike. A client that sends
 * more than the others makes its members heavy, whatever the pick does
 * inside its window. With server reports (ORCA) a client can see that and
 * act on it, in two ways that keep the ring every client agrees on:
 *
 * 1. Width from rates. Each member reports the rate it serves
 *    (rps_fractional, ap_orca.h); the client knows its own rate to it.
 *    What is left, the background B = reported - own, is what the other
 *    clients send there. If every client sent alike, a member would get
 *    `others` client-rates from them, a figure of the ring alone
 *    (ap_skew_geometry_compute: peer count x the member's arc, minus this
 *    client's own share of it at the base width). So the others' mean
 *    rate is estimated as sum(B) / sum(others) over the members that
 *    report, and the client's ratio is its own rate over that estimate.
 *    A client whose ratio is clearly above its multiplier m widens its
 *    window to m x the base width (m the ratio, rounded, at most the
 *    whole ring), so that each of its connections carries about what an
 *    average client's does; it narrows back when the ratio has been
 *    clearly below for AP_SKEW_NARROW_HOLD_NS. The band (AP_SKEW_BAND,
 *    0.75) is wide: equal clients (ratio about 1) never move. The window
 *    still starts at the client's coordinate; only its width changes.
 *    When the windows tile the ring with no overlap (every member only
 *    this client's, sum(others) below AP_SKEW_MIN_OTHERS), the members
 *    show nothing of the others: the client then probes, one endpoint
 *    wider, until the first estimate (then narrows back unless heavy),
 *    and remembers that estimate for AP_SKEW_MEMORY_NS.
 * 2. Weights from utilization. Inside the window (widened or not), each
 *    member's pick weight is scaled by a factor that a slow, damped,
 *    multiplicative controller moves toward equal reported utilization:
 *    with e = ln((u_mean + eps) / (u + eps)), u_mean the utilization of
 *    the members weighted by this client's current shares, a client
 *    starts balancing when some member's |e| exceeds AP_SKEW_DEADBAND
 *    (5%) and then, every tick, f *= exp(AP_SKEW_GAIN x shrink(e,
 *    AP_SKEW_SETTLE)), until every member is within AP_SKEW_SETTLE (1%);
 *    after each step the factors are scaled so that the total pick weight
 *    is unchanged, and kept in [AP_SKEW_FACTOR_MIN, AP_SKEW_FACTOR_MAX].
 *    Its fixed point is equal utilization across overlapping windows
 *    (water-filling); members within 5% of each other never start it, so
 *    equal members keep factors of exactly 1.
 *    Each client moves its own flow by a fraction, so many clients
 *    reacting at once move a server's load by that fraction too (no
 *    herd), unlike a sharper per-call cost.
 *
 * Time is an argument (now_ns, any monotonic clock), so everything is
 * testable with explicit times. A client calls ap_skew_tick() about every
 * AP_SKEW_TICK_NS with its members' cumulative call counts and reports;
 * the tick keeps per-member state in caller-owned ap_skew_member_state
 * (one per endpoint, kept while the endpoint exists) and per-client state
 * in ap_skew. Single caller at a time; no allocation.
 */
#ifndef AP_SKEW_H
#define AP_SKEW_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/core/subset/ap_aperture.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AP_SKEW_TICK_NS 250000000LL         /* how often a client ticks */
#define AP_SKEW_RATE_TAU_NS 1000000000LL    /* own-rate EWMA: 1 s */
#define AP_SKEW_WARM_NS 1000000000LL        /* a member's reports count after 1 s */
#define AP_SKEW_MEMBER_GAP_NS 5000000000LL  /* unseen this long: its rate starts over */
#define AP_SKEW_MIN_OTHERS 0.1              /* client-rates of evidence needed */
#define AP_SKEW_BAND 0.75                   /* ratio must leave m +- this */
#define AP_SKEW_UP_TICKS 2                  /* consecutive ticks above the band */
#define AP_SKEW_NARROW_HOLD_NS 5000000000LL /* below the band this long */
#define AP_SKEW_MEMORY_NS 300000000000LL    /* a probe's estimate is kept 5 min */
#define AP_SKEW_PROBE_TIMEOUT_NS 5000000000LL /* a probe with no estimate ends */
#define AP_SKEW_GAIN 0.25                   /* weight step per tick */
#define AP_SKEW_DEADBAND 0.05  /* |ln(u_mean / u)| that starts balancing */
#define AP_SKEW_SETTLE 0.01    /* ... and that all are within when it ends */
#define AP_SKEW_UTIL_EPS 0.02               /* added to utilizations */
#define AP_SKEW_FACTOR_MIN 0.0625
#define AP_SKEW_FACTOR_MAX 16.0

/* Why the width is what it is. */
typedef enum ap_skew_reason {
  AP_SKEW_OFF = 0,        /* not run (pickMetric not orca, or turned off) */
  AP_SKEW_NO_REPORTS,     /* members report no rate: base width */
  AP_SKEW_NO_TRAFFIC,     /* this client sends nothing: base width */
  AP_SKEW_EVEN,           /* ratio within the band of 1: base width */
  AP_SKEW_HEAVY,          /* ratio above: widened to m x the base width */
  AP_SKEW_PROBING,        /* no overlap: one endpoint wider to see others */
  AP_SKEW_REMEMBERED,     /* no overlap: the last probe's estimate */
  AP_SKEW_NO_ESTIMATE,    /* a probe saw no rate: base width until retried */
  AP_SKEW_FIXED_WIDTH,    /* the mode has no window to widen: weights only */
  AP_SKEW_WARMING,        /* members report, not yet for AP_SKEW_WARM_NS */
  AP_SKEW_REASON_COUNT
} ap_skew_reason;

/* "off", "no_reports", "no_traffic", "even", "heavy", "probing",
 * "remembered", "no_estimate", "fixed_width", "warming"; "unknown"
 * otherwise. */
const char *ap_skew_reason_name(ap_skew_reason reason);

/* What the ring says about a client's window, computed once per aperture
 * by ap_skew_geometry_compute(). */
typedef struct ap_skew_geometry {
  uint32_t endpoints;     /* N */
  uint32_t min_aperture;  /* the base's logical aperture, min(A, N) */
  double base_endpoints;  /* the base window's width x N (>= 1) */
  double base_others;     /* sum of `others` over the base members */
  int widens;             /* 1: continuous or smooth with a coordinate */
} ap_skew_geometry;

/* For the client `base` describes (its aperture at the configured
 * minAperture, `peer_count` clients) and the aperture `current` it uses
 * (the same, or a wider one of the same ring): the geometry, and for each
 * member k of `current` others[k] = peer_count x (member's arc width) -
 * (this client's share of its calls at `base`: pick weight over the
 * base's total; 0 when not a base member), at least 0: the calls it would
 * get from the other clients, in client-rates, if every client sent
 * alike. `others` has ap_aperture_count(current) entries. Widening is
 * possible (g->widens) in continuous and smooth mode with peer_count >
 * 0. Errors: AP_EINVAL (a NULL argument; `current` or `base` from a ring
 * of another size). */
int ap_skew_geometry_compute(const ap_ring *ring, const ap_aperture *base,
                             uint32_t peer_count, const ap_aperture *current,
                             double *others, ap_skew_geometry *g,
                             ap_error *err);

/* The logical aperture (minAperture to compute the window with) for a
 * multiplier m: the base's own (g->min_aperture) for m <= 1, so that an
 * unwidened client computes exactly the window it would without this
 * module; else max(that, ceil(m x base_endpoints)), at most N. 0 for
 * NULL. */
uint32_t ap_skew_logical(const ap_skew_geometry *g, double m);

/* The probe's logical aperture: one endpoint past the base window,
 * ceil(base_endpoints) + 1, at most N; 0 for NULL. */
uint32_t ap_skew_probe_logical(const ap_skew_geometry *g);

/* One endpoint's state, owned by the caller (kept while the endpoint
 * exists, whatever the window does). Private fields. */
typedef struct ap_skew_member_state {
  double calls_seen;      /* calls at the last tick */
  double rate;            /* EWMA of this client's calls/s to it */
  double factor;          /* weight factor, 1 = unchanged */
  int64_t seen_ns;        /* the last tick that saw it; -1: never */
  int64_t reporting_ns;   /* since when it reports a rate; -1: not */
  int rate_valid;         /* rate holds a measurement */
} ap_skew_member_state;

/* Resets `m` (NULL ignored): never seen, factor 1. */
void ap_skew_member_state_init(ap_skew_member_state *m);

/* The factor ap_skew_tick() gave the endpoint (1 for NULL). */
double ap_skew_member_factor(const ap_skew_member_state *m);

/* This client's rate to the endpoint (EWMA, calls/s); -1 before two ticks
 * saw it, or for NULL. */
double ap_skew_member_rate(const ap_skew_member_state *m);

/* A member of the current aperture, as one tick sees it. */
typedef struct ap_skew_member {
  ap_skew_member_state *state; /* required */
  double calls;       /* calls this client picked for it so far (cumulative) */
  double rps;         /* the rate it reports serving, calls/s; < 0: none */
  double utilization; /* the utilization it reports; < 0: none */
  double others;      /* from ap_skew_geometry_compute() */
  double pick_weight; /* its pick weight in the aperture, > 0 */
} ap_skew_member;

/* One client's state. Private fields: use the functions. */
typedef struct ap_skew {
  int64_t last_ns;          /* the last tick; -1: none */
  double multiplier;        /* m: the width is m x the base width */
  int probing;              /* 1: one endpoint wider, for an estimate */
  int64_t probe_ns;         /* when the probe started */
  int64_t no_probe_until_ns; /* after a probe without an estimate */
  double others_rate;       /* the last estimate; < 0: none */
  int64_t others_ns;        /* when it was made */
  int up_ticks;             /* consecutive ticks above the band */
  int balancing;            /* 1: moving weights until all are settled */
  int64_t below_ns;         /* since when below the band; -1: not */
  ap_skew_reason reason;
  double own_rate;          /* sum of the members' rates, calls/s */
  double ratio;             /* own / others' mean; -1: unknown */
  uint32_t logical;         /* the last answer */
} ap_skew;

/* Resets `s` (NULL ignored): base width, no estimate, reason OFF. */
void ap_skew_init(ap_skew *s);

/* What a tick decided. */
typedef struct ap_skew_decision {
  uint32_t logical;       /* the logical aperture to use */
  int width_changed;      /* 1: logical differs from the previous tick's
                             (the first tick: from the base width's) */
  int weights_changed;    /* 1: a member's factor moved by 0.5% or more */
  ap_skew_reason reason;
  double own_rate;        /* calls/s this client sends (its members' sum) */
  double others_rate;     /* the others' estimated mean; -1: unknown */
  double ratio;           /* own / others'; -1: unknown */
  double multiplier;      /* m */
} ap_skew_decision;

/* One tick at now_ns over the `n` members of the current aperture (n may
 * be 0: the width decision alone, e.g. right after a ring is built).
 * Updates each member's state (its rate and factor) and the client's,
 * and fills *out. Member rates need two ticks; reports count after a
 * member has reported for AP_SKEW_WARM_NS. The width only changes when
 * g->widens (otherwise reason FIXED_WIDTH and logical = the base); the
 * weights change whenever at least two members report a utilization.
 * Errors: AP_EINVAL (s, g or out NULL; members NULL with n > 0; a member
 * without state, or with a pick weight that is not finite and > 0;
 * now_ns before the last tick), nothing changed then. */
int ap_skew_tick(ap_skew *s, const ap_skew_geometry *g,
                 const ap_skew_member *members, size_t n, int64_t now_ns,
                 ap_skew_decision *out, ap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AP_SKEW_H */
