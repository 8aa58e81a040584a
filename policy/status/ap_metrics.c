/*
 * One family at a time (a scraper wants each family's samples together):
 * a table of ring-level families and one of endpoint-level families, each
 * with a getter; the counters' rows come from their lists in
 * policy/registry (ap_ring_counters.def, ap_endpoint_counters.def).
 * Counters are declared without "_total" and sampled with it, as
 * OpenMetrics wants; Prometheus' text parser accepts the same.
 */
#include "policy/status/ap_metrics.h"

#include <math.h>
#include <string.h>

#include "policy/status/ap_text_escape.h"

typedef const Aperture__V1__RingState ring_t;
typedef const Aperture__V1__EndpointState endpoint_t;

/* A list entry's kind as the family's type; another kind does not compile. */
#define KIND_counter "counter"
#define KIND_gauge "gauge"

typedef struct ring_family {
  const char *name, *type, *help;
  double (*get)(ring_t *g);
} ring_family;

typedef struct endpoint_family {
  const char *name, *type, *help;
  double (*get)(endpoint_t *e);
} endpoint_family;

static double r_peer_index(ring_t *g) { return g->peer_index; }
static double r_peer_count(ring_t *g) { return g->peer_count; }
static double r_offset(ring_t *g) { return g->offset; }
static double r_width(ring_t *g) { return g->width; }
static double r_min(ring_t *g) { return g->min_aperture; }
static double r_logical(ring_t *g) { return g->logical_aperture; }
static double r_physical(ring_t *g) { return g->physical_aperture; }
static double r_widened(ring_t *g) { return g->widened; }
static double r_draining(ring_t *g) { return g->draining; }
static double r_endpoints(ring_t *g) { return g->endpoint_count; }
static double r_sessions(ring_t *g) { return (double)g->affinity_sessions; }
static double r_config_warnings(ring_t *g) { return (double)g->n_config_warnings; }
/* NaN: the skew balance does not run, or has no estimate (left out). */
static int skew_runs(ring_t *g) {
  return g->skew_reason != NULL && g->skew_reason[0] != 0 && strcmp(g->skew_reason, "off") != 0;
}
static double r_skew_own(ring_t *g) { return skew_runs(g) ? g->skew_own_rate : NAN; }
static double r_skew_others(ring_t *g) {
  return skew_runs(g) && g->skew_others_rate >= 0 ? g->skew_others_rate : NAN;
}
static double r_skew_multiplier(ring_t *g) { return skew_runs(g) ? g->skew_multiplier : NAN; }
static double r_max_ejection_percent(ring_t *g) { return g->max_ejection_percent; }
static double r_members_out(ring_t *g) { return g->members_out; }
static double r_max_members_out(ring_t *g) { return g->max_members_out; }
/* NaN: no sample for this ring (the sample is left out). */
static double r_peer_failure_share(ring_t *g) {
  return g->peer_failure_share >= 0 ? g->peer_failure_share : NAN;
}
#define AP_RING_COUNTER(name, kind, metric, help, text) \
  static double r_##name(ring_t *g) { return (double)g->name; }
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER

static const ring_family kRing[] = {
    {"aperture_peer_index", "gauge", "This channel's peer index (its coordinate).", r_peer_index},
    {"aperture_peer_count", "gauge", "The peer count of the coordinate.", r_peer_count},
    {"aperture_window_offset", "gauge", "Start of this channel's window on the ring, in [0, 1).", r_offset},
    {"aperture_window_width", "gauge", "Width of the window, in (0, 1].", r_width},
    {"aperture_min_aperture", "gauge", "Configured minAperture.", r_min},
    {"aperture_logical_aperture", "gauge", "Logical aperture A (clamped to the endpoints).", r_logical},
    {"aperture_physical_aperture", "gauge", "Endpoints this channel connects to (members).", r_physical},
    {"aperture_widened", "gauge", "Members added by widening (failing members replaced).", r_widened},
    {"aperture_draining", "gauge", "Removed endpoints still draining under removalGraceMs.", r_draining},
    {"aperture_endpoints", "gauge", "Endpoints on the ring.", r_endpoints},
    {"aperture_affinity_sessions", "gauge", "Sticky sessions in the session table.", r_sessions},
    {"aperture_config_warnings", "gauge",
     "Fields of the channel's config that were ignored (unknown or misspelt).", r_config_warnings},
    {"aperture_skew_own_rate", "gauge",
     "Skew balance: this channel's calls/s; absent when it does not run.", r_skew_own},
    {"aperture_skew_others_rate", "gauge",
     "Skew balance: the other clients' mean calls/s estimated from the members' reports; absent when unknown.",
     r_skew_others},
    {"aperture_skew_multiplier", "gauge",
     "Skew balance: the window's width over its base width (1: not widened); absent when it does not run.",
     r_skew_multiplier},
    {"aperture_max_ejection_percent", "gauge", "Configured maxEjectionPercent.",
     r_max_ejection_percent},
    {"aperture_members_out", "gauge", "Members ejected or on probation after an ejection.",
     r_members_out},
    {"aperture_max_members_out", "gauge", "Members that may be out at once at this aperture size.",
     r_max_members_out},
    {"aperture_peer_failure_share", "gauge",
     "Lower median of the members' failure shares (health sweep); absent while unknown.",
     r_peer_failure_share},
#define AP_RING_COUNTER(name, kind, metric, help, text) {metric, KIND_##kind, help, r_##name},
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
};

#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) \
  static double e_##name(endpoint_t *e) { return (double)e->name; }
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
static double e_in_aperture(endpoint_t *e) { return e->in_aperture ? 1 : 0; }
static double e_widened(endpoint_t *e) { return e->widened ? 1 : 0; }
static double e_draining(endpoint_t *e) { return e->draining ? 1 : 0; }
static double e_pick_weight(endpoint_t *e) { return e->pick_weight; }
static double e_ejections(endpoint_t *e) { return (double)e->ejections; }
static double e_healthy(endpoint_t *e) {
  return e->health == NULL || e->health[0] == 0 || strcmp(e->health, "ok") == 0 ? 1 : 0;
}
/* NaN: no sample for this endpoint (the sample is left out). */
static double e_utilization(endpoint_t *e) {
  return e->utilization >= 0 ? e->utilization : NAN;
}
static double e_latency_ewma(endpoint_t *e) {
  return e->latency_ewma_ms >= 0 ? e->latency_ewma_ms / 1e3 : NAN;
}
static double e_weight_factor(endpoint_t *e) { return e->weight_factor; }
static double e_reported_rps(endpoint_t *e) {
  return e->reported_rps >= 0 ? e->reported_rps : NAN;
}
static double e_ready(endpoint_t *e) {
  return e->connectivity == APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_READY ? 1 : 0;
}

static const endpoint_family kEndpoint[] = {
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) {metric, KIND_##kind, help, e_##name},
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
    {"aperture_endpoint_in_aperture", "gauge", "1 when the endpoint is a member of the aperture.", e_in_aperture},
    {"aperture_endpoint_widened", "gauge", "1 when it is a member by widening.", e_widened},
    {"aperture_endpoint_draining", "gauge", "1 when it was removed and still drains.", e_draining},
    {"aperture_endpoint_pick_weight", "gauge", "Its weight in the pick (share of the window it covers).", e_pick_weight},
    {"aperture_endpoint_ready", "gauge", "1 when its subchannel is READY.", e_ready},
    {"aperture_endpoint_ejections", "counter", "Times it was ejected (a failure run, a silence while its peers answer, or a failed probe).", e_ejections},
    {"aperture_endpoint_healthy", "gauge", "1 unless ejected, on probation or stuck (status health).", e_healthy},
    {"aperture_endpoint_utilization", "gauge",
     "pickMetric orca: smoothed CPU utilization the endpoint reports (ORCA); absent without a fresh report.",
     e_utilization},
    {"aperture_endpoint_latency_ewma_seconds", "gauge",
     "pickMetric peakEwma: peak EWMA of the endpoint's call latency; absent before a sample.",
     e_latency_ewma},
    {"aperture_endpoint_weight_factor", "gauge",
     "Skew balance: the factor its pick weight is scaled by toward equal utilization (1: unchanged).",
     e_weight_factor},
    {"aperture_endpoint_reported_rps", "gauge",
     "The rate the endpoint reports serving (ORCA rps_fractional, sampled under the skew balance); absent without one.",
     e_reported_rps},
};

/* A label value as the text format allows it: valid UTF-8 with \, " and
 * newline escaped (\\, \", \n, the only escapes a Prometheus or
 * OpenMetrics parser knows). Every other control character (C0, DEL, C1:
 * a terminal showing the scrape would act on them) and every byte that is
 * not well-formed UTF-8 (the parsers refuse the whole scrape over one)
 * becomes U+FFFD. */
static void label_value(FILE *out, const char *s) {
  const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");
  size_t left = strlen((const char *)p);
  fputc('"', out);
  while (left > 0) {
    size_t len = ap_utf8_sequence_length(p, left);
    if (len == 0) {
      len = 1;
      fputs("\xEF\xBF\xBD", out);
    } else if (*p == '\\') {
      fputs("\\\\", out);
    } else if (*p == '"') {
      fputs("\\\"", out);
    } else if (*p == '\n') {
      fputs("\\n", out);
    } else if (*p < 0x20 || *p == 0x7F || ap_utf8_is_c1(p, len)) {
      fputs("\xEF\xBF\xBD", out);
    } else {
      fwrite(p, 1, len, out);
    }
    p += len;
    left -= len;
  }
  fputc('"', out);
}

static void value(FILE *out, double v) {
  if (isnan(v)) fputs("NaN", out);
  else if (isinf(v)) fputs(v > 0 ? "+Inf" : "-Inf", out);
  else fprintf(out, "%.17g", v);
}

static void header(FILE *out, const char *name, const char *type, const char *help) {
  fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *suffix(const char *type) { return type[0] == 'c' ? "_total" : ""; }

int ap_metrics_write(FILE *out, const Aperture__V1__GetRingStateResponse *r) {
  if (out == NULL || r == NULL) return -1;
  header(out, "aperture_ring", "info", "A channel's aperture ring: its mode and coordinate source.");
  for (size_t i = 0; i < r->n_rings; i++) {
    fputs("aperture_ring_info{target=", out);
    label_value(out, r->rings[i]->target);
    fputs(",mode=", out);
    label_value(out, r->rings[i]->mode);
    fputs(",coordinate_source=", out);
    label_value(out, r->rings[i]->coordinate_source_name);
    fputs(",pick_metric=", out);
    label_value(out, r->rings[i]->pick_metric);
    fputs("} 1\n", out);
  }
  header(out, "aperture_config_warning", "info",
         "A field of the channel's config that was ignored, and the field it may be a misspelling of.");
  for (size_t i = 0; i < r->n_rings; i++) {
    for (size_t w = 0; w < r->rings[i]->n_config_warnings; w++) {
      fputs("aperture_config_warning_info{target=", out);
      label_value(out, r->rings[i]->target);
      fputs(",warning=", out);
      label_value(out, r->rings[i]->config_warnings[w]);
      fputs("} 1\n", out);
    }
  }
  for (size_t f = 0; f < sizeof kRing / sizeof kRing[0]; f++) {
    header(out, kRing[f].name, kRing[f].type, kRing[f].help);
    for (size_t i = 0; i < r->n_rings; i++) {
      const double v = kRing[f].get(r->rings[i]);
      if (isnan(v)) continue; /* no sample */
      fprintf(out, "%s%s{target=", kRing[f].name, suffix(kRing[f].type));
      label_value(out, r->rings[i]->target);
      fputs("} ", out);
      value(out, v);
      fputc('\n', out);
    }
  }
  for (size_t f = 0; f < sizeof kEndpoint / sizeof kEndpoint[0]; f++) {
    header(out, kEndpoint[f].name, kEndpoint[f].type, kEndpoint[f].help);
    for (size_t i = 0; i < r->n_rings; i++) {
      for (size_t k = 0; k < r->rings[i]->n_endpoints; k++) {
        endpoint_t *e = r->rings[i]->endpoints[k];
        const double v = kEndpoint[f].get(e);
        if (isnan(v)) continue; /* no sample */
        fprintf(out, "%s%s{target=", kEndpoint[f].name, suffix(kEndpoint[f].type));
        label_value(out, r->rings[i]->target);
        fputs(",address=", out);
        label_value(out, e->address);
        fputs("} ", out);
        value(out, v);
        fputc('\n', out);
      }
    }
  }
  fputs("# EOF\n", out);
  return ferror(out) ? -1 : 0;
}
