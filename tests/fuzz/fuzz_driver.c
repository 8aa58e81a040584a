/*
 * A deterministic driver for the fuzz targets of this directory, so that
 * each runs as an ordinary `bazel test` under any compiler: a fixed-seed
 * series of random inputs, each also mutated a few times (bit flips,
 * truncation, byte insertion). Bounded by an input count; FUZZ_INPUTS in
 * the environment changes it (e.g. for a longer run by hand). The same
 * targets link against libFuzzer for open-ended runs (see BUILD).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { kDefaultInputs = 3000, kMaxInput = 512, kMutationsPerInput = 3 };

static uint64_t g_state = 0x2545F4914F6CDD1Dull;

static uint64_t next_rand(void) {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 7;
  g_state ^= g_state << 17;
  return g_state;
}

static size_t input_count(void) {
  const char *env = getenv("FUZZ_INPUTS");
  if (env == NULL || *env == '\0') return kDefaultInputs;
  char *end = NULL;
  unsigned long long v = strtoull(env, &end, 10);
  if (end == NULL || *end != '\0' || v == 0 || v > 100000000ull) return kDefaultInputs;
  return (size_t)v;
}

static void mutate(uint8_t *buf, size_t *len) {
  switch (next_rand() % 4) {
    case 0: /* flip a bit */
      if (*len > 0) buf[next_rand() % *len] ^= (uint8_t)(1u << (next_rand() % 8));
      break;
    case 1: /* truncate */
      if (*len > 0) *len = next_rand() % *len;
      break;
    case 2: /* insert a byte */
      if (*len < kMaxInput) {
        size_t at = *len == 0 ? 0 : next_rand() % (*len + 1);
        memmove(buf + at + 1, buf + at, *len - at);
        buf[at] = (uint8_t)next_rand();
        (*len)++;
      }
      break;
    default: /* an extreme byte */
      if (*len > 0) buf[next_rand() % *len] = (next_rand() & 1) ? 0xFF : 0x00;
  }
}

int main(void) {
  const size_t inputs = input_count();
  uint8_t buf[kMaxInput];
  for (size_t i = 0; i < inputs; ++i) {
    /* Mostly short inputs, sometimes long ones. */
    size_t len = (next_rand() % 8 == 0) ? next_rand() % kMaxInput : next_rand() % 64;
    for (size_t k = 0; k < len; ++k) buf[k] = (uint8_t)next_rand();
    LLVMFuzzerTestOneInput(buf, len);
    for (int m = 0; m < kMutationsPerInput; ++m) {
      mutate(buf, &len);
      LLVMFuzzerTestOneInput(buf, len);
    }
  }
  printf("%zu inputs, %d mutations each: no invariant broken\n", inputs, kMutationsPerInput);
  return 0;
}
