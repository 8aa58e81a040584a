/*
 * ap_orca: the ORCA load report (xds.data.orca.v3.OrcaLoadReport) as a
 * server sends it in the `endpoint-load-metrics-bin` trailer, decoded from
 * its protobuf wire bytes, and an endpoint's last sampled report.
 *
 * gRPC 1.51 parses cpu_utilization, mem_utilization and the two maps of the
 * report itself (its BackendMetricData), but not rps_fractional (field 6)
 * nor application_utilization (field 9), which later versions of the proto
 * added. The rate a server reports is what lets a client see the load the
 * other clients put on its members (ap_skew.h), so the policy reads the
 * trailer's bytes and decodes the few fields it needs here, without a
 * protobuf library: a loop over (tag, value) pairs that skips every other
 * field, copies nothing and allocates nothing.
 *
 * Fields read (number, wire type 1 = 64-bit double):
 *   1 cpu_utilization   2 mem_utilization   6 rps_fractional
 *   7 eps               9 application_utilization
 * Every other field (3 rps as a varint, the maps 4, 5 and 8, fields of
 * later versions) is skipped by its wire type. A field present twice keeps
 * its last value, as protobuf parsers do.
 *
 * Sampling: decoding on every call is not needed (servers report a rate
 * over their last second or so), so each endpoint keeps one
 * ap_orca_sample: ap_orca_sample_claim() lets exactly one call per
 * interval through (one atomic load on the common path, a compare-and-swap
 * for the one that samples), and that call records the decoded report.
 * All fields are atomics: any thread may claim, record and read.
 */
#ifndef AP_ORCA_H
#define AP_ORCA_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of ap_orca_report.present. */
#define AP_ORCA_CPU (1u << 0)
#define AP_ORCA_MEM (1u << 1)
#define AP_ORCA_RPS (1u << 2)
#define AP_ORCA_EPS (1u << 3)
#define AP_ORCA_APP (1u << 4)

/* The fields of a report this module reads; each -1 when absent. */
typedef struct ap_orca_report {
  double cpu_utilization;         /* field 1 */
  double mem_utilization;         /* field 2 */
  double rps_fractional;          /* field 6: calls/s the server serves */
  double eps;                     /* field 7: errors/s */
  double application_utilization; /* field 9 */
  uint32_t present;               /* AP_ORCA_* bits of the fields found */
} ap_orca_report;

/* Decodes `len` bytes of a serialized OrcaLoadReport into *out (every
 * field -1 and present 0 first). Values are taken as sent (NaN, negative
 * or above 1 included: readers check what they use). Errors: AP_EINVAL
 * (out NULL; buf NULL with len > 0; malformed bytes: a truncated tag or
 * value, a varint longer than 10 bytes, a length past the end, wire type
 * 3, 4, 6 or 7, or a read field with a wire type other than 1), with the
 * offset in the message; *out then holds what was read before. An empty
 * report (len 0) is valid and has no field. */
int ap_orca_decode(const uint8_t *buf, size_t len, ap_orca_report *out,
                   ap_error *err);

/* How often an endpoint's report is sampled: one call in this many ns. */
#define AP_ORCA_SAMPLE_INTERVAL_NS 100000000LL /* 100 ms */
/* A sampled rate older than this is stale (the server went quiet). */
#define AP_ORCA_SAMPLE_STALE_NS 5000000000LL /* 5 s */

/* One endpoint's last sampled report. Zero-initialized (or
 * ap_orca_sample_init) means never sampled. Private fields: use the
 * functions below. */
typedef struct ap_orca_sample {
  int64_t next_ns;   /* the next claim is due at this time */
  int64_t stamp_ns;  /* when the last report was recorded */
  uint64_t rps_bits; /* rps_fractional, a double's bits; -1: none */
  uint64_t app_bits; /* application_utilization; -1: none */
  uint32_t sampled;  /* 1 once a report was recorded */
  uint32_t reserved;
} ap_orca_sample;

/* Resets `s` (NULL ignored). Not atomic: before the state is shared. */
void ap_orca_sample_init(ap_orca_sample *s);

/* Returns 1 for the one caller that may sample at now_ns (the first call
 * at or after the due time; the next is then due interval_ns later), 0
 * for every other caller and for NULL or interval_ns <= 0. One relaxed
 * atomic load when not due; a compare-and-swap when due. */
int ap_orca_sample_claim(ap_orca_sample *s, int64_t now_ns,
                         int64_t interval_ns);

/* Records the rate and the application utilization of `r` at now_ns
 * (fields absent from the report are stored as absent). Relaxed stores:
 * a reader may see the new rate with the old stamp for an instant.
 * Errors: AP_EINVAL (s or r NULL). */
int ap_orca_sample_record(ap_orca_sample *s, const ap_orca_report *r,
                          int64_t now_ns, ap_error *err);

/* The last sampled rps_fractional: returns 1 and sets *rps when one was
 * recorded within AP_ORCA_SAMPLE_STALE_NS of now_ns, is finite and >= 0;
 * otherwise returns 0 and sets *rps = -1 (also for NULL s; rps NULL: 0). */
int ap_orca_sample_rps(const ap_orca_sample *s, int64_t now_ns, double *rps);

/* The same for application_utilization. */
int ap_orca_sample_app_utilization(const ap_orca_sample *s, int64_t now_ns,
                                   double *u);

#ifdef __cplusplus
}
#endif

#endif /* AP_ORCA_H */
