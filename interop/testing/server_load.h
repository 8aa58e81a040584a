/* The interop server's per-call CPU work and the load it reports.
 *
 * Work: each TestService call runs a cheap integer hash loop for a fixed
 * number of iterations, calibrated at start-up from the thread's own CPU
 * clock so that work_us microseconds of CPU at capacity 1 is that many
 * iterations; capacity F scales the iterations by 1/F. The work is real CPU
 * on the worker thread, so a server with capacity 0.5 saturates at half
 * the load.
 *
 * Load: each call's measured work (its thread CPU time) goes into a window
 * of ten 100 ms buckets. cpu_utilization is the work CPU time of the last
 * second divided by (that second x the server's CPU allotment): its worker
 * threads, or the --cpu-quota in cores when one is set; clamped to [0, 1].
 *
 * Quota: with a CPU quota Q (cores), the server's work runs as on a CPU of
 * Q cores: each call reserves cost/Q of wall time on one virtual CPU shared
 * by the workers (first come, first served); its work starts when its turn
 * comes and its answer leaves when the reserved time ends. This is how a
 * container's CPU limit throttles, and lets many servers share a small
 * machine while each saturates at its own load.
 *
 * ORCA: the report is sent as the standard trailer
 * `endpoint-load-metrics-bin`, a serialized xds.data.orca.v3.OrcaLoadReport
 * carrying field 1, cpu_utilization (a double).
 *
 * Rate: every answered call also counts in the same ten buckets, so the
 * server knows its recent rate (calls/s over the last second). With a
 * capacity in calls/s (--capacity-qps) the report is the rate-based one
 * other ORCA servers send: cpu_utilization and application_utilization
 * (field 9) = the rate over that capacity, and rps_fractional (field 6) =
 * the rate. */
#ifndef APERTURE_INTEROP_SERVER_LOAD_H
#define APERTURE_INTEROP_SERVER_LOAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SERVER_LOAD_BUCKETS 10
#define SERVER_LOAD_BUCKET_NS 100000000LL /* 100 ms: a window of 1 s */
#define SERVER_LOAD_MAX_WORK_US 1000000.0 /* one call's work is at most 1 s of CPU */
#define ORCA_CPU_REPORT_LEN 9             /* tag 0x09 + 8-byte double */
#define ORCA_RATE_REPORT_LEN 27           /* fields 1, 6 and 9, 9 bytes each */
#define ORCA_TRAILER_KEY "endpoint-load-metrics-bin"

typedef struct server_load {
  pthread_mutex_t mu;
  double divisor;   /* the CPU allotment in cores (threads, or the quota) */
  double quota;     /* cores; 0: no quota */
  int64_t start_ns; /* when the window began (the server's start) */
  int64_t bucket_epoch[SERVER_LOAD_BUCKETS];
  int64_t bucket_ns[SERVER_LOAD_BUCKETS];
  int64_t total_ns; /* work CPU time since start */
  long bucket_calls[SERVER_LOAD_BUCKETS]; /* answered calls, same buckets */
  int64_t calls_epoch[SERVER_LOAD_BUCKETS];
  long calls;       /* calls that did work */
  int64_t free_at_ns; /* quota: when the virtual CPU is next free */
} server_load;

/* Iterations of the hash loop per microsecond of thread CPU time, measured
 * now (the best of a few short runs, so a busy machine does not make the
 * work smaller). Always > 0. */
double io_server_work_calibrate(void);

/* Iterations for one call: work_us / capacity microseconds at
 * `per_us` iterations each, the work capped at SERVER_LOAD_MAX_WORK_US.
 * 0 when work_us <= 0, capacity <= 0 or per_us <= 0. */
uint64_t io_server_work_iterations(double work_us, double capacity, double per_us);

/* Runs `iterations` of the hash loop; returns the thread CPU time it took
 * in nanoseconds (>= 0). */
int64_t io_server_work_run(uint64_t iterations);

/* Sets up `ld` at now_ns: threads worker threads, quota cores (0: none).
 * Returns 0, or -1 on a NULL argument, threads < 1 or quota < 0. */
int io_server_load_init(server_load *ld, int threads, double quota, int64_t now_ns);
void io_server_load_destroy(server_load *ld);

/* Adds one call's work CPU time at now_ns. */
void io_server_load_add(server_load *ld, int64_t now_ns, int64_t cpu_ns);

/* Work CPU time of the last second (the current bucket and the nine
 * before it) over (the time they span since the start x divisor), clamped
 * to [0, 1]. 0 on NULL. */
double io_server_load_utilization(server_load *ld, int64_t now_ns);

/* Counts one answered call at now_ns in the rate window. */
void io_server_load_count_call(server_load *ld, int64_t now_ns);

/* Answered calls of the last second (the current bucket and the nine
 * before it) over the time they span since the start: calls/s. 0 on NULL
 * or before any time passed. */
double io_server_load_rate(server_load *ld, int64_t now_ns);

/* Work CPU time since start and calls that did work. */
int64_t io_server_load_total_ns(server_load *ld, long *calls);

/* Quota: reserves cost_ns of CPU on the virtual CPU for a call arriving at
 * now_ns; sets *start_ns (when its work may run) and returns when its
 * answer may leave (*start_ns + cost_ns / quota). Without a quota both are
 * now_ns. Returns -1 and reserves nothing when the call would wait more
 * than max_wait_ns for its turn (the server is that far behind). */
int64_t io_server_load_reserve(server_load *ld, int64_t now_ns, int64_t cost_ns,
                               int64_t max_wait_ns, int64_t *start_ns);

/* Writes the serialized OrcaLoadReport {cpu_utilization: u} (u clamped to
 * [0, 1]) into out[0..ORCA_CPU_REPORT_LEN): 0x09 then u as a little-endian
 * IEEE 754 double. Returns ORCA_CPU_REPORT_LEN, or 0 when out is NULL. */
size_t io_orca_cpu_report(double u, uint8_t out[ORCA_CPU_REPORT_LEN]);

/* Writes the serialized OrcaLoadReport {cpu_utilization: u,
 * rps_fractional: rps, application_utilization: u} into
 * out[0..ORCA_RATE_REPORT_LEN): tags 0x09, 0x31 and 0x49, each followed by
 * a little-endian double; u and rps below 0 (or NaN) are sent as 0, above
 * 1 as they are (ORCA allows a utilization above its soft limit). Returns
 * ORCA_RATE_REPORT_LEN, or 0 when out is NULL. */
size_t io_orca_rate_report(double u, double rps, uint8_t out[ORCA_RATE_REPORT_LEN]);

/* Reads field 1 (cpu_utilization, wire type 1) from a serialized
 * OrcaLoadReport of len bytes, skipping other fields. Returns 0 with *u
 * set, or -1 when absent or the bytes are malformed. */
int io_orca_cpu_parse(const uint8_t *buf, size_t len, double *u);

#ifdef __cplusplus
}
#endif

#endif
