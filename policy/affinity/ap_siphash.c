/*
 * ap_siphash: SipHash-2-4 from the specification: four 64-bit state words,
 * two SipRounds per 8-byte message word, four after the final word (which
 * carries the length in its top byte).
 */
#define _GNU_SOURCE

#include "policy/affinity/ap_siphash.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "policy/core/ap_hash.h"

static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

static uint64_t load_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

typedef struct sip_state {
  uint64_t v0, v1, v2, v3;
} sip_state;

static void sip_round(sip_state *s) {
  s->v0 += s->v1;
  s->v1 = rotl(s->v1, 13);
  s->v1 ^= s->v0;
  s->v0 = rotl(s->v0, 32);
  s->v2 += s->v3;
  s->v3 = rotl(s->v3, 16);
  s->v3 ^= s->v2;
  s->v0 += s->v3;
  s->v3 = rotl(s->v3, 21);
  s->v3 ^= s->v0;
  s->v2 += s->v1;
  s->v1 = rotl(s->v1, 17);
  s->v1 ^= s->v2;
  s->v2 = rotl(s->v2, 32);
}

/* Two compression rounds per message word: the "2" of SipHash-2-4. */
static void absorb(sip_state *s, uint64_t m) {
  s->v3 ^= m;
  sip_round(s);
  sip_round(s);
  s->v0 ^= m;
}

uint64_t ap_siphash24(const ap_siphash_key *key, const void *data,
                      size_t len) {
  const ap_siphash_key zero = {0, 0};
  if (key == NULL) key = &zero;
  const unsigned char *p = (const unsigned char *)data;
  if (p == NULL) len = 0;
  /* The initialisation constants spell "somepseudorandomlygeneratedbytes". */
  sip_state s = {key->k0 ^ 0x736f6d6570736575ull,
                 key->k1 ^ 0x646f72616e646f6dull,
                 key->k0 ^ 0x6c7967656e657261ull,
                 key->k1 ^ 0x7465646279746573ull};
  size_t remaining = len;
  while (remaining >= 8) {
    absorb(&s, load_le64(p));
    p += 8;
    remaining -= 8;
  }
  uint64_t last = (uint64_t)(len & 0xff) << 56;
  for (size_t i = 0; i < remaining; ++i) last |= (uint64_t)p[i] << (8 * i);
  absorb(&s, last);
  /* Four finalization rounds: the "4". */
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) sip_round(&s);
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

ap_siphash_key ap_siphash_key_from_bytes(const unsigned char bytes[16]) {
  ap_siphash_key k = {0, 0};
  if (bytes == NULL) return k;
  k.k0 = load_le64(bytes);
  k.k1 = load_le64(bytes + 8);
  return k;
}

/* ---- the process key ---------------------------------------------------- */

static ap_siphash_key g_process_key;
static pthread_once_t g_process_key_once = PTHREAD_ONCE_INIT;

/* Fills buf from the kernel; 1 on success. */
static int kernel_random(unsigned char *buf, size_t len) {
#ifdef SYS_getrandom
  size_t got = 0;
  while (got < len) {
    long n = syscall(SYS_getrandom, buf + got, len - got, 0);
    if (n <= 0) break;
    got += (size_t)n;
  }
  if (got == len) return 1;
#endif
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t got2 = 0;
  while (got2 < len) {
    ssize_t n = read(fd, buf + got2, len - got2);
    if (n <= 0) break;
    got2 += (size_t)n;
  }
  close(fd);
  return got2 == len;
}

static void init_process_key(void) {
  unsigned char bytes[16];
  if (kernel_random(bytes, sizeof bytes)) {
    g_process_key = ap_siphash_key_from_bytes(bytes);
    return;
  }
  /* No kernel source: still differ per process and per run. */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t a = ap_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30));
  uint64_t b = ap_mix64((uint64_t)getpid() ^ (uint64_t)(uintptr_t)&ts);
  g_process_key.k0 = a;
  g_process_key.k1 = ap_mix64(a ^ b);
}

ap_siphash_key ap_siphash_process_key(void) {
  pthread_once(&g_process_key_once, init_process_key);
  return g_process_key;
}
