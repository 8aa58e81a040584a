/*
 * ap_hash: a small 64-bit hash. Bytes are read explicitly as little-endian
 * words so that every platform computes the same value; the splitmix64
 * finalizer gives the final avalanche.
 */
#include "policy/core/ap_hash.h"

#define AP_K1 0x9E3779B97F4A7C15ull
#define AP_K2 0xC2B2AE3D27D4EB4Full
#define AP_K3 0x165667B19E3779F9ull

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t read_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/* Mixes one 64-bit word into the running state. */
static uint64_t absorb(uint64_t h, uint64_t word) {
  word *= AP_K2;
  word = rotl64(word, 31) * AP_K1;
  h ^= word;
  return rotl64(h, 27) * AP_K3 + AP_K2;
}

uint64_t ap_mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t ap_hash64(const void *data, size_t len, uint64_t seed) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = (seed + AP_K3) ^ ((uint64_t)len * AP_K1);
  if (p == NULL) len = 0;
  size_t remaining = len;
  while (remaining >= 8) {
    h = absorb(h, read_le64(p));
    p += 8;
    remaining -= 8;
  }
  if (remaining > 0) {
    uint64_t tail = 0;
    for (size_t i = remaining; i > 0; --i) tail = (tail << 8) | p[i - 1];
    /* The length is already in h, so "a" and "a\0" still differ. */
    h = absorb(h, tail);
  }
  return ap_mix64(h ^ (uint64_t)len);
}

uint64_t ap_hash_str(const char *s, uint64_t seed) {
  if (s == NULL) return ap_hash64(NULL, 0, seed);
  size_t len = 0;
  while (s[len] != '\0') ++len;
  return ap_hash64(s, len, seed);
}
