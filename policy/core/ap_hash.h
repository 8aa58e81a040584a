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

/* Hash of `len` bytes at `data` with `seed`. `data` may be NULL iff len == 0
 * (NULL hashes as no bytes, with the given len in the first and last step).
 *
 * The algorithm (a custom one: no published test vectors exist; tests pin
 * its values), all arithmetic mod 2^64, rotl = rotate left,
 * K1 = 0x9E3779B97F4A7C15, K2 = 0xC2B2AE3D27D4EB4F, K3 = 0x165667B19E3779F9:
 *   h = (seed + K3) xor (len * K1);
 *   for each whole 8-byte block b, read little-endian:      h = absorb(h, b);
 *   if 1..7 bytes t_0..t_{r-1} remain: h = absorb(h, sum t_j << 8j);
 *   result = ap_mix64(h xor len);
 * where absorb(h, w) = rotl(h xor (rotl(w * K2, 31) * K1), 27) * K3 + K2. */
uint64_t ap_hash64(const void *data, size_t len, uint64_t seed);

/* Hash of a NUL-terminated string (NULL hashes like ""). */
uint64_t ap_hash_str(const char *s, uint64_t seed);

/* Bijective 64-bit finalizer of splitmix64, for mixing integers:
 *   x = (x xor (x >> 30)) * 0xBF58476D1CE4E5B9;
 *   x = (x xor (x >> 27)) * 0x94D049BB133111EB;
 *   return x xor (x >> 31);
 * so output k (k = 1, 2, ...) of the splitmix64 generator seeded with s is
 * ap_mix64(s + k * 0x9E3779B97F4A7C15). */
uint64_t ap_mix64(uint64_t x);

#ifdef __cplusplus
}
#endif

#endif /* AP_HASH_H */
