/* Fixed-size latency histogram (microseconds, log-linear buckets with 64
 * sub-buckets per power of two: under 1.6% relative error, values up to
 * about 19 hours). Recording allocates nothing. Not thread-safe. */
#ifndef APERTURE_INTEROP_LATENCY_HIST_H
#define APERTURE_INTEROP_LATENCY_HIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LATENCY_HIST_BUCKETS 2048

typedef struct latency_hist {
  uint64_t buckets[LATENCY_HIST_BUCKETS];
  uint64_t count;
  uint64_t max_us;
  double sum_us;
} latency_hist;

/* Empties `h`. */
void io_latency_hist_reset(latency_hist *h);

/* Records one value (microseconds). NULL h is ignored. */
void io_latency_hist_record(latency_hist *h, uint64_t us);

/* Records `n` values equal to `us` (merging histograms from summaries). */
void io_latency_hist_record_n(latency_hist *h, uint64_t us, uint64_t n);

/* Representative value (midpoint) of bucket i, for writing a histogram out
 * as (value, count) pairs. */
uint64_t io_latency_hist_bucket_value(int i);

/* Value at quantile q in [0, 1] (a bucket midpoint; exact below 128 us);
 * 0 when empty or arguments are invalid. */
uint64_t io_latency_hist_quantile(const latency_hist *h, double q);

/* Mean in microseconds, 0 when empty. */
double io_latency_hist_mean(const latency_hist *h);

#ifdef __cplusplus
}
#endif

#endif
