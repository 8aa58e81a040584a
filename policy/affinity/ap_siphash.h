/*
 * ap_siphash: SipHash-2-4, a keyed 64-bit hash (a pseudo-random function),
 * written from the specification (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012). Without the 128-bit key, an attacker cannot
 * choose inputs that collide, so tables keyed by untrusted strings (the
 * sticky session table) hash with it instead of ap_hash64, which is
 * unkeyed and invertible.
 */
#ifndef AP_SIPHASH_H
#define AP_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A SipHash key: the two 64-bit words k0, k1 (bytes 0..7 and 8..15 of the
 * 16-byte key read little-endian, as in the specification). */
typedef struct ap_siphash_key {
  uint64_t k0;
  uint64_t k1;
} ap_siphash_key;

/* SipHash-2-4 of `len` bytes at `data` under `key`. `data` may be NULL
 * only when len == 0; NULL with len > 0 hashes like the empty input. */
uint64_t ap_siphash24(const ap_siphash_key *key, const void *data,
                      size_t len);

/* The key made from 16 bytes, little-endian, as the specification reads
 * them. `bytes` must not be NULL (a NULL yields the all-zero key). */
ap_siphash_key ap_siphash_key_from_bytes(const unsigned char bytes[16]);

/* A key drawn once per process from the kernel's random source
 * (getrandom, else /dev/urandom, else a mix of time and addresses), so
 * that no two processes share a key. Thread-safe; the same value for the
 * life of the process. */
ap_siphash_key ap_siphash_process_key(void);

#ifdef __cplusplus
}
#endif

#endif /* AP_SIPHASH_H */
