/*
 * ap_order: the endpoint order shared by every client.
 *
 * An address "host:port" (or "[v6]:port") is split at its last ':'; a port
 * that is not 1..5 decimal digits <= 65535 (or a missing one, or a bare IPv6
 * literal with several ':') counts as port 0 and the whole string as host.
 * Sort key: (ap_hash_str(host, 0), port, strcmp of the whole string), so the
 * order depends on the strings alone, never on the input order.
 */
#include "policy/core/ring/ap_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/ap_hash.h"

typedef struct order_key {
  uint64_t host_hash;
  uint32_t port;
  uint32_t position; /* input index (n <= AP_MAX_ENDPOINTS < 2^32) */
} order_key;

/* Parses a decimal port (1 to 5 digits, <= 65535); -1 when invalid. */
static long parse_port(const char *digits) {
  long value = 0;
  size_t len = 0;
  for (; digits[len] != '\0'; ++len) {
    if (digits[len] < '0' || digits[len] > '9' || len >= 5) return -1;
    value = value * 10 + (digits[len] - '0');
  }
  if (len == 0 || value > 65535) return -1;
  return value;
}

static void make_key(const char *address, uint32_t position, order_key *key) {
  /* One pass for the length and the first and last ':'. */
  const char *first_colon = NULL, *colon = NULL;
  size_t len = 0;
  for (; address[len] != '\0'; ++len) {
    if (address[len] == ':') {
      if (first_colon == NULL) first_colon = address + len;
      colon = address + len;
    }
  }
  const char *host = address;
  size_t host_len = len;
  long port = -1;
  if (colon != NULL) {
    const int bracketed =
        address[0] == '[' && colon > address && colon[-1] == ']';
    if (bracketed || first_colon == colon) {
      port = parse_port(colon + 1);
      if (port >= 0) {
        host = bracketed ? address + 1 : address;
        host_len = bracketed ? (size_t)(colon - 1 - host)
                             : (size_t)(colon - address);
      }
    }
  }
  if (port < 0) {
    host = address;
    host_len = len;
    port = 0;
  }
  key->host_hash = ap_hash64(host, host_len, 0);
  key->port = (uint32_t)port;
  key->position = position;
}

/* Strict "x before y"; equal keys compare their whole strings. */
static int key_less(const order_key *x, const order_key *y,
                    const char *const *addresses) {
  if (x->host_hash != y->host_hash) return x->host_hash < y->host_hash;
  if (x->port != y->port) return x->port < y->port;
  return strcmp(addresses[x->position], addresses[y->position]) < 0;
}

/* Bottom-up merge sort with the comparison inlined (a generic qsort's
 * indirect call per comparison costs more than the comparison itself).
 * Sorts keys[0..n) using tmp[0..n); the result ends in keys. */
static void sort_keys(order_key *keys, order_key *tmp, size_t n,
                      const char *const *addresses) {
  /* Runs of 16 by insertion sort first. */
  const size_t run = 16;
  for (size_t lo = 0; lo < n; lo += run) {
    const size_t hi = lo + run < n ? lo + run : n;
    for (size_t i = lo + 1; i < hi; ++i) {
      const order_key k = keys[i];
      size_t j = i;
      while (j > lo && key_less(&k, &keys[j - 1], addresses)) {
        keys[j] = keys[j - 1];
        --j;
      }
      keys[j] = k;
    }
  }
  order_key *src = keys, *dst = tmp;
  for (size_t width = run; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      const size_t mid = lo + width < n ? lo + width : n;
      const size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t a = lo, b = mid, out = lo;
      while (a < mid && b < hi) {
        dst[out++] = key_less(&src[b], &src[a], addresses) ? src[b++] : src[a++];
      }
      while (a < mid) dst[out++] = src[a++];
      while (b < hi) dst[out++] = src[b++];
    }
    order_key *t = src;
    src = dst;
    dst = t;
  }
  if (src != keys) memcpy(keys, src, n * sizeof(order_key));
}

int ap_order_endpoints(const char *const *addresses, size_t n, size_t *order,
                       ap_error *err) {
  if (addresses == NULL) {
    return ap_error_set(err, AP_EINVAL, "addresses must not be NULL");
  }
  if (order == NULL) return ap_error_set(err, AP_EINVAL, "order must not be NULL");
  if (n == 0 || n > AP_MAX_ENDPOINTS) {
    return ap_error_set(err, AP_ERANGE,
                        "n (address count) is %zu, must be in [1, %zu]", n,
                        AP_MAX_ENDPOINTS);
  }
  for (size_t i = 0; i < n; ++i) {
    if (addresses[i] == NULL || addresses[i][0] == '\0') {
      return ap_error_set(err, AP_EINVAL, "addresses[%zu] is %s", i,
                          addresses[i] == NULL ? "NULL" : "empty");
    }
  }
  order_key *keys = malloc(2 * n * sizeof(order_key));
  if (keys == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory ordering %zu addresses",
                        n);
  }
  for (size_t i = 0; i < n; ++i) make_key(addresses[i], (uint32_t)i, &keys[i]);
  sort_keys(keys, keys + n, n, addresses);
  for (size_t k = 1; k < n; ++k) {
    const char *prev = addresses[keys[k - 1].position];
    const char *cur = addresses[keys[k].position];
    if (keys[k - 1].host_hash == keys[k].host_hash && strcmp(prev, cur) == 0) {
      const size_t a = keys[k - 1].position, b = keys[k].position;
      const int rc = ap_error_set(
          err, AP_EINVAL,
          "duplicate address \"%.180s\" (addresses[%zu] and [%zu])", cur,
          a < b ? a : b, a < b ? b : a);
      free(keys);
      return rc;
    }
  }
  for (size_t k = 0; k < n; ++k) order[k] = keys[k].position;
  free(keys);
  return AP_OK;
}

uint64_t ap_order_fingerprint(const char *const *addresses, const size_t *order,
                              size_t n) {
  /* Chain the hash of each address (with its length, so that the split
   * between neighbours matters) through ap_mix64. */
  uint64_t h = ap_mix64(0x61706572747572ull ^ (uint64_t)n); /* "apertur" */
  if (addresses == NULL) return h;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = order != NULL ? order[k] : k;
    const char *a = i < n ? addresses[i] : NULL; /* NULL hashes like "" */
    h = ap_mix64(h ^ ap_hash_str(a, h));
  }
  return h;
}

void ap_fingerprint_format(uint64_t fingerprint, char out[17]) {
  if (out == NULL) return;
  snprintf(out, 17, "%016llx", (unsigned long long)fingerprint);
}
