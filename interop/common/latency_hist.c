#include "interop/common/latency_hist.h"

#include <math.h>
#include <string.h>

static int bucket_of(uint64_t v) {
  if (v < 128) return (int)v;
  int msb = 63 - __builtin_clzll(v);
  int shift = msb - 6;
  int idx = 128 + (msb - 7) * 64 + (int)((v >> shift) - 64);
  return idx < LATENCY_HIST_BUCKETS ? idx : LATENCY_HIST_BUCKETS - 1;
}

static uint64_t bucket_mid(int idx) {
  if (idx < 128) return (uint64_t)idx;
  int msb = 7 + (idx - 128) / 64;
  uint64_t m = 64 + (uint64_t)((idx - 128) % 64);
  int shift = msb - 6;
  return (m << shift) + ((1ULL << shift) >> 1);
}

void io_latency_hist_reset(latency_hist *h) {
  if (h != NULL) memset(h, 0, sizeof(*h));
}

void io_latency_hist_record(latency_hist *h, uint64_t us) {
  if (h == NULL) return;
  h->buckets[bucket_of(us)]++;
  h->count++;
  h->sum_us += (double)us;
  if (us > h->max_us) h->max_us = us;
}

void io_latency_hist_record_n(latency_hist *h, uint64_t us, uint64_t n) {
  if (h == NULL || n == 0) return;
  h->buckets[bucket_of(us)] += n;
  h->count += n;
  h->sum_us += (double)us * (double)n;
  if (us > h->max_us) h->max_us = us;
}

uint64_t io_latency_hist_bucket_value(int i) {
  return (i < 0 || i >= LATENCY_HIST_BUCKETS) ? 0 : bucket_mid(i);
}

uint64_t io_latency_hist_quantile(const latency_hist *h, double q) {
  if (h == NULL || h->count == 0 || !(q >= 0.0 && q <= 1.0)) return 0;
  uint64_t rank = (uint64_t)ceil(q * (double)h->count);
  if (rank == 0) rank = 1;
  if (rank >= h->count) return h->max_us; /* the top quantile is the exact maximum */
  uint64_t seen = 0;
  for (int i = 0; i < LATENCY_HIST_BUCKETS; i++) {
    seen += h->buckets[i];
    if (seen >= rank) {
      uint64_t mid = bucket_mid(i);
      return mid > h->max_us ? h->max_us : mid;
    }
  }
  return h->max_us;
}

double io_latency_hist_mean(const latency_hist *h) {
  return (h == NULL || h->count == 0) ? 0.0 : h->sum_us / (double)h->count;
}
