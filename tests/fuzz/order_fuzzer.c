/*
 * Fuzz target: address ordering (ap_order_endpoints, ap_order_fingerprint).
 * The input is a list of addresses separated by '\n'. Invariants: either an
 * error (duplicates, empty addresses) or a permutation; the ring order and
 * the fingerprint do not depend on the order the addresses came in.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/ring/ap_order.h"
#include "tests/fuzz/fuzz_input.h"

enum { kMaxAddresses = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char text[1024];
  if (size >= sizeof text) size = sizeof text - 1;
  memcpy(text, data, size);
  text[size] = '\0';
  const char *addresses[kMaxAddresses];
  size_t n = 0;
  char *p = text;
  while (n < kMaxAddresses) {
    addresses[n++] = p;
    char *nl = strchr(p, '\n');
    if (nl == NULL) break;
    *nl = '\0';
    p = nl + 1;
  }
  size_t order[kMaxAddresses], order_rev[kMaxAddresses];
  const char *reversed[kMaxAddresses];
  for (size_t i = 0; i < n; ++i) reversed[i] = addresses[n - 1 - i];
  ap_error err;
  int rc = ap_order_endpoints(addresses, n, order, &err);
  int rc_rev = ap_order_endpoints(reversed, n, order_rev, &err);
  FUZZ_CHECK(rc == rc_rev, "rc %d, reversed %d", rc, rc_rev);
  if (rc != AP_OK) {
    FUZZ_CHECK(rc == AP_EINVAL || rc == AP_ERANGE, "unexpected error %d", rc);
    return 0;
  }
  int seen[kMaxAddresses] = {0};
  for (size_t k = 0; k < n; ++k) {
    FUZZ_CHECK(order[k] < n, "order[%zu] = %zu out of range", k, order[k]);
    FUZZ_CHECK(!seen[order[k]], "position %zu twice", order[k]);
    seen[order[k]] = 1;
    FUZZ_CHECK(strcmp(addresses[order[k]], reversed[order_rev[k]]) == 0,
               "ring order depends on input order at %zu", k);
  }
  FUZZ_CHECK(ap_order_fingerprint(addresses, order, n) ==
                 ap_order_fingerprint(reversed, order_rev, n),
             "fingerprint depends on input order");
  return 0;
}
