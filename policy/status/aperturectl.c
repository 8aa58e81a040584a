/*
 * aperturectl: queries a process's aperture status service.
 *
 *   aperturectl status ADDRESS [--target SUBSTR] [--json] [--max-endpoints N]
 *                              [--start N] [--no-endpoints] [--timeout-ms N]
 *   aperturectl health ADDRESS [--service NAME] [--timeout-ms N]
 *   aperturectl metrics ADDRESS [--target SUBSTR] [--timeout-ms N]
 *
 * Exit codes: 0 success, 1 the call failed (unreachable, deadline, error
 * status, or NOT_SERVING), 2 usage error, 3 the response could not be decoded.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aperture/v1/status.pb-c.h"
#include "grpc/health/v1/health.pb-c.h"
#include "policy/status/ap_decode_limit.h"
#include "policy/status/ap_json_string.h"
#include "policy/status/ap_metrics.h"
#include "policy/status/ap_status_client.h"
#include "policy/status/ap_status_limits.h"
#include "policy/status/ap_text_escape.h"

enum { EXIT_OK = 0, EXIT_RPC = 1, EXIT_USAGE = 2, EXIT_DECODE = 3 };

static const char *kUsage =
    "usage:\n"
    "  aperturectl status ADDRESS [--target SUBSTR] [--json] [--max-endpoints N]\n"
    "                             [--start N] [--no-endpoints] [--timeout-ms N]\n"
    "  aperturectl health ADDRESS [--service NAME] [--timeout-ms N]\n"
    "  aperturectl metrics ADDRESS [--target SUBSTR] [--timeout-ms N]  (Prometheus text)\n"
    "ADDRESS is host:port of the status server, e.g. 127.0.0.1:9901.\n"
    "--max-endpoints 0 means the server default (1000); the server caps it at 10000.\n"
    "Exit codes: 0 ok, 1 call failed, 2 usage, 3 undecodable response.\n";

static const char *status_code_name(int code) {
  static const char *names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
                                "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                                "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                                "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                                "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  return code >= 0 && code < (int)(sizeof names / sizeof names[0]) ? names[code] : "UNKNOWN";
}

static const char *conn_name(Aperture__V1__ConnectivityState s) {
  switch (s) {
    case APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_IDLE: return "idle";
    case APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_CONNECTING: return "connecting";
    case APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_READY: return "ready";
    case APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_TRANSIENT_FAILURE:
      return "transient_failure";
    case APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_SHUTDOWN: return "shutdown";
    default: return "none";
  }
}

static int parse_u32(const char *flag, const char *text, uint32_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (text[0] == '\0' || text[0] == '-' || *end != '\0' || errno != 0 || v > UINT32_MAX) {
    fprintf(stderr, "aperturectl: %s wants a number from 0 to %u, got \"%s\"\n", flag, UINT32_MAX,
            text);
    return -1;
  }
  *out = (uint32_t)v;
  return 0;
}

/* ---- JSON output ---- */

static void json_string(const char *s) { ap_json_write_string(stdout, s); }

static void json_double(double v) {
  if (isfinite(v)) printf("%.17g", v); else fputs("null", stdout);
}

/* The listed counters (policy/registry/ap_*_counters.def) as ,"name":N. */
static void json_ring_counters(const Aperture__V1__RingState *g) {
#define AP_RING_COUNTER(name, kind, metric, help, text) \
  printf(",\"" #name "\":%llu", (unsigned long long)g->name);
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
}

static void json_endpoint_counters(const Aperture__V1__EndpointState *e) {
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) \
  printf(",\"" #name "\":%llu", (unsigned long long)e->name);
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
}

static void print_json(const Aperture__V1__GetRingStateResponse *r) {
  printf("{\"rings\":[");
  for (size_t i = 0; i < r->n_rings; i++) {
    const Aperture__V1__RingState *g = r->rings[i];
    printf("%s\n{\"target\":", i ? "," : "");
    json_string(g->target);
    printf(",\"mode\":");
    json_string(g->mode);
    printf(",\"peer_index\":%u,\"peer_count\":%u,\"coordinate_source\":", g->peer_index,
           g->peer_count);
    json_string(g->coordinate_source_name);
    printf(",\"peer_target\":");
    json_string(g->peer_target);
    printf(",\"peer_fingerprint\":");
    json_string(g->peer_fingerprint);
    printf(",\"coordinate_changes\":%llu", (unsigned long long)g->coordinate_changes);
    printf(",\"pick_metric\":");
    json_string(g->pick_metric);
    printf(",\"peer_keys\":");
    json_string(g->peer_keys);
    printf(",\"skew_reason\":");
    json_string(g->skew_reason);
    printf(",\"skew_own_rate\":");
    json_double(g->skew_own_rate);
    printf(",\"skew_others_rate\":");
    json_double(g->skew_others_rate);
    printf(",\"skew_ratio\":");
    json_double(g->skew_ratio);
    printf(",\"skew_multiplier\":");
    json_double(g->skew_multiplier);
    printf(",\"offset\":");
    json_double(g->offset);
    printf(",\"width\":");
    json_double(g->width);
    printf(",\"min_aperture\":%u,\"logical_aperture\":%u,\"physical_aperture\":%u,\"widened\":%u"
           ",\"draining\":%u",
           g->min_aperture, g->logical_aperture, g->physical_aperture, g->widened, g->draining);
    printf(",\"max_ejection_percent\":%u,\"members_out\":%u,\"max_members_out\":%u",
           g->max_ejection_percent, g->members_out, g->max_members_out);
    printf(",\"peer_failure_share\":");
    json_double(g->peer_failure_share);
    printf(",\"fingerprint\":");
    json_string(g->fingerprint);
    json_ring_counters(g);
    printf(",\"last_status\":");
    json_string(g->last_status);
    printf(",\"config_warnings\":[");
    for (size_t w = 0; w < g->n_config_warnings; w++) {
      if (w > 0) putchar(',');
      json_string(g->config_warnings[w]);
    }
    putchar(']');
    printf(",\"affinity_sessions\":%llu", (unsigned long long)g->affinity_sessions);
    printf(",\"endpoint_count\":%u,\"start_index\":%u,\"truncated\":%s,\"next_start_index\":%u",
           g->endpoint_count, g->start_index, g->truncated ? "true" : "false",
           g->next_start_index);
    printf(",\"endpoints\":[");
    for (size_t k = 0; k < g->n_endpoints; k++) {
      const Aperture__V1__EndpointState *e = g->endpoints[k];
      printf("%s\n {\"address\":", k ? "," : "");
      json_string(e->address);
      printf(",\"ring_index\":%u,\"endpoint_weight\":", e->ring_index);
      json_double(e->endpoint_weight);
      printf(",\"intersection\":");
      json_double(e->intersection);
      printf(",\"pick_weight\":");
      json_double(e->pick_weight);
      printf(",\"in_aperture\":%s,\"widened\":%s,\"draining\":%s,\"connectivity\":\"%s\"",
             e->in_aperture ? "true" : "false", e->widened ? "true" : "false",
             e->draining ? "true" : "false", conn_name(e->connectivity));
      printf(",\"weight_factor\":");
      json_double(e->weight_factor);
      printf(",\"reported_rps\":");
      json_double(e->reported_rps);
      printf(",\"own_rate\":");
      json_double(e->own_rate);
      json_endpoint_counters(e);
      printf(",\"health\":");
      json_string(e->health != NULL && e->health[0] ? e->health : "ok");
      printf(",\"ejections\":%llu,\"ejection_reason\":", (unsigned long long)e->ejections);
      json_string(e->ejection_reason != NULL && e->ejection_reason[0] ? e->ejection_reason : "none");
      printf(",\"stuck_after_ms\":%u", (unsigned)e->stuck_after_ms);
      printf(",\"utilization\":");
      json_double(e->utilization);
      printf(",\"latency_ewma_ms\":");
      json_double(e->latency_ewma_ms);
      printf("}");
    }
    printf("]}");
  }
  printf("]}\n");
}

/* ---- table output ---- */

/* The listed counters on one line, each value after its text. */
static void text_ring_counters(const Aperture__V1__RingState *g) {
#define AP_RING_COUNTER(name, kind, metric, help, text) \
  printf("%s %llu", text, (unsigned long long)g->name);
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
  putchar('\n');
}

/* The listed endpoint counters' column headers, then one row's values. */
static void text_endpoint_counter_headers(void) {
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) printf(" %*s", width, column);
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
}

static void text_endpoint_counters(const Aperture__V1__EndpointState *e) {
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) \
  printf(" %*llu", width, (unsigned long long)e->name);
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
}

static void print_table(const Aperture__V1__GetRingStateResponse *r) {
  if (r->n_rings == 0) {
    printf("no aperture channels\n");
    return;
  }
  for (size_t i = 0; i < r->n_rings; i++) {
    const Aperture__V1__RingState *g = r->rings[i];
    /* Every server-supplied string goes through ap_escape_for_terminal. */
    char target[1024], mode[128], source[128], fingerprint[128], status[1024];
    ap_escape_for_terminal(g->target, target, sizeof target);
    ap_escape_for_terminal(g->mode, mode, sizeof mode);
    ap_escape_for_terminal(g->coordinate_source_name, source, sizeof source);
    ap_escape_for_terminal(g->fingerprint, fingerprint, sizeof fingerprint);
    ap_escape_for_terminal(g->last_status, status, sizeof status);
    if (i > 0) putchar('\n');
    printf("channel %s\n", target);
    if (g->peer_count > 0)
      printf("  mode %s  coordinate %u/%u (%s)  offset %.6f  width %.6f\n", mode,
             g->peer_index, g->peer_count, source, g->offset, g->width);
    else
      printf("  mode %s  coordinate none (%s)  offset %.6f  width %.6f\n", mode,
             source, g->offset, g->width);
    if (g->peer_target[0] != '\0')
      {
      char peers[1024], peer_fp[128];
      ap_escape_for_terminal(g->peer_target, peers, sizeof peers);
      ap_escape_for_terminal(g->peer_fingerprint, peer_fp, sizeof peer_fp);
      printf("  peers %s  count %u  fingerprint %s  coordinate changes %llu\n", peers,
             g->peer_count, peer_fp[0] ? peer_fp : "-",
             (unsigned long long)g->coordinate_changes);
    }
    printf("  aperture min %u  logical %u  physical %u  widened %u  fingerprint %s\n",
           g->min_aperture, g->logical_aperture, g->physical_aperture, g->widened, fingerprint);
    if (g->draining > 0) printf("  draining %u (removalGraceMs: never picked)\n", g->draining);
    printf("  members out %u  at most %u (maxEjectionPercent %u)  peer_failure_share ", g->members_out,
           g->max_members_out, g->max_ejection_percent);
    if (g->peer_failure_share >= 0) printf("%.2f%%\n", 100 * g->peer_failure_share);
    else printf("unknown\n");
    char metric[64];
    ap_escape_for_terminal(g->pick_metric, metric, sizeof metric);
    if (metric[0] != '\0') printf("  pick_metric %s\n", metric);
    /* The load columns only where the metric records them. */
    const int load_cols = strcmp(g->pick_metric, "orca") == 0 ||
                          strcmp(g->pick_metric, "peakEwma") == 0;
    text_ring_counters(g);
    /* The skew balance, where it runs (its columns below too). */
    const int skew_cols = g->skew_reason[0] != '\0' && strcmp(g->skew_reason, "off") != 0;
    if (skew_cols) {
      char reason[64];
      ap_escape_for_terminal(g->skew_reason, reason, sizeof reason);
      printf("  skew %s  own %.1f calls/s  others", reason, g->skew_own_rate);
      if (g->skew_others_rate >= 0) printf(" %.1f", g->skew_others_rate);
      else printf(" -");
      if (g->skew_ratio >= 0) printf("  ratio %.2f", g->skew_ratio);
      printf("  width x%g\n", g->skew_multiplier);
    }
    if (g->peer_keys[0] != '\0') {
      char keys[64];
      ap_escape_for_terminal(g->peer_keys, keys, sizeof keys);
      printf("  stable peer_keys %s\n", keys);
    }
    printf("  last_status %s\n", status[0] ? status : "-");
    for (size_t w = 0; w < g->n_config_warnings; w++) {
      char warning[1024];
      ap_escape_for_terminal(g->config_warnings[w], warning, sizeof warning);
      printf("  config_warning %s\n", warning);
    }
    if (g->affinity_sessions > 0)
      printf("  affinity_sessions %llu\n", (unsigned long long)g->affinity_sessions);
    if (g->n_endpoints > 0)
      printf("  endpoints %u (showing %u..%u)\n", g->endpoint_count, g->start_index,
             g->start_index + (uint32_t)g->n_endpoints - 1);
    else
      printf("  endpoints %u (none shown)\n", g->endpoint_count);
    if (g->truncated)
      printf("  truncated: more from --start %u\n", g->next_start_index);
    if (g->n_endpoints == 0) continue;
    printf("  %6s  %-24s %7s %9s %8s %-3s %-17s", "INDEX", "ADDRESS", "WEIGHT", "INTERSECT",
           "PICK_W", "AP", "STATE");
    text_endpoint_counter_headers();
    if (load_cols) printf(" %6s %9s", "UTIL", "LAT_MS");
    if (skew_cols) printf(" %6s %8s %8s", "FACTOR", "RPS", "OWN_RPS");
    printf(" %s\n", "HEALTH");
    for (size_t k = 0; k < g->n_endpoints; k++) {
      const Aperture__V1__EndpointState *e = g->endpoints[k];
      const char *ap = e->draining ? "d" : e->widened ? "w" : e->in_aperture ? "*" : "";
      char address[1024];
      ap_escape_for_terminal(e->address, address, sizeof address);
      printf("  %6u  %-24s %7.3f %9.4f %8.4f %-3s %-17s", e->ring_index, address,
             e->endpoint_weight, e->intersection, e->pick_weight, ap, conn_name(e->connectivity));
      text_endpoint_counters(e);
      if (load_cols) {
        if (e->utilization >= 0) printf(" %6.3f", e->utilization);
        else printf(" %6s", "-");
        if (e->latency_ewma_ms >= 0) printf(" %9.3f", e->latency_ewma_ms);
        else printf(" %9s", "-");
      }
      if (skew_cols) {
        printf(" %6.3f", e->weight_factor);
        if (e->reported_rps >= 0) printf(" %8.1f", e->reported_rps);
        else printf(" %8s", "-");
        if (e->own_rate >= 0) printf(" %8.1f", e->own_rate);
        else printf(" %8s", "-");
      }
      char health[64];
      ap_escape_for_terminal(e->health != NULL && e->health[0] ? e->health : "ok", health,
                             sizeof health);
      printf(" %s\n", health);
    }
  }
  printf("\nAP: * in the aperture, w added by widening, d draining (removal grace)\n");
}

/* Decodes a response body as `desc`, unless protobuf-c would need more than
 * AP_STATUS_CLIENT_MAX_DECODE_BYTES for it (ap_decode_limit.h: it
 * allocates a struct for every tiny message a hostile server can send).
 * NULL with a message on stderr when the body is refused or undecodable. */
static ProtobufCMessage *decode_response(const char *address, const ProtobufCMessageDescriptor *desc,
                                         const uint8_t *body, size_t len) {
  if (ap_decode_cost(desc, body, len, AP_STATUS_CLIENT_MAX_DECODE_BYTES) == SIZE_MAX) {
    fprintf(stderr,
            "aperturectl: %s sent an undecodable %s (%zu bytes: malformed, or more than %zu MiB "
            "to decode)\n",
            address, desc->short_name, len, AP_STATUS_CLIENT_MAX_DECODE_BYTES >> 20);
    return NULL;
  }
  ProtobufCMessage *msg = protobuf_c_message_unpack(desc, NULL, len, body);
  if (msg == NULL)
    fprintf(stderr, "aperturectl: %s sent an undecodable %s\n", address, desc->short_name);
  return msg;
}

/* Reports a failed call on stderr; returns the exit code. */
static int report_call_failure(const char *address, int timeout_ms,
                               const ap_status_call_result *res) {
  char details[2048];
  ap_escape_for_terminal(res->details, details, sizeof details);
  if (res->status == 4 /* DEADLINE_EXCEEDED */)
    fprintf(stderr, "aperturectl: %s did not answer within %d ms (DEADLINE_EXCEEDED)\n", address,
            timeout_ms);
  else if (res->status == 14 /* UNAVAILABLE */)
    fprintf(stderr, "aperturectl: cannot reach %s (UNAVAILABLE: %s)\n", address, details);
  else
    fprintf(stderr, "aperturectl: %s answered %s: %s\n", address, status_code_name(res->status),
            details);
  return EXIT_RPC;
}

/* Calls `method` with the packed request. EXIT_OK when the server answered
 * OK, with the reply in *res (the caller clears it); otherwise says why on
 * stderr, clears *res and returns the exit code (EXIT_USAGE when the call
 * could not be made, else report_call_failure's). */
static int call_answered(const char *address, const char *method, const uint8_t *bytes,
                         size_t len, uint32_t timeout_ms, ap_status_call_result *res) {
  if (ap_status_call(address, method, bytes, len, (int)timeout_ms, res) != 0) {
    char details[2048];
    fprintf(stderr, "aperturectl: %s\n",
            ap_escape_for_terminal(res->details, details, sizeof details));
    ap_status_call_result_clear(res);
    return EXIT_USAGE;
  }
  if (res->status != 0) {
    int rc = report_call_failure(address, (int)timeout_ms, res);
    ap_status_call_result_clear(res);
    return rc;
  }
  return EXIT_OK;
}

/* `metrics` is `status` printed as Prometheus text (ap_metrics.h). */
static int cmd_status(const char *address, int argc, char **argv, int metrics) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  int json = 0;
  uint32_t timeout_ms = 5000;
  req.target_filter = (char *)"";
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--no-endpoints") == 0) {
      req.omit_endpoints = 1;
    } else if (strcmp(a, "--target") == 0 && has_value) {
      req.target_filter = argv[++i];
    } else if (strcmp(a, "--max-endpoints") == 0 && has_value) {
      if (parse_u32(a, argv[++i], &req.max_endpoints) != 0) return EXIT_USAGE;
    } else if (strcmp(a, "--start") == 0 && has_value) {
      if (parse_u32(a, argv[++i], &req.start_index) != 0) return EXIT_USAGE;
    } else if (strcmp(a, "--timeout-ms") == 0 && has_value) {
      if (parse_u32(a, argv[++i], &timeout_ms) != 0 || timeout_ms == 0 || timeout_ms > 3600000) {
        fprintf(stderr, "aperturectl: --timeout-ms wants 1..3600000\n");
        return EXIT_USAGE;
      }
    } else {
      fprintf(stderr, "aperturectl: unknown or incomplete option \"%s\"\n%s", a, kUsage);
      return EXIT_USAGE;
    }
  }
  size_t len = aperture__v1__get_ring_state_request__get_packed_size(&req);
  uint8_t *bytes = malloc(len + 1);
  if (bytes == NULL) {
    fprintf(stderr, "aperturectl: out of memory\n");
    return EXIT_RPC;
  }
  aperture__v1__get_ring_state_request__pack(&req, bytes);
  ap_status_call_result res;
  int rc = call_answered(address, "/aperture.v1.ApertureStatus/GetRingState", bytes, len,
                         timeout_ms, &res);
  free(bytes);
  if (rc != EXIT_OK) return rc;
  Aperture__V1__GetRingStateResponse *resp = (Aperture__V1__GetRingStateResponse *)decode_response(
      address, &aperture__v1__get_ring_state_response__descriptor, res.body, res.body_len);
  ap_status_call_result_clear(&res);
  if (resp == NULL) return EXIT_DECODE;
  if (metrics) ap_metrics_write(stdout, resp);
  else if (json) print_json(resp);
  else print_table(resp);
  aperture__v1__get_ring_state_response__free_unpacked(resp, NULL);
  return fflush(stdout) == 0 ? EXIT_OK : EXIT_RPC;
}

static int cmd_health(const char *address, int argc, char **argv) {
  Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  uint32_t timeout_ms = 5000;
  req.service = (char *)"";
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--service") == 0 && i + 1 < argc) {
      req.service = argv[++i];
    } else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
      i++;
      if (parse_u32("--timeout-ms", argv[i], &timeout_ms) != 0 || timeout_ms == 0 ||
          timeout_ms > 3600000) {
        fprintf(stderr, "aperturectl: --timeout-ms wants 1..3600000\n");
        return EXIT_USAGE;
      }
    } else {
      fprintf(stderr, "aperturectl: unknown or incomplete option \"%s\"\n%s", argv[i], kUsage);
      return EXIT_USAGE;
    }
  }
  uint8_t bytes[1024];
  if (grpc__health__v1__health_check_request__get_packed_size(&req) > sizeof bytes) {
    fprintf(stderr, "aperturectl: --service name too long\n");
    return EXIT_USAGE;
  }
  size_t len = grpc__health__v1__health_check_request__pack(&req, bytes);
  ap_status_call_result res;
  int rc = call_answered(address, "/grpc.health.v1.Health/Check", bytes, len, timeout_ms, &res);
  if (rc != EXIT_OK) return rc;
  Grpc__Health__V1__HealthCheckResponse *resp = (Grpc__Health__V1__HealthCheckResponse *)decode_response(
      address, &grpc__health__v1__health_check_response__descriptor, res.body, res.body_len);
  ap_status_call_result_clear(&res);
  if (resp == NULL) return EXIT_DECODE;
  int serving = resp->status == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
  const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
      &grpc__health__v1__health_check_response__serving_status__descriptor, (int)resp->status);
  printf("%s\n", v != NULL ? v->name : "UNKNOWN");
  grpc__health__v1__health_check_response__free_unpacked(resp, NULL);
  return serving ? EXIT_OK : EXIT_RPC;
}

int main(int argc, char **argv) {
  if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    fputs(kUsage, stdout);
    return EXIT_OK;
  }
  if (argc < 3) {
    fputs(kUsage, stderr);
    return EXIT_USAGE;
  }
  if (strcmp(argv[1], "status") == 0) return cmd_status(argv[2], argc - 3, argv + 3, 0);
  if (strcmp(argv[1], "metrics") == 0) return cmd_status(argv[2], argc - 3, argv + 3, 1);
  if (strcmp(argv[1], "health") == 0) return cmd_health(argv[2], argc - 3, argv + 3);
  fprintf(stderr, "aperturectl: unknown command \"%s\"\n%s", argv[1], kUsage);
  return EXIT_USAGE;
}
