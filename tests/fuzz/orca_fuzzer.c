/*
 * Fuzz target: the ORCA load report's wire decode (ap_orca_decode). Odd
 * first byte: the rest is decoded as it is; invariants: no read past the
 * end (ASan in the libFuzzer build), a field not marked present reads -1.
 * Even first byte: the rest is a program that writes a well-formed report
 * (the read fields as doubles, the deprecated varint rps, map entries, a
 * later fixed32 and double field) by the protobuf encoding rules; the
 * decode must succeed and give, per read field, the last value written.
 */
#include <stdint.h>
#include <string.h>

#include "policy/core/skew/ap_orca.h"
#include "tests/fuzz/fuzz_input.h"

enum { kMaxMessage = 4096 };

typedef struct writer {
  uint8_t buf[kMaxMessage];
  size_t len;
  int full;
} writer;

static void put_byte(writer *w, uint8_t b) {
  if (w->len < kMaxMessage) w->buf[w->len++] = b;
  else w->full = 1;
}

static void put_varint(writer *w, uint64_t v) {
  while (v >= 0x80) {
    put_byte(w, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  put_byte(w, (uint8_t)v);
}

static void put_fixed(writer *w, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; i++) put_byte(w, (uint8_t)(bits >> (8 * i)));
}

static void put_double(writer *w, uint32_t field, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  put_varint(w, ((uint64_t)field << 3) | 1);
  put_fixed(w, bits, 8);
}

static const uint32_t kRead[5] = {1, 2, 6, 7, 9};

static int same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static double field_of(const ap_orca_report *r, uint32_t field) {
  switch (field) {
    case 1: return r->cpu_utilization;
    case 2: return r->mem_utilization;
    case 6: return r->rps_fractional;
    case 7: return r->eps;
    default: return r->application_utilization;
  }
}

static uint32_t bit_of(uint32_t field) {
  switch (field) {
    case 1: return AP_ORCA_CPU;
    case 2: return AP_ORCA_MEM;
    case 6: return AP_ORCA_RPS;
    case 7: return AP_ORCA_EPS;
    default: return AP_ORCA_APP;
  }
}

static void check_absent(const ap_orca_report *r) {
  for (int i = 0; i < 5; i++) {
    if (!(r->present & bit_of(kRead[i]))) {
      FUZZ_CHECK(field_of(r, kRead[i]) == -1, "absent field %u is %g", kRead[i],
                 field_of(r, kRead[i]));
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  ap_orca_report r;
  if (data[0] & 1) {
    ap_error err;
    int rc = ap_orca_decode(data + 1, size - 1, &r, &err);
    FUZZ_CHECK(rc == AP_OK || rc == AP_EINVAL, "rc %d", rc);
    check_absent(&r);
    return 0;
  }
  fuzz_input in = {data + 1, size - 1, 0};
  static writer w;
  memset(&w, 0, sizeof w);
  double last[5];
  int written[5] = {0};
  while (!fuzz_done(&in) && !w.full) {
    const uint8_t op = fuzz_u8(&in) % 6;
    if (op == 0) { /* a read field */
      const int i = fuzz_u8(&in) % 5;
      const uint64_t bits = fuzz_u64(&in);
      memcpy(&last[i], &bits, sizeof bits);
      written[i] = 1;
      put_double(&w, kRead[i], last[i]);
    } else if (op == 1) { /* the deprecated uint64 rps */
      put_varint(&w, (3 << 3) | 0);
      put_varint(&w, fuzz_u64(&in));
    } else if (op == 2) { /* a map entry {string key = 1; double value = 2} */
      static const uint32_t kMaps[3] = {4, 5, 8};
      const uint32_t field = kMaps[fuzz_u8(&in) % 3];
      const size_t key = fuzz_u8(&in) % 40;
      put_varint(&w, ((uint64_t)field << 3) | 2);
      put_varint(&w, 2 + key + 9);
      put_varint(&w, (1 << 3) | 2);
      put_varint(&w, key);
      for (size_t k = 0; k < key; k++) put_byte(&w, fuzz_u8(&in));
      put_double(&w, 2, (double)fuzz_u32(&in));
    } else if (op == 3) { /* a later fixed32 field */
      put_varint(&w, ((uint64_t)(10 + fuzz_u8(&in)) << 3) | 5);
      put_fixed(&w, fuzz_u32(&in), 4);
    } else if (op == 4) { /* a later double field */
      put_varint(&w, ((uint64_t)(100 + fuzz_u32(&in) % 100000) << 3) | 1);
      put_fixed(&w, fuzz_u64(&in), 8);
    } else { /* a later length-delimited field */
      const size_t n = fuzz_u8(&in) % 16;
      put_varint(&w, ((uint64_t)(20 + fuzz_u8(&in)) << 3) | 2);
      put_varint(&w, n);
      for (size_t k = 0; k < n; k++) put_byte(&w, fuzz_u8(&in));
    }
  }
  if (w.full) return 0; /* a message cut short is not well formed */
  ap_error err;
  FUZZ_CHECK(ap_orca_decode(w.buf, w.len, &r, &err) == AP_OK, "%s", err.message);
  for (int i = 0; i < 5; i++) {
    const uint32_t bit = bit_of(kRead[i]);
    FUZZ_CHECK(((r.present & bit) != 0) == written[i], "field %u present %d, written %d",
               kRead[i], (r.present & bit) != 0, written[i]);
    if (written[i]) {
      FUZZ_CHECK(same(field_of(&r, kRead[i]), last[i]), "field %u: %g, wrote %g", kRead[i],
                 field_of(&r, kRead[i]), last[i]);
    }
  }
  check_absent(&r);
  return 0;
}
