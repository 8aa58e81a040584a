/* ap_orca: OrcaLoadReport wire decoding and per-endpoint samples. */
#include "policy/core/skew/ap_orca.h"

#include <math.h>
#include <string.h>

/* Reads a varint at buf[*at..len); 0, or -1 when truncated or longer than
 * the 10 bytes a 64-bit varint takes. */
static int read_varint(const uint8_t *buf, size_t len, size_t *at,
                       uint64_t *v) {
  *v = 0;
  for (int i = 0; i < 10; i++) {
    if (*at >= len) return -1;
    const uint8_t b = buf[(*at)++];
    *v |= (uint64_t)(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return 0;
  }
  return -1;
}

static double read_double_le(const uint8_t *p) {
  uint64_t bits = 0;
  for (int i = 0; i < 8; i++) bits |= (uint64_t)p[i] << (8 * i);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* Where a read field goes, or NULL for a field this module skips. */
static double *field_slot(ap_orca_report *r, uint64_t field, uint32_t *bit) {
  switch (field) {
    case 1: *bit = AP_ORCA_CPU; return &r->cpu_utilization;
    case 2: *bit = AP_ORCA_MEM; return &r->mem_utilization;
    case 6: *bit = AP_ORCA_RPS; return &r->rps_fractional;
    case 7: *bit = AP_ORCA_EPS; return &r->eps;
    case 9: *bit = AP_ORCA_APP; return &r->application_utilization;
    default: return NULL;
  }
}

int ap_orca_decode(const uint8_t *buf, size_t len, ap_orca_report *out,
                   ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  out->cpu_utilization = -1;
  out->mem_utilization = -1;
  out->rps_fractional = -1;
  out->eps = -1;
  out->application_utilization = -1;
  out->present = 0;
  if (buf == NULL && len > 0) {
    return ap_error_set(err, AP_EINVAL, "buf is NULL with len %zu", len);
  }
  size_t at = 0;
  while (at < len) {
    const size_t tag_at = at;
    uint64_t key = 0, v = 0;
    if (read_varint(buf, len, &at, &key) != 0) {
      return ap_error_set(err, AP_EINVAL, "ORCA report: bad tag at byte %zu",
                          tag_at);
    }
    const uint64_t field = key >> 3;
    const unsigned wire = (unsigned)(key & 7);
    uint32_t bit = 0;
    double *slot = field_slot(out, field, &bit);
    if (slot != NULL && wire != 1) {
      return ap_error_set(err, AP_EINVAL,
                          "ORCA report: field %llu has wire type %u at byte "
                          "%zu, expected 1 (double)",
                          (unsigned long long)field, wire, tag_at);
    }
    switch (wire) {
      case 0: /* varint */
        if (read_varint(buf, len, &at, &v) != 0) {
          return ap_error_set(err, AP_EINVAL,
                              "ORCA report: bad varint at byte %zu", at);
        }
        break;
      case 1: /* 64-bit */
        if (len - at < 8) {
          return ap_error_set(err, AP_EINVAL,
                              "ORCA report: truncated double at byte %zu", at);
        }
        if (slot != NULL) {
          *slot = read_double_le(buf + at);
          out->present |= bit;
        }
        at += 8;
        break;
      case 2: /* length-delimited: the maps, strings of later fields */
        if (read_varint(buf, len, &at, &v) != 0 || v > len - at) {
          return ap_error_set(err, AP_EINVAL,
                              "ORCA report: bad length at byte %zu", tag_at);
        }
        at += (size_t)v;
        break;
      case 5: /* 32-bit */
        if (len - at < 4) {
          return ap_error_set(err, AP_EINVAL,
                              "ORCA report: truncated fixed32 at byte %zu", at);
        }
        at += 4;
        break;
      default:
        return ap_error_set(err, AP_EINVAL,
                            "ORCA report: wire type %u at byte %zu", wire,
                            tag_at);
    }
  }
  return AP_OK;
}

static uint64_t double_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

static double bits_double(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

void ap_orca_sample_init(ap_orca_sample *s) {
  if (s == NULL) return;
  memset(s, 0, sizeof *s);
  s->rps_bits = double_bits(-1);
  s->app_bits = double_bits(-1);
}

int ap_orca_sample_claim(ap_orca_sample *s, int64_t now_ns,
                         int64_t interval_ns) {
  if (s == NULL || interval_ns <= 0) return 0;
  int64_t due = __atomic_load_n(&s->next_ns, __ATOMIC_RELAXED);
  if (now_ns < due) return 0;
  return __atomic_compare_exchange_n(&s->next_ns, &due, now_ns + interval_ns,
                                     0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

int ap_orca_sample_record(ap_orca_sample *s, const ap_orca_report *r,
                          int64_t now_ns, ap_error *err) {
  if (s == NULL || r == NULL) {
    return ap_error_set(err, AP_EINVAL, "%s must not be NULL",
                        s == NULL ? "sample" : "report");
  }
  const double rps = (r->present & AP_ORCA_RPS) ? r->rps_fractional : -1;
  const double app =
      (r->present & AP_ORCA_APP) ? r->application_utilization : -1;
  __atomic_store_n(&s->rps_bits, double_bits(rps), __ATOMIC_RELAXED);
  __atomic_store_n(&s->app_bits, double_bits(app), __ATOMIC_RELAXED);
  __atomic_store_n(&s->stamp_ns, now_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&s->sampled, 1u, __ATOMIC_RELEASE);
  return AP_OK;
}

static int read_fresh(const ap_orca_sample *s, const uint64_t *bits,
                      int64_t now_ns, double *out) {
  if (out == NULL) return 0;
  *out = -1;
  if (s == NULL || __atomic_load_n(&s->sampled, __ATOMIC_ACQUIRE) == 0) {
    return 0;
  }
  const int64_t stamp = __atomic_load_n(&s->stamp_ns, __ATOMIC_RELAXED);
  if (now_ns - stamp > AP_ORCA_SAMPLE_STALE_NS) return 0;
  const double v = bits_double(__atomic_load_n(bits, __ATOMIC_RELAXED));
  if (!isfinite(v) || v < 0) return 0;
  *out = v;
  return 1;
}

int ap_orca_sample_rps(const ap_orca_sample *s, int64_t now_ns, double *rps) {
  return read_fresh(s, s ? &s->rps_bits : NULL, now_ns, rps);
}

int ap_orca_sample_app_utilization(const ap_orca_sample *s, int64_t now_ns,
                                   double *u) {
  return read_fresh(s, s ? &s->app_bits : NULL, now_ns, u);
}
