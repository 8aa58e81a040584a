/* The interop server's latency tail (--tail-share F --tail-ms N
 * [--tail-seed S]): a share of the TestService calls waits N ms more
 * before its answer, the rest answer as before; a healthy server whose
 * calls are slow now and then, as real servers are (the fleet's `tail`
 * scenario). Which calls: the k-th TestService call the server receives
 * (k = 0, 1, ... in arrival order, counted over all workers) is a tail
 * call when splitmix64(seed + k) / 2^64 < F, so the same seed gives the
 * same pattern of tail calls in every run. Health checks are never
 * delayed. */
#ifndef APERTURE_INTEROP_LATENCY_TAIL_H
#define APERTURE_INTEROP_LATENCY_TAIL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LATENCY_TAIL_MAX_MS 60000L

typedef struct latency_tail latency_tail;

/* A new tail: share in [0, 1], delay_ms in [0, LATENCY_TAIL_MAX_MS]. NULL
 * on a value out of range (message naming the flag on stderr) or out of
 * memory. A share or a delay of 0 means no tail. Free with
 * io_latency_tail_destroy(). */
latency_tail *io_latency_tail_create(double share, long delay_ms, uint64_t seed);
void io_latency_tail_destroy(latency_tail *t);

/* The extra delay of the next TestService call: delay_ms for a tail call,
 * else 0 (0 for a NULL t). Lock-free: one atomic add. */
long io_latency_tail_next_ms(latency_tail *t);

/* The draw for call k alone (no state): 1 when call k of `seed` is a tail
 * call at `share`, for tests and for the fleet's expectations. */
int io_latency_tail_is_tail(uint64_t seed, uint64_t k, double share);

/* Tail calls drawn so far (0 for NULL). */
uint64_t io_latency_tail_count(const latency_tail *t);

#ifdef __cplusplus
}
#endif

#endif
