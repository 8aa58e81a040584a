/*
 * ap_hash: a fast, well-mixed 64-bit hash used for endpoint ordering,
 * fingerprints and consistent hashing. Same value on every platform and
 * every run (no per-process seed), so all clients agree.
 */
#ifndef AP_HASH_H
#define AP_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hash of `len` bytes at `data` with `seed`. `data` may be NULL iff len == 0. */
uint64_t ap_hash64(const void *data, size_t len, uint64_t seed);

/* Hash of a NUL-terminated string (NULL hashes like ""). */
uint64_t ap_hash_str(const char *s, uint64_t seed);

/* Bijective 64-bit finalizer (splitmix64), for mixing integers. */
uint64_t ap_mix64(uint64_t x);

#ifdef __cplusplus
}
#endif

#endif /* AP_HASH_H */
