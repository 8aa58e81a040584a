/* The gray scenario's figures from its clients' call logs (the interop
 * client's --call-log, interop/testing/call_log.h): which server each
 * call went to, how many failed and where, the latency quantiles, and how
 * long the faulty server took to lose its traffic after the fault started
 * and to get it back after it healed. Pure computation, no processes. */
#ifndef APERTURE_INTEROP_FLEET_GRAY_CALLS_H
#define APERTURE_INTEROP_FLEET_GRAY_CALLS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRAY_MAX_SERVERS 16
#define GRAY_UNATTRIBUTED (-1) /* a call no server can be named for */

/* One finished call. */
typedef struct gray_call {
  int64_t start_us;   /* CLOCK_MONOTONIC, as the runner's io_delay_queue_now_ns / 1000 */
  int64_t latency_us;
  int code;           /* gRPC status code 0..16 */
  int server;         /* server slot, or GRAY_UNATTRIBUTED */
  int client;         /* the client that made it (0..31) */
} gray_call;

/* The servers a log's SERVER field can name: slot i is hostname "s<i>"
 * (the fleet's servers answer with it) and the address addrs[i]
 * ("HOST:PORT"). */
typedef struct gray_servers {
  int n;
  char addrs[GRAY_MAX_SERVERS][64];
} gray_servers;

/* The slot a call log's SERVER field names: "s<i>" (an answer's hostname),
 * or "ipv4:HOST:PORT" equal to addrs[i] (gRPC's peer once the call reached
 * a connection). Anything else is GRAY_UNATTRIBUTED, notably the channel's
 * target, a list "ipv4:A,B,...", which gRPC 1.51 reports as the peer of a
 * call that never reached a connection (it waited for a pick, or its
 * connection was not yet made, until its deadline). */
int io_fleet_gray_server_of(const gray_servers *s, const char *field);

/* Parses one call log line ("START_US LATENCY_US CODE SERVER") into *out,
 * the server named through s, client 0. Returns 0, or -1 on a malformed
 * line or a code outside 0..16 (out untouched). */
int io_fleet_gray_parse_line(const gray_servers *s, const char *line, gray_call *out);

/* When the fault happened, to whom, and how the figures are cut. The
 * fault is on the faulty servers as the faulty clients see them: server
 * `faulty`, or the set faulty_mask (bit i: slot i) when not 0, for every
 * client, or for the clients of client_mask (bit c: client c) when not 0
 * (a partition). A failed call is on a faulty server when one of those
 * clients made it to one of those servers; the windows count only those
 * clients' calls. */
typedef struct gray_windows {
  int64_t fault_start_us; /* the fault began (before its action) */
  int64_t heal_us;        /* the fault was over (after its action) */
  int faulty;             /* its server slot */
  int n_servers;          /* fair share of one server: 1 / n_servers */
  double bucket_ms;       /* the share windows' length (200) */
  long min_bucket_calls;  /* a window with fewer new calls says nothing (20) */
  unsigned faulty_mask;   /* 0: just `faulty` */
  unsigned client_mask;   /* 0: every client */
} gray_windows;

typedef struct gray_figures {
  long calls, ok, failed;
  long by_code[17];
  long failed_faulty;       /* failed calls that went to a faulty server */
  long failed_healthy;      /* failed calls that went to a healthy one */
  long failed_unattributed; /* failed calls no server can be named for */
  double p50_ms, p99_ms, p999_ms; /* over every call, failed ones too */
  /* From fault_start_us to the end of the first window of the fault in
   * which the faulty servers got under 1% of the calls started in it; -1
   * when no window of the fault did. Windows are bucket_ms long, from
   * fault_start_us, the last one cut at heal_us. */
  double detect_ms;
  /* Windows of the fault after the detecting one in which the faulty
   * server was back at 1% or more (the policy tried it again). */
  long relapses;
  /* From heal_us to the end of the first window after it in which the
   * faulty servers got at least half their fair share of the calls
   * started; -1 when none did before the calls ended. */
  double recover_ms;
  double share_during; /* the faulty servers' share of the calls started in the fault */
  double share_after;  /* ... and after it healed */
  /* The survival target: at most the calls in flight to the faulty
   * servers when the fault began plus 0.1% of all calls fail.
   * inflight_at_fault: the fault's clients' calls on its servers that
   * started before fault_start_us and ended after it (whatever their
   * status); failed_budget: inflight_at_fault + calls / 1000. */
  long inflight_at_fault;
  long failed_budget;
} gray_figures;

/* Sorts calls[0..n) by start time, in place (NULL or n 0: nothing). */
void io_fleet_gray_sort_by_start(gray_call *calls, size_t n);

/* Nearest-rank quantiles of calls[0..n)'s latencies, in ms: q[k] for each
 * of the n_q fractions in q (0 < q <= 1), written to out_ms[k]. Returns 0,
 * or -1 on NULL arguments, n 0 or out of memory. */
int io_fleet_gray_latency_quantiles(const gray_call *calls, size_t n, const double *q,
                                    size_t n_q, double *out_ms);

/* The figures of calls[0..n) (any order; the array is sorted by start in
 * place). Returns 0, or -1 on NULL arguments, a bad window (heal before
 * fault, bucket_ms <= 0, faulty outside 0..n_servers, a faulty_mask bit
 * at n_servers or above) or no calls. */
int io_fleet_gray_figures(gray_call *calls, size_t n, const gray_windows *w, gray_figures *out);

#ifdef __cplusplus
}
#endif

#endif
