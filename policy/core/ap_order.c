/*
 * ap_order: the endpoint order shared by every client.
 *
 * An address "host:port" (or "[v6]:port") is split at its last ':'; a port
 * that is not 1..5 decimal digits <= 65535 (or a missing one, or a bare IPv6
 * literal with several ':') counts as port 0 and the whole string as host.
 * Sort key: (ap_hash_str(host, 0), port, strcmp of the whole string), so the
 * order depends on the strings alone, never on the input order.
 */
#include "policy/core/ap_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/ap_hash.h"

typedef struct order_key {
  uint64_t host_hash;
  uint32_t port;
  const char *address;
  size_t position;
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

static void make_key(const char *address, size_t position, order_key *key) {
  const size_t len = strlen(address);
  const char *colon = strrchr(address, ':');
  const char *host = address;
  size_t host_len = len;
  long port = -1;
  if (colon != NULL) {
    const int bracketed = address[0] == '[' && colon > address &&
                          colon[-1] == ']';
    const int single_colon = strchr(address, ':') == colon;
    if (bracketed || single_colon) {
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
  key->address = address;
  key->position = position;
}

static int compare_keys(const void *a, const void *b) {
  const order_key *x = (const order_key *)a, *y = (const order_key *)b;
  if (x->host_hash != y->host_hash) return x->host_hash < y->host_hash ? -1 : 1;
  if (x->port != y->port) return x->port < y->port ? -1 : 1;
  return strcmp(x->address, y->address);
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
  order_key *keys = malloc(n * sizeof(order_key));
  if (keys == NULL) {
    return ap_error_set(err, AP_ENOMEM, "out of memory ordering %zu addresses",
                        n);
  }
  for (size_t i = 0; i < n; ++i) make_key(addresses[i], i, &keys[i]);
  qsort(keys, n, sizeof(order_key), compare_keys);
  for (size_t k = 1; k < n; ++k) {
    if (strcmp(keys[k - 1].address, keys[k].address) == 0) {
      const int rc = ap_error_set(
          err, AP_EINVAL, "duplicate address \"%.180s\" (addresses[%zu] and [%zu])",
          keys[k].address,
          keys[k - 1].position < keys[k].position ? keys[k - 1].position
                                                  : keys[k].position,
          keys[k - 1].position < keys[k].position ? keys[k].position
                                                  : keys[k - 1].position);
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
