#define _GNU_SOURCE
#include "interop/testing/server_load.h"

#include <string.h>
#include <time.h>

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The loop: a 64-bit multiply-xorshift chain the compiler cannot fold. */
static volatile uint64_t g_sink;

static uint64_t hash_loop(uint64_t iterations) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ iterations;
  for (uint64_t i = 0; i < iterations; i++) {
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h += i;
  }
  return h;
}

int64_t io_server_work_run(uint64_t iterations) {
  if (iterations == 0) return 0;
  int64_t t0 = thread_cpu_ns();
  g_sink = hash_loop(iterations);
  int64_t d = thread_cpu_ns() - t0;
  return d > 0 ? d : 0;
}

double io_server_work_calibrate(void) {
  const uint64_t n = 200000;
  double best = 0;
  for (int k = 0; k < 5; k++) {
    int64_t ns = io_server_work_run(n);
    double per_us = ns > 0 ? (double)n / ((double)ns / 1000.0) : 0;
    if (per_us > best) best = per_us;
  }
  return best > 0 ? best : 100.0;
}

uint64_t io_server_work_iterations(double work_us, double capacity, double per_us) {
  if (!(work_us > 0) || !(capacity > 0) || !(per_us > 0)) return 0;
  double us = work_us / capacity;
  if (us > SERVER_LOAD_MAX_WORK_US) us = SERVER_LOAD_MAX_WORK_US;
  return (uint64_t)(us * per_us + 0.5);
}

int io_server_load_init(server_load *ld, int threads, double quota, int64_t now_ns) {
  if (ld == NULL || threads < 1 || !(quota >= 0)) return -1;
  memset(ld, 0, sizeof(*ld));
  pthread_mutex_init(&ld->mu, NULL);
  ld->quota = quota;
  ld->divisor = quota > 0 ? quota : (double)threads;
  ld->start_ns = now_ns;
  ld->free_at_ns = now_ns;
  for (int i = 0; i < SERVER_LOAD_BUCKETS; i++) {
    ld->bucket_epoch[i] = -1;
    ld->calls_epoch[i] = -1;
  }
  return 0;
}

void io_server_load_destroy(server_load *ld) {
  if (ld != NULL) pthread_mutex_destroy(&ld->mu);
}

void io_server_load_add(server_load *ld, int64_t now_ns, int64_t cpu_ns) {
  if (ld == NULL || cpu_ns < 0) return;
  int64_t epoch = (now_ns - ld->start_ns) / SERVER_LOAD_BUCKET_NS;
  if (epoch < 0) epoch = 0;
  int b = (int)(epoch % SERVER_LOAD_BUCKETS);
  pthread_mutex_lock(&ld->mu);
  if (ld->bucket_epoch[b] != epoch) {
    ld->bucket_epoch[b] = epoch;
    ld->bucket_ns[b] = 0;
  }
  ld->bucket_ns[b] += cpu_ns;
  ld->total_ns += cpu_ns;
  ld->calls++;
  pthread_mutex_unlock(&ld->mu);
}

double io_server_load_utilization(server_load *ld, int64_t now_ns) {
  if (ld == NULL) return 0;
  int64_t since = now_ns - ld->start_ns;
  if (since <= 0) return 0;
  int64_t epoch = since / SERVER_LOAD_BUCKET_NS;
  int64_t busy = 0;
  pthread_mutex_lock(&ld->mu);
  for (int i = 0; i < SERVER_LOAD_BUCKETS; i++) {
    int64_t e = ld->bucket_epoch[i];
    if (e >= 0 && e <= epoch && e > epoch - SERVER_LOAD_BUCKETS) busy += ld->bucket_ns[i];
  }
  pthread_mutex_unlock(&ld->mu);
  /* the nine full buckets before the current one, and the current one so far */
  int64_t span = (SERVER_LOAD_BUCKETS - 1) * SERVER_LOAD_BUCKET_NS + since % SERVER_LOAD_BUCKET_NS;
  if (span > since) span = since;
  double u = (double)busy / ((double)span * ld->divisor);
  if (!(u > 0)) return 0;
  return u > 1 ? 1 : u;
}

void io_server_load_count_call(server_load *ld, int64_t now_ns) {
  if (ld == NULL) return;
  int64_t epoch = (now_ns - ld->start_ns) / SERVER_LOAD_BUCKET_NS;
  if (epoch < 0) epoch = 0;
  int b = (int)(epoch % SERVER_LOAD_BUCKETS);
  pthread_mutex_lock(&ld->mu);
  if (ld->calls_epoch[b] != epoch) {
    ld->calls_epoch[b] = epoch;
    ld->bucket_calls[b] = 0;
  }
  ld->bucket_calls[b]++;
  pthread_mutex_unlock(&ld->mu);
}

double io_server_load_rate(server_load *ld, int64_t now_ns) {
  if (ld == NULL) return 0;
  int64_t since = now_ns - ld->start_ns;
  if (since <= 0) return 0;
  int64_t epoch = since / SERVER_LOAD_BUCKET_NS;
  long calls = 0;
  pthread_mutex_lock(&ld->mu);
  for (int i = 0; i < SERVER_LOAD_BUCKETS; i++) {
    int64_t e = ld->calls_epoch[i];
    if (e >= 0 && e <= epoch && e > epoch - SERVER_LOAD_BUCKETS) calls += ld->bucket_calls[i];
  }
  pthread_mutex_unlock(&ld->mu);
  /* the same span as the utilization's */
  int64_t span = (SERVER_LOAD_BUCKETS - 1) * SERVER_LOAD_BUCKET_NS + since % SERVER_LOAD_BUCKET_NS;
  if (span > since) span = since;
  return (double)calls / ((double)span * 1e-9);
}

int64_t io_server_load_total_ns(server_load *ld, long *calls) {
  if (ld == NULL) return 0;
  pthread_mutex_lock(&ld->mu);
  int64_t t = ld->total_ns;
  if (calls) *calls = ld->calls;
  pthread_mutex_unlock(&ld->mu);
  return t;
}

int64_t io_server_load_reserve(server_load *ld, int64_t now_ns, int64_t cost_ns,
                               int64_t max_wait_ns, int64_t *start_ns) {
  if (start_ns) *start_ns = now_ns;
  if (ld == NULL || !(ld->quota > 0) || cost_ns <= 0) return now_ns;
  int64_t hold = (int64_t)((double)cost_ns / ld->quota);
  pthread_mutex_lock(&ld->mu);
  int64_t start = ld->free_at_ns > now_ns ? ld->free_at_ns : now_ns;
  if (start - now_ns > max_wait_ns) {
    pthread_mutex_unlock(&ld->mu);
    return -1;
  }
  ld->free_at_ns = start + hold;
  pthread_mutex_unlock(&ld->mu);
  if (start_ns) *start_ns = start;
  return start + hold;
}

size_t io_orca_cpu_report(double u, uint8_t out[ORCA_CPU_REPORT_LEN]) {
  if (out == NULL) return 0;
  if (!(u > 0)) u = 0;
  if (u > 1) u = 1;
  uint64_t bits;
  memcpy(&bits, &u, sizeof(bits));
  out[0] = 0x09; /* field 1, wire type 1 (64-bit) */
  for (int i = 0; i < 8; i++) out[1 + i] = (uint8_t)(bits >> (8 * i));
  return ORCA_CPU_REPORT_LEN;
}

static void put_double(uint8_t tag, double v, uint8_t *out) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof(bits));
  out[0] = tag;
  for (int i = 0; i < 8; i++) out[1 + i] = (uint8_t)(bits >> (8 * i));
}

size_t io_orca_rate_report(double u, double rps, uint8_t out[ORCA_RATE_REPORT_LEN]) {
  if (out == NULL) return 0;
  if (!(u > 0)) u = 0;
  if (!(rps > 0)) rps = 0;
  put_double(0x09, u, out);      /* field 1 cpu_utilization, wire type 1 */
  put_double(0x31, rps, out + 9); /* field 6 rps_fractional */
  put_double(0x49, u, out + 18);  /* field 9 application_utilization */
  return ORCA_RATE_REPORT_LEN;
}

/* Reads a varint at buf[*at..len); -1 when truncated or too long. */
static int read_varint(const uint8_t *buf, size_t len, size_t *at, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*at >= len) return -1;
    uint8_t b = buf[(*at)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return 0;
  }
  return -1;
}

int io_orca_cpu_parse(const uint8_t *buf, size_t len, double *u) {
  if ((buf == NULL && len > 0) || u == NULL) return -1;
  size_t at = 0;
  int found = 0;
  while (at < len) {
    uint64_t key, v;
    if (read_varint(buf, len, &at, &key) != 0) return -1;
    uint64_t field = key >> 3;
    switch (key & 7) {
      case 0:
        if (read_varint(buf, len, &at, &v) != 0) return -1;
        break;
      case 1:
        if (len - at < 8) return -1;
        if (field == 1) {
          uint64_t bits = 0;
          for (int i = 0; i < 8; i++) bits |= (uint64_t)buf[at + i] << (8 * i);
          memcpy(u, &bits, sizeof(bits));
          found = 1; /* the last occurrence wins, as protobuf parsers do */
        }
        at += 8;
        break;
      case 2:
        if (read_varint(buf, len, &at, &v) != 0 || v > len - at) return -1;
        at += (size_t)v;
        break;
      case 5:
        if (len - at < 4) return -1;
        at += 4;
        break;
      default:
        return -1;
    }
  }
  return found ? 0 : -1;
}
