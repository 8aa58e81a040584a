/*
 * fuzz_input: reads typed values from a fuzz input, returning zeros once
 * the bytes run out, so that every byte string is a valid program.
 */
#ifndef TESTS_FUZZ_FUZZ_INPUT_H
#define TESTS_FUZZ_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct fuzz_input {
  const uint8_t *data;
  size_t size;
  size_t pos;
} fuzz_input;

static inline uint8_t fuzz_u8(fuzz_input *in) {
  return in->pos < in->size ? in->data[in->pos++] : 0;
}

static inline uint32_t fuzz_u32(fuzz_input *in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | fuzz_u8(in);
  return v;
}

static inline uint64_t fuzz_u64(fuzz_input *in) {
  return ((uint64_t)fuzz_u32(in) << 32) | fuzz_u32(in);
}

static inline int fuzz_done(const fuzz_input *in) { return in->pos >= in->size; }

/* A weight spread over many orders of magnitude: 2^(e/8) x (1 + m/256),
 * e in [-128, 127], so 2^-16 .. 2^16. */
static inline double fuzz_weight(fuzz_input *in) {
  int e = (int)fuzz_u8(in) - 128;
  double w = 1.0 + fuzz_u8(in) / 256.0;
  for (int i = 0; i < (e < 0 ? -e : e) / 8; ++i) w = e < 0 ? w / 2 : w * 2;
  return w;
}

/* Reports a broken invariant and aborts (the fuzzer's crash signal). */
#define FUZZ_CHECK(cond, ...)                                    \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, \
              __LINE__, #cond);                                  \
      fprintf(stderr, __VA_ARGS__);                              \
      fputc('\n', stderr);                                       \
      abort();                                                   \
    }                                                            \
  } while (0)

#endif /* TESTS_FUZZ_FUZZ_INPUT_H */
