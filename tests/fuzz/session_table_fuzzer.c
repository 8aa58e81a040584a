/*
 * Fuzz target: session table operation sequences (ap_session_table). The
 * input is a program of put / get / remove / route / expire over a small
 * key pool and a small table. Invariants: size within the capacity, bucket
 * chains within AP_SESSION_MAX_CHAIN, a get returns nothing or the address
 * last stored for that key, route's outcome agrees with what get saw.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policy/affinity/ap_session_table.h"
#include "policy/affinity/ap_session_table_testing.h"
#include "tests/fuzz/fuzz_input.h"

enum { kKeys = 40 };

typedef struct place_ctx {
  int usable_parity; /* addresses ending in this digit parity are usable */
  int refuse;        /* place() returns NULL */
  char address[32];
  uint32_t counter;
} place_ctx;

static int usable(void *ctx, const char *address) {
  const place_ctx *c = ctx;
  size_t len = strlen(address);
  return len > 0 && (address[len - 1] - '0') % 2 == c->usable_parity;
}

static const char *place(void *ctx) {
  place_ctx *c = ctx;
  if (c->refuse) return NULL;
  snprintf(c->address, sizeof c->address, "10.0.0.%u:8%d", c->counter++ % 200,
           c->usable_parity);
  return c->address;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size, 0};
  const size_t capacity = 1 + fuzz_u8(&in) % 64;
  const uint64_t idle_ms = fuzz_u8(&in) % 3 * 100;
  const ap_siphash_key key = {fuzz_u64(&in), fuzz_u64(&in)};
  ap_session_table *t = NULL;
  FUZZ_CHECK(ap_session_table_create_keyed(capacity, idle_ms, &key, &t, NULL) == AP_OK,
             "create");
  char last[kKeys][32]; /* what this program last stored per key */
  memset(last, 0, sizeof last);
  uint64_t now = 0;
  place_ctx ctx = {0, 0, {0}, 0};
  for (int step = 0; step < 200 && !fuzz_done(&in); ++step) {
    const uint8_t op = fuzz_u8(&in);
    const size_t k = fuzz_u8(&in) % kKeys;
    char keybuf[16];
    int keylen = snprintf(keybuf, sizeof keybuf, "key-%zu", k);
    now += op >> 5;
    switch (op % 5) {
      case 0: {
        char address[32];
        snprintf(address, sizeof address, "10.1.0.%u:80", (unsigned)(op % 97));
        FUZZ_CHECK(ap_session_table_put(t, keybuf, (size_t)keylen, address, now, NULL) == AP_OK,
                   "put");
        strcpy(last[k], address);
        break;
      }
      case 1: {
        char address[AP_SESSION_MAX_ADDRESS_LEN + 1];
        int found = -1;
        FUZZ_CHECK(ap_session_table_get(t, keybuf, (size_t)keylen, now, address,
                                        sizeof address, &found, NULL) == AP_OK,
                   "get");
        if (found) FUZZ_CHECK(strcmp(address, last[k]) == 0, "key %zu: %s, stored %s", k,
                              address, last[k]);
        break;
      }
      case 2:
        FUZZ_CHECK(ap_session_table_remove(t, keybuf, (size_t)keylen, NULL, NULL) == AP_OK,
                   "remove");
        last[k][0] = '\0';
        break;
      case 3: {
        ctx.usable_parity = op & 1;
        ctx.refuse = (op & 0x40) != 0;
        ap_session_outcome outcome;
        int rc = ap_session_table_route(t, keybuf, (size_t)keylen, now,
                                        &(ap_session_chooser){usable, place, &ctx}, &outcome,
                                        NULL);
        FUZZ_CHECK(rc == AP_OK || (rc == AP_EUNAVAIL && ctx.refuse), "route rc %d", rc);
        if (rc == AP_OK && outcome != AP_SESSION_HIT) strcpy(last[k], ctx.address);
        if (rc != AP_OK) last[k][0] = '\0';
        break;
      }
      default:
        FUZZ_CHECK(ap_session_table_expire(t, now, NULL, NULL) == AP_OK, "expire");
    }
    FUZZ_CHECK(ap_session_table_size(t) <= capacity, "size %zu > %zu",
               ap_session_table_size(t), capacity);
  }
  FUZZ_CHECK(ap_session_table_longest_chain(t) <= AP_SESSION_MAX_CHAIN, "chain");
  ap_session_table_destroy(t);
  return 0;
}
