/* ap_skew: the width from rates and the weights from utilization (see
 * ap_skew.h). */
#include "policy/core/skew/ap_skew.h"

#include <math.h>
#include <string.h>

static const char *const kReasonNames[AP_SKEW_REASON_COUNT] = {
    "off",    "no_reports",  "no_traffic",  "even",       "heavy",
    "probing", "remembered", "no_estimate", "fixed_width", "warming"};

const char *ap_skew_reason_name(ap_skew_reason reason) {
  if ((unsigned)reason >= AP_SKEW_REASON_COUNT) return "unknown";
  return kReasonNames[reason];
}

int ap_skew_geometry_compute(const ap_ring *ring, const ap_aperture *base,
                             uint32_t peer_count, const ap_aperture *current,
                             double *others, ap_skew_geometry *g,
                             ap_error *err) {
  if (ring == NULL || base == NULL || current == NULL || g == NULL ||
      (others == NULL && ap_aperture_count(current) > 0)) {
    return ap_error_set(err, AP_EINVAL,
                        "ring, base, current, others and g must not be NULL");
  }
  const size_t n = ap_ring_size(ring);
  for (size_t k = 0; k < ap_aperture_count(base); k++) {
    if (ap_aperture_member(base, k)->index >= n) {
      return ap_error_set(err, AP_EINVAL, "base is from a larger ring");
    }
  }
  for (size_t k = 0; k < ap_aperture_count(current); k++) {
    if (ap_aperture_member(current, k)->index >= n) {
      return ap_error_set(err, AP_EINVAL, "current is from a larger ring");
    }
  }
  const ap_mode mode = ap_aperture_mode(base);
  double base_total = 0;
  for (size_t k = 0; k < ap_aperture_count(base); k++) {
    base_total += ap_aperture_member(base, k)->pick_weight;
  }
  memset(g, 0, sizeof *g);
  g->endpoints = (uint32_t)n;
  g->min_aperture = ap_aperture_logical(base);
  g->widens = peer_count > 0 &&
              (mode == AP_MODE_CONTINUOUS || mode == AP_MODE_SMOOTH);
  g->base_endpoints = ap_aperture_width(base) * (double)n;
  if (g->base_endpoints < 1) g->base_endpoints = 1;
  for (size_t k = 0; k < ap_aperture_count(base); k++) {
    const ap_member *m = ap_aperture_member(base, k);
    const double own = base_total > 0 ? m->pick_weight / base_total : 0;
    const double o = (double)peer_count * ap_ring_arc_width(ring, m->index) - own;
    g->base_others += o > 0 ? o : 0;
  }
  for (size_t k = 0; k < ap_aperture_count(current); k++) {
    const ap_member *m = ap_aperture_member(current, k);
    size_t slot = 0;
    double own = 0;
    if (base_total > 0 && ap_aperture_find(base, m->index, &slot)) {
      own = ap_aperture_member(base, slot)->pick_weight / base_total;
    }
    const double o = (double)peer_count * ap_ring_arc_width(ring, m->index) - own;
    others[k] = o > 0 ? o : 0;
  }
  return AP_OK;
}

static uint32_t clamp_logical(const ap_skew_geometry *g, double endpoints) {
  /* a hair below: m x a whole base width is not pushed up by rounding */
  double a = ceil(endpoints - 1e-9);
  if (a < 1) a = 1;
  if (a > (double)g->endpoints) a = (double)g->endpoints;
  return (uint32_t)a;
}

uint32_t ap_skew_logical(const ap_skew_geometry *g, double m) {
  if (g == NULL) return 0;
  const uint32_t base = g->min_aperture >= 1 ? g->min_aperture : 1;
  if (!(m > 1)) return base;
  const uint32_t wide = clamp_logical(g, m * g->base_endpoints);
  return wide > base ? wide : base;
}

uint32_t ap_skew_probe_logical(const ap_skew_geometry *g) {
  if (g == NULL) return 0;
  return clamp_logical(g, ceil(g->base_endpoints - 1e-9) + 1);
}

void ap_skew_member_state_init(ap_skew_member_state *m) {
  if (m == NULL) return;
  memset(m, 0, sizeof *m);
  m->factor = 1;
  m->seen_ns = -1;
  m->reporting_ns = -1;
}

double ap_skew_member_factor(const ap_skew_member_state *m) {
  return m == NULL ? 1 : m->factor;
}

double ap_skew_member_rate(const ap_skew_member_state *m) {
  return m == NULL || !m->rate_valid ? -1 : m->rate;
}

void ap_skew_init(ap_skew *s) {
  if (s == NULL) return;
  memset(s, 0, sizeof *s);
  s->last_ns = -1;
  s->multiplier = 1;
  s->no_probe_until_ns = INT64_MIN;
  s->others_rate = -1;
  s->below_ns = -1;
  s->reason = AP_SKEW_OFF;
  s->ratio = -1;
}

/* A member's rate: the first measurement sets it, later ones blend in
 * with weight 1 - exp(-dt / 1 s). Calls are cumulative, so a late tick
 * still measures the mean rate since the last one; a member not seen for
 * AP_SKEW_MEMBER_GAP_NS starts over (it left the window for a while). */
static void update_rate(ap_skew_member_state *st, double calls, int64_t now) {
  const int64_t gap = st->seen_ns < 0 ? -1 : now - st->seen_ns;
  if (gap < 0 || gap > AP_SKEW_MEMBER_GAP_NS || calls < st->calls_seen) {
    st->rate_valid = 0;
  } else if (gap > 0) {
    const double inst = (calls - st->calls_seen) / ((double)gap * 1e-9);
    if (!st->rate_valid) {
      st->rate = inst;
      st->rate_valid = 1;
    } else {
      const double w = exp(-(double)gap / (double)AP_SKEW_RATE_TAU_NS);
      st->rate = st->rate * w + inst * (1 - w);
    }
  }
  if (gap != 0) {
    st->calls_seen = calls;
    st->seen_ns = now;
  }
}

/* The others' evidence over the members: sum of backgrounds and of the
 * client-rates they stand for, from members whose reports are warm. */
typedef struct evidence {
  double background, others, own;
  int reports; /* members that report a rate at all */
} evidence;

static evidence gather(const ap_skew_member *members, size_t n, int64_t now) {
  evidence e = {0, 0, 0, 0};
  for (size_t k = 0; k < n; k++) {
    const ap_skew_member *m = &members[k];
    ap_skew_member_state *st = m->state;
    update_rate(st, m->calls, now);
    if (st->rate_valid) e.own += st->rate;
    if (!(m->rps >= 0) || !isfinite(m->rps)) {
      st->reporting_ns = -1;
      continue;
    }
    e.reports++;
    if (st->reporting_ns < 0) st->reporting_ns = now;
    if (!st->rate_valid || now - st->reporting_ns < AP_SKEW_WARM_NS) continue;
    const double b = m->rps - st->rate;
    e.background += b > 0 ? b : 0;
    e.others += m->others > 0 ? m->others : 0;
  }
  return e;
}

/* The multiplier the ratio asks for: rounded, within [1, the whole ring]. */
static double target_multiplier(const ap_skew_geometry *g, double ratio) {
  double m_max = ceil((double)g->endpoints / g->base_endpoints - 1e-9);
  if (m_max < 1) m_max = 1;
  double t = floor(ratio + 0.5);
  if (t < 1) t = 1;
  return t > m_max ? m_max : t;
}

/* No estimate: probe when the windows tile the ring and members report,
 * end a probe that found nothing, narrow a widened client whose members
 * stopped reporting. */
static void without_estimate(ap_skew *s, const ap_skew_geometry *g,
                             const evidence *e, int64_t now) {
  s->ratio = -1;
  s->up_ticks = 0;
  if (s->probing) {
    if (now - s->probe_ns < AP_SKEW_PROBE_TIMEOUT_NS) return;
    s->probing = 0;
    s->multiplier = 1;
    s->no_probe_until_ns = now + AP_SKEW_MEMORY_NS;
    s->reason = AP_SKEW_NO_ESTIMATE;
    return;
  }
  const int tiled = g->base_others < AP_SKEW_MIN_OTHERS;
  if (tiled && e->reports > 0 && s->multiplier == 1 &&
      now >= s->no_probe_until_ns) {
    s->probing = 1;
    s->probe_ns = now;
    s->reason = AP_SKEW_PROBING;
    return;
  }
  if (s->multiplier > 1) {
    /* Widened with no evidence left (reports gone or all cold): back to
     * the base width after the hold. */
    if (s->below_ns < 0) s->below_ns = now;
    if (now - s->below_ns >= AP_SKEW_NARROW_HOLD_NS) {
      s->multiplier = 1;
      s->below_ns = -1;
    } else {
      s->reason = AP_SKEW_HEAVY;
      return;
    }
  }
  if (now < s->no_probe_until_ns) {
    s->reason = AP_SKEW_NO_ESTIMATE;
  } else {
    s->reason = e->reports > 0 ? AP_SKEW_WARMING : AP_SKEW_NO_REPORTS;
  }
}

/* The width: the estimate, the ratio against the band, hysteresis. */
static void decide_width(ap_skew *s, const ap_skew_geometry *g,
                         const evidence *e, int64_t now) {
  if (!g->widens) {
    s->multiplier = 1;
    s->probing = 0;
    s->reason = AP_SKEW_FIXED_WIDTH;
    s->ratio = -1;
    return;
  }
  double estimate = -1;
  ap_skew_reason known = AP_SKEW_EVEN;
  if (e->others >= AP_SKEW_MIN_OTHERS) {
    estimate = e->background / e->others;
    s->others_rate = estimate;
    s->others_ns = now;
  } else if (s->others_rate >= 0 && now - s->others_ns <= AP_SKEW_MEMORY_NS) {
    estimate = s->others_rate;
    known = AP_SKEW_REMEMBERED;
  }
  if (estimate < 0) {
    without_estimate(s, g, e, now);
    return;
  }
  /* Sending nothing is a ratio of 0: a widened client narrows after the
   * hold like any other that became light. */
  const int idle = !(e->own > 0);
  const double floor_rate = e->own * 1e-3; /* others idle: ratio 1000 */
  s->ratio = idle ? 0 : e->own / (estimate > floor_rate ? estimate : floor_rate);
  const double target = target_multiplier(g, s->ratio);
  if (s->probing) {
    /* the probe has its estimate: its answer at once */
    s->probing = 0;
    s->multiplier = target;
    s->up_ticks = 0;
    s->below_ns = -1;
  } else if (s->ratio >= s->multiplier + AP_SKEW_BAND &&
             target > s->multiplier) {
    s->below_ns = -1;
    if (++s->up_ticks >= AP_SKEW_UP_TICKS) {
      s->multiplier = target;
      s->up_ticks = 0;
    }
  } else if (s->ratio <= s->multiplier - AP_SKEW_BAND &&
             target < s->multiplier) {
    s->up_ticks = 0;
    if (s->below_ns < 0) s->below_ns = now;
    if (now - s->below_ns >= AP_SKEW_NARROW_HOLD_NS) {
      s->multiplier = target;
      s->below_ns = -1;
    }
  } else {
    s->up_ticks = 0;
    s->below_ns = -1;
  }
  s->reason = s->multiplier > 1 ? AP_SKEW_HEAVY : idle ? AP_SKEW_NO_TRAFFIC : known;
}

static double shrink(double x, double d) {
  if (x > d) return x - d;
  if (x < -d) return x + d;
  return 0;
}

static double clamp_factor(double f) {
  if (!(f >= AP_SKEW_FACTOR_MIN)) return AP_SKEW_FACTOR_MIN;
  return f > AP_SKEW_FACTOR_MAX ? AP_SKEW_FACTOR_MAX : f;
}

static int reports_utilization(const ap_skew_member *m) {
  return m->utilization >= 0 && isfinite(m->utilization);
}

/* ln((mean + eps) / (u + eps)): how far below the mean a member is. */
static double deviation(const ap_skew_member *m, double mean) {
  return log((mean + AP_SKEW_UTIL_EPS) / (m->utilization + AP_SKEW_UTIL_EPS));
}

/* A member's factor after one step toward `mean`, before the total is
 * restored; its factor as it is when it reports no utilization. */
static double stepped(const ap_skew_member *m, double mean) {
  const double f = m->state->factor;
  if (!reports_utilization(m)) return f;
  return clamp_factor(
      f * exp(AP_SKEW_GAIN * shrink(deviation(m, mean), AP_SKEW_SETTLE)));
}

/* The weights: while balancing (see ap_skew.h), one damped multiplicative
 * step toward equal utilization, then the total pick weight restored.
 * Returns 1 when a factor moved by 0.5% or more. */
static int step_weights(ap_skew *s, const ap_skew_member *members, size_t n) {
  double total = 0, shared = 0, weighted = 0;
  int reporting = 0;
  for (size_t k = 0; k < n; k++) {
    total += members[k].pick_weight * members[k].state->factor;
  }
  for (size_t k = 0; k < n; k++) {
    const ap_skew_member *m = &members[k];
    if (!(m->utilization >= 0) || !isfinite(m->utilization)) continue;
    const double share = m->pick_weight * m->state->factor / total;
    shared += share;
    weighted += share * m->utilization;
    reporting++;
  }
  if (reporting < 2 || !(shared > 0)) return 0;
  const double mean = weighted / shared;
  double worst = 0;
  for (size_t k = 0; k < n; k++) {
    if (!reports_utilization(&members[k])) continue;
    const double e = fabs(deviation(&members[k], mean));
    if (e > worst) worst = e;
  }
  if (worst > AP_SKEW_DEADBAND) s->balancing = 1;
  if (worst <= AP_SKEW_SETTLE) s->balancing = 0;
  if (!s->balancing) return 0;
  double base = 0, scaled = 0;
  for (size_t k = 0; k < n; k++) {
    base += members[k].pick_weight;
    scaled += members[k].pick_weight * stepped(&members[k], mean);
  }
  const double scale = scaled > 0 ? base / scaled : 1;
  int changed = 0;
  for (size_t k = 0; k < n; k++) {
    ap_skew_member_state *st = members[k].state;
    const double next = clamp_factor(stepped(&members[k], mean) * scale);
    if (fabs(log(next / st->factor)) >= 0.005) changed = 1;
    st->factor = next;
  }
  return changed;
}

int ap_skew_tick(ap_skew *s, const ap_skew_geometry *g,
                 const ap_skew_member *members, size_t n, int64_t now_ns,
                 ap_skew_decision *out, ap_error *err) {
  if (s == NULL || g == NULL || out == NULL || (members == NULL && n > 0)) {
    return ap_error_set(err, AP_EINVAL,
                        "s, g, out and members must not be NULL");
  }
  if (s->last_ns >= 0 && now_ns < s->last_ns) {
    return ap_error_set(err, AP_EINVAL,
                        "now_ns %lld is before the last tick %lld",
                        (long long)now_ns, (long long)s->last_ns);
  }
  for (size_t k = 0; k < n; k++) {
    if (members[k].state == NULL) {
      return ap_error_set(err, AP_EINVAL, "members[%zu].state is NULL", k);
    }
    if (!(members[k].pick_weight > 0) || !isfinite(members[k].pick_weight)) {
      return ap_error_set(err, AP_EINVAL,
                          "members[%zu].pick_weight is %g, must be finite "
                          "and > 0",
                          k, members[k].pick_weight);
    }
  }
  const uint32_t before = s->logical != 0 ? s->logical : ap_skew_logical(g, 1);
  s->last_ns = now_ns;
  const evidence e = gather(members, n, now_ns);
  s->own_rate = e.own;
  decide_width(s, g, &e, now_ns);
  s->logical = s->probing ? ap_skew_probe_logical(g)
                          : ap_skew_logical(g, s->multiplier);
  memset(out, 0, sizeof *out);
  out->logical = s->logical;
  out->width_changed = before != s->logical;
  out->weights_changed = step_weights(s, members, n);
  out->reason = s->reason;
  out->own_rate = e.own;
  out->others_rate = s->others_rate;
  out->ratio = s->ratio;
  out->multiplier = s->multiplier;
  return AP_OK;
}
