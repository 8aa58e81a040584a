/*
 * Fuzz target for what aperturectl does with a server's answer: decode it
 * (refusing one that would cost too much to decode) and print it as a
 * table, as JSON and as Prometheus text (the metrics writer). Input byte 0
 * odd: the rest is the response's bytes as a server would send them; even:
 * a response is built from the rest, with hostile strings (terminal escape
 * sequences, C0 and C1 controls, bytes that are not UTF-8, quotes and
 * backslashes, long strings) in every string field, odd doubles and enums,
 * and packed.
 *
 * Invariants: protobuf-c never allocates more than ap_decode_cost()
 * counted, when it counted (measured with a counting allocator); every output is valid
 * UTF-8 with no byte a terminal acts on (no C0 control but the newline, no
 * DEL, no C1 control); the JSON parses; every metrics line is a comment or
 * a sample whose label values use only the escapes the text format knows.
 *
 * The target includes aperturectl.c itself, so that it drives the very
 * functions the program runs (static there); its main is renamed.
 */
#define main aperturectl_main
#include "policy/status/aperturectl.c"
#undef main

#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "tests/fuzz/fuzz_input.h"

/* ---- what a terminal must never receive ---- */

static int terminal_safe(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len) {
    if (p[i] == '\n') {
      i++;
      continue;
    }
    if (p[i] < 0x20 || p[i] == 0x7F) return 0;
    size_t n = ap_utf8_sequence_length(p + i, len - i);
    if (n == 0 || ap_utf8_is_c1(p + i, n)) return 0;
    i += n;
  }
  return 1;
}

/* ---- a JSON validator (RFC 8259), enough to say the output parses ---- */

typedef struct json_in {
  const char *p, *end;
  int depth;
} json_in;

static void json_ws(json_in *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')) j->p++;
}

static int json_lit(json_in *j, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) return 0;
  j->p += n;
  return 1;
}

static int json_string_ok(json_in *j) {
  if (j->p >= j->end || *j->p != '"') return 0;
  j->p++;
  while (j->p < j->end && *j->p != '"') {
    unsigned char c = (unsigned char)*j->p;
    if (c < 0x20) return 0;
    if (c == '\\') {
      j->p++;
      if (j->p >= j->end) return 0;
      if (*j->p == 'u') {
        for (int k = 1; k <= 4; k++)
          if (j->p + k >= j->end || !isxdigit((unsigned char)j->p[k])) return 0;
        j->p += 5;
        continue;
      }
      if (strchr("\"\\/bfnrt", *j->p) == NULL) return 0;
    }
    j->p++;
  }
  if (j->p >= j->end) return 0;
  j->p++;
  return 1;
}

static int json_number_ok(json_in *j) {
  const char *start = j->p;
  if (j->p < j->end && *j->p == '-') j->p++;
  if (j->p < j->end && *j->p == '0') {
    j->p++;
  } else {
    if (j->p >= j->end || !isdigit((unsigned char)*j->p)) return 0;
    while (j->p < j->end && isdigit((unsigned char)*j->p)) j->p++;
  }
  if (j->p < j->end && *j->p == '.') {
    j->p++;
    if (j->p >= j->end || !isdigit((unsigned char)*j->p)) return 0;
    while (j->p < j->end && isdigit((unsigned char)*j->p)) j->p++;
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
    if (j->p >= j->end || !isdigit((unsigned char)*j->p)) return 0;
    while (j->p < j->end && isdigit((unsigned char)*j->p)) j->p++;
  }
  return j->p > start;
}

static int json_value_ok(json_in *j);

static int json_members_ok(json_in *j, char close, int keyed) {
  j->p++; /* the opening bracket */
  if (++j->depth > 64) return 0;
  json_ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    j->depth--;
    return 1;
  }
  for (;;) {
    json_ws(j);
    if (keyed) {
      if (!json_string_ok(j)) return 0;
      json_ws(j);
      if (j->p >= j->end || *j->p != ':') return 0;
      j->p++;
    }
    if (!json_value_ok(j)) return 0;
    json_ws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    if (j->p < j->end && *j->p == close) {
      j->p++;
      j->depth--;
      return 1;
    }
    return 0;
  }
}

static int json_value_ok(json_in *j) {
  json_ws(j);
  if (j->p >= j->end) return 0;
  switch (*j->p) {
    case '{': return json_members_ok(j, '}', 1);
    case '[': return json_members_ok(j, ']', 0);
    case '"': return json_string_ok(j);
    case 't': return json_lit(j, "true");
    case 'f': return json_lit(j, "false");
    case 'n': return json_lit(j, "null");
    default: return json_number_ok(j);
  }
}

static int json_ok(const char *s, size_t len) {
  json_in j = {s, s + len, 0};
  if (!json_value_ok(&j)) return 0;
  json_ws(&j);
  return j.p == j.end;
}

/* ---- the Prometheus / OpenMetrics text format, line by line ---- */

static int metric_line_ok(const char *p, const char *end) {
  if (p < end && *p == '#') return 1; /* HELP, TYPE, EOF: the writer's own */
  const char *name = p;
  while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == ':')) p++;
  if (p == name) return 0;
  if (p < end && *p == '{') {
    p++;
    for (;;) {
      const char *label = p;
      while (p < end && (isalnum((unsigned char)*p) || *p == '_')) p++;
      if (p == label || p + 1 >= end || p[0] != '=' || p[1] != '"') return 0;
      p += 2;
      while (p < end && *p != '"') {
        if (*p == '\\') {
          p++;
          if (p >= end || (*p != '\\' && *p != '"' && *p != 'n')) return 0;
        }
        p++;
      }
      if (p >= end) return 0;
      p++; /* closing quote */
      if (p < end && *p == ',') {
        p++;
        continue;
      }
      if (p < end && *p == '}') {
        p++;
        break;
      }
      return 0;
    }
  }
  if (p >= end || *p != ' ') return 0;
  p++;
  if (p >= end) return 0;
  for (; p < end; p++)
    if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '+')) return 0;
  return 1;
}

static int metrics_ok(const char *s, size_t len) {
  const char *end = s + len, *line = s;
  while (line < end) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    if (nl == NULL) return 0; /* every line ends with a newline */
    if (!metric_line_ok(line, nl)) return 0;
    line = nl + 1;
  }
  return 1;
}

/* ---- a counting allocator: what protobuf-c really allocates ---- */

typedef struct counting {
  size_t now, peak;
} counting;

static void *count_alloc(void *ctx, size_t size) {
  counting *c = ctx;
  size_t *block = malloc(sizeof(size_t) * 2 + size);
  if (block == NULL) return NULL;
  block[0] = size;
  c->now += size + 16;
  if (c->now > c->peak) c->peak = c->now;
  return block + 2;
}

static void count_free(void *ctx, void *p) {
  if (p == NULL) return;
  counting *c = ctx;
  size_t *block = (size_t *)p - 2;
  c->now -= block[0] + 16;
  free(block);
}

/* ---- hostile responses ---- */

static const char *const kHostile[] = {
    "",
    "dns:///svc:443",
    "orca",
    "peakEwma",
    "ok",
    "x\x1b]0;owned\x07\x1b[2J\r\x9b\xc2\x9b\xff\xfe\\\"y",
    "\x1b[31mred\x1b[0m",
    "\xc2\x80\xc2\x9f\xc2\xa0",
    "\xed\xa0\x80\xc0\xaf\xf4\x90\x80\x80\xe2\x82",
    "tab\there\nnewline\rcr\x7f",
    "\"quoted\" and \\back\\slash",
    "caf\xc3\xa9 \xf0\x9f\x98\x80",
};

static char g_long[3000];

static char *hostile_string(fuzz_input *in) {
  uint8_t pick = fuzz_u8(in);
  if (pick % 16 == 15) {
    /* A long string of one hostile piece repeated. */
    const char *piece = kHostile[5];
    size_t n = strlen(piece), used = 0;
    while (used + n < sizeof g_long) {
      memcpy(g_long + used, piece, n);
      used += n;
    }
    g_long[used] = '\0';
    return g_long;
  }
  return (char *)kHostile[pick % (sizeof kHostile / sizeof kHostile[0])];
}

static double odd_double(fuzz_input *in) {
  static const double kValues[] = {0.0, -0.0, 0.5, 1.0, -1.0, 1e308, -1e308, 1e-308, 12345.678};
  uint8_t pick = fuzz_u8(in);
  if (pick % 4 == 0) {
    uint64_t bits = fuzz_u64(in);
    double d;
    memcpy(&d, &bits, sizeof d); /* NaNs and infinities among them */
    return d;
  }
  return kValues[pick % (sizeof kValues / sizeof kValues[0])];
}

enum { kMaxRings = 3, kMaxEndpoints = 4 };

/* Builds and packs a response from the input into *out (malloc'd). */
static size_t build_response(fuzz_input *in, uint8_t **out) {
  Aperture__V1__RingState rings[kMaxRings];
  Aperture__V1__RingState *ring_ptrs[kMaxRings];
  Aperture__V1__EndpointState endpoints[kMaxRings][kMaxEndpoints];
  Aperture__V1__EndpointState *endpoint_ptrs[kMaxRings][kMaxEndpoints];
  Aperture__V1__GetRingStateResponse r = APERTURE__V1__GET_RING_STATE_RESPONSE__INIT;
  r.n_rings = fuzz_u8(in) % (kMaxRings + 1);
  r.rings = ring_ptrs;
  for (size_t i = 0; i < r.n_rings; i++) {
    Aperture__V1__RingState *g = &rings[i];
    aperture__v1__ring_state__init(g);
    g->target = hostile_string(in);
    g->mode = hostile_string(in);
    g->coordinate_source_name = hostile_string(in);
    g->fingerprint = hostile_string(in);
    g->last_status = hostile_string(in);
    g->peer_target = hostile_string(in);
    g->peer_fingerprint = hostile_string(in);
    g->pick_metric = hostile_string(in);
    g->peer_keys = hostile_string(in);
    g->peer_index = fuzz_u32(in);
    g->peer_count = fuzz_u32(in);
    g->coordinate_source = (Aperture__V1__CoordinateSource)(fuzz_u8(in) % 12);
    g->offset = odd_double(in);
    g->width = odd_double(in);
    g->draining = fuzz_u8(in) % 3;
    g->affinity_sessions = fuzz_u64(in);
    g->endpoint_count = fuzz_u32(in);
    g->start_index = fuzz_u32(in);
    g->truncated = fuzz_u8(in) & 1;
    g->n_endpoints = fuzz_u8(in) % (kMaxEndpoints + 1);
    g->endpoints = endpoint_ptrs[i];
    for (size_t k = 0; k < g->n_endpoints; k++) {
      Aperture__V1__EndpointState *e = &endpoints[i][k];
      aperture__v1__endpoint_state__init(e);
      e->address = hostile_string(in);
      e->health = hostile_string(in);
      e->ejection_reason = hostile_string(in);
      e->ring_index = fuzz_u32(in);
      e->endpoint_weight = odd_double(in);
      e->intersection = odd_double(in);
      e->pick_weight = odd_double(in);
      e->utilization = odd_double(in);
      e->latency_ewma_ms = odd_double(in);
      e->connectivity = (Aperture__V1__ConnectivityState)(fuzz_u8(in) % 9);
      e->outstanding = fuzz_u64(in);
      e->widened = fuzz_u8(in) & 1;
      e->draining = fuzz_u8(in) & 1;
      endpoint_ptrs[i][k] = e;
    }
    ring_ptrs[i] = g;
  }
  size_t len = aperture__v1__get_ring_state_response__get_packed_size(&r);
  *out = malloc(len > 0 ? len : 1);
  if (*out == NULL) return 0;
  return aperture__v1__get_ring_state_response__pack(&r, *out);
}

/* ---- capturing what aperturectl prints ---- */

static int g_capture_fd = -1;
static char g_captured[1 << 20];

/* Runs print_fn(resp) with stdout going to a temporary file; returns the
 * bytes printed (at most sizeof g_captured) in g_captured. */
static size_t capture(void (*print_fn)(const Aperture__V1__GetRingStateResponse *),
                      const Aperture__V1__GetRingStateResponse *resp) {
  if (g_capture_fd < 0) {
    FILE *f = tmpfile();
    FUZZ_CHECK(f != NULL, "tmpfile");
    g_capture_fd = fileno(f);
  }
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  FUZZ_CHECK(saved >= 0 && ftruncate(g_capture_fd, 0) == 0, "capture set-up");
  lseek(g_capture_fd, 0, SEEK_SET);
  dup2(g_capture_fd, STDOUT_FILENO);
  print_fn(resp);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  ssize_t n = pread(g_capture_fd, g_captured, sizeof g_captured, 0);
  return n > 0 ? (size_t)n : 0;
}

/* decode_response says why it refuses on stderr: kept quiet here. */
static ProtobufCMessage *decode_quietly(const uint8_t *body, size_t len) {
  static int devnull = -1;
  if (devnull < 0) devnull = open("/dev/null", O_WRONLY);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  dup2(devnull, STDERR_FILENO);
  ProtobufCMessage *m =
      decode_response("fuzz", &aperture__v1__get_ring_state_response__descriptor, body, len);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  return m;
}

static void check_response(const uint8_t *body, size_t len) {
  /* The decode cost is an upper bound of what unpack allocates. */
  const size_t cost = ap_decode_cost(&aperture__v1__get_ring_state_response__descriptor, body,
                                     len, AP_STATUS_CLIENT_MAX_DECODE_BYTES);
  counting counted = {0, 0};
  ProtobufCAllocator allocator = {count_alloc, count_free, &counted};
  ProtobufCMessage *m = protobuf_c_message_unpack(
      &aperture__v1__get_ring_state_response__descriptor, &allocator, len, body);
  if (m != NULL && cost != SIZE_MAX) { /* the cost may refuse what unpack is lenient on */
    char hex[2 * 64 + 1] = "";
    for (size_t i = 0; i < len && i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", body[i]);
    FUZZ_CHECK(counted.peak <= cost, "unpack allocated %zu bytes, counted %zu: %s", counted.peak,
               cost, hex);
  }
  if (m != NULL) protobuf_c_message_free_unpacked(m, &allocator);

  Aperture__V1__GetRingStateResponse *resp =
      (Aperture__V1__GetRingStateResponse *)decode_quietly(body, len);
  if (resp == NULL) return;
  size_t n = capture(print_table, resp);
  FUZZ_CHECK(terminal_safe(g_captured, n), "the table holds a byte a terminal acts on");
  n = capture(print_json, resp);
  FUZZ_CHECK(terminal_safe(g_captured, n), "the JSON holds a byte a terminal acts on");
  FUZZ_CHECK(n < sizeof g_captured && json_ok(g_captured, n), "the JSON does not parse: %.*s",
             (int)(n < 2000 ? n : 2000), g_captured);
  char *text = NULL;
  size_t text_len = 0;
  FILE *f = open_memstream(&text, &text_len);
  FUZZ_CHECK(f != NULL && ap_metrics_write(f, resp) == 0, "metrics writer failed");
  fclose(f);
  FUZZ_CHECK(terminal_safe(text, text_len), "the metrics hold a byte a terminal acts on");
  FUZZ_CHECK(metrics_ok(text, text_len), "a metrics line breaks the text format");
  free(text);
  aperture__v1__get_ring_state_response__free_unpacked(resp, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 0 && (data[0] & 1)) {
    check_response(data + 1, size - 1);
    return 0;
  }
  fuzz_input in = {data, size, size > 0 ? 1 : 0};
  uint8_t *body = NULL;
  size_t len = build_response(&in, &body);
  if (body != NULL) check_response(body, len);
  free(body);
  return 0;
}
