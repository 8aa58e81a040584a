/*
 * Runs the fuzz target without libFuzzer (any compiler): valid seed
 * requests, then a fixed-seed series of mutations of them (bit flips,
 * truncations, random bytes, inserted varints). Bounded: kMutations inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "aperture/v1/status.pb-c.h"
#include "grpc/health/v1/health.pb-c.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { kMutations = 8000, kMaxInput = 256 };

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

typedef struct seed { uint8_t bytes[kMaxInput]; size_t len; } seed;

static size_t make_ring_seed(uint8_t *out, const char *filter, uint32_t max, uint32_t start,
                             int omit) {
  Aperture__V1__GetRingStateRequest r = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  r.target_filter = (char *)filter;
  r.max_endpoints = max;
  r.start_index = start;
  r.omit_endpoints = omit;
  out[0] = 0;
  return 1 + aperture__v1__get_ring_state_request__pack(&r, out + 1);
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  seed seeds[6];
  seeds[0].len = make_ring_seed(seeds[0].bytes, "", 0, 0, 0);
  seeds[1].len = make_ring_seed(seeds[1].bytes, "fuzz-ring", 20000, 0, 0);
  seeds[2].len = make_ring_seed(seeds[2].bytes, "1500", 7, 1490, 0);
  seeds[3].len = make_ring_seed(seeds[3].bytes, "x", 0, 4000000000u, 1);
  Grpc__Health__V1__HealthCheckRequest h = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  h.service = (char *)"aperture.v1.ApertureStatus";
  seeds[4].bytes[0] = 1;
  seeds[4].len = 1 + grpc__health__v1__health_check_request__pack(&h, seeds[4].bytes + 1);
  h.service = (char *)"other";
  seeds[5].bytes[0] = 1;
  seeds[5].len = 1 + grpc__health__v1__health_check_request__pack(&h, seeds[5].bytes + 1);
  size_t nseeds = sizeof seeds / sizeof seeds[0];
  for (size_t i = 0; i < nseeds; i++) LLVMFuzzerTestOneInput(seeds[i].bytes, seeds[i].len);

  uint8_t buf[kMaxInput];
  for (int m = 0; m < kMutations; m++) {
    const seed *s = &seeds[next_rand() % nseeds];
    size_t len = s->len;
    memcpy(buf, s->bytes, len);
    switch (next_rand() % 4) {
      case 0: /* flip bits */
        for (int k = 0; k < 3; k++) buf[1 + next_rand() % (len - 1 > 0 ? len - 1 : 1)] ^=
            (uint8_t)(1u << (next_rand() % 8));
        break;
      case 1: /* truncate */
        len = 1 + next_rand() % len;
        break;
      case 2: /* random tail */
        len = 1 + next_rand() % (kMaxInput - 1);
        for (size_t k = 1; k < len; k++) buf[k] = (uint8_t)next_rand();
        break;
      default: /* append a field with a random tag and a long varint */
        if (len + 11 < kMaxInput) {
          buf[len++] = (uint8_t)next_rand();
          for (int k = 0; k < 9; k++) buf[len++] = 0x80 | (uint8_t)next_rand();
          buf[len++] = 0x01;
        }
        break;
    }
    LLVMFuzzerTestOneInput(buf, len);
  }
  printf("ran %zu seeds and %d mutated inputs\n", nseeds, kMutations);
  return 0;
}
