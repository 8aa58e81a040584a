/*
 * ap_affinity: config defaults and validation, and the hash-mode choice on
 * top of the core's consistent-hash ring.
 */
#define _POSIX_C_SOURCE 200809L

#include "policy/affinity/ap_affinity.h"

#include <string.h>

#include "policy/affinity/ap_session_table.h"
#include "policy/core/ap_hash.h"

/* Seed of the key hash on the ring. Fixed: every client must put a key on
 * the same point. */
#define AP_AFFINITY_KEY_SEED 0u

void ap_affinity_config_init(ap_affinity_config *c) {
  if (c == NULL) return;
  c->mode = AP_AFFINITY_NONE;
  c->header[0] = '\0';
  c->max_sessions = AP_AFFINITY_DEFAULT_MAX_SESSIONS;
  c->session_idle_ms = AP_AFFINITY_DEFAULT_SESSION_IDLE_MS;
  c->hash_vnodes = AP_AFFINITY_DEFAULT_HASH_VNODES;
}

int ap_affinity_config_set_header(ap_affinity_config *c, const char *header,
                                  size_t len, ap_error *err) {
  if (c == NULL || header == NULL)
    return ap_error_set(err, AP_EINVAL, "affinityHeader: config or header is NULL");
  if (len == 0)
    return ap_error_set(err, AP_EINVAL, "affinityHeader: must not be empty");
  if (len > AP_AFFINITY_MAX_HEADER_LEN)
    return ap_error_set(err, AP_ERANGE,
                        "affinityHeader: longer than %u characters",
                        AP_AFFINITY_MAX_HEADER_LEN);
  memcpy(c->header, header, len);
  c->header[len] = '\0';
  return AP_OK;
}

int ap_affinity_mode_parse(const char *name, ap_affinity_mode *out,
                           ap_error *err) {
  if (out == NULL)
    return ap_error_set(err, AP_EINVAL, "affinity: out is NULL");
  if (name == NULL)
    return ap_error_set(err, AP_EINVAL, "affinity: mode name is NULL");
  if (strcmp(name, "none") == 0) {
    *out = AP_AFFINITY_NONE;
  } else if (strcmp(name, "sticky") == 0) {
    *out = AP_AFFINITY_STICKY;
  } else if (strcmp(name, "hash") == 0) {
    *out = AP_AFFINITY_HASH;
  } else {
    return ap_error_set(err, AP_EINVAL,
                        "affinity: unknown mode \"%.64s\" (expected \"none\", "
                        "\"sticky\" or \"hash\")",
                        name);
  }
  return AP_OK;
}

const char *ap_affinity_mode_name(int mode) {
  switch (mode) {
    case AP_AFFINITY_NONE: return "none";
    case AP_AFFINITY_STICKY: return "sticky";
    case AP_AFFINITY_HASH: return "hash";
    default: return "unknown";
  }
}

/* gRPC metadata keys are lower case; pseudo headers (':'), reserved "grpc-"
 * keys and binary "-bin" keys cannot carry a text session key. */
static int check_header(const char *h, ap_error *err) {
  size_t n = strnlen(h, AP_AFFINITY_MAX_HEADER_LEN + 1);
  if (n == 0)
    return ap_error_set(err, AP_EINVAL, "affinityHeader: must not be empty");
  if (n > AP_AFFINITY_MAX_HEADER_LEN)
    return ap_error_set(err, AP_ERANGE,
                        "affinityHeader: longer than %u characters",
                        AP_AFFINITY_MAX_HEADER_LEN);
  for (size_t i = 0; i < n; i++) {
    char ch = h[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
             ch == '-' || ch == '_' || ch == '.';
    if (!ok)
      return ap_error_set(err, AP_EINVAL,
                          "affinityHeader: \"%.64s\" has character '%c' at "
                          "%zu; use lower-case letters, digits, '-', '_' or "
                          "'.'",
                          h, ch >= 0x20 && ch < 0x7f ? ch : '?', i);
  }
  if (strncmp(h, "grpc-", 5) == 0)
    return ap_error_set(err, AP_EINVAL,
                        "affinityHeader: \"%.64s\" is reserved (grpc- prefix)",
                        h);
  if (n >= 4 && strcmp(h + n - 4, "-bin") == 0)
    return ap_error_set(err, AP_EINVAL,
                        "affinityHeader: \"%.64s\" is a binary header (-bin "
                        "suffix); use a text header",
                        h);
  return AP_OK;
}

int ap_affinity_config_validate(const ap_affinity_config *c, ap_error *err) {
  if (c == NULL)
    return ap_error_set(err, AP_EINVAL, "affinity config is NULL");
  if (c->mode != AP_AFFINITY_NONE && c->mode != AP_AFFINITY_STICKY &&
      c->mode != AP_AFFINITY_HASH)
    return ap_error_set(err, AP_EINVAL, "affinity: unknown mode %d",
                        (int)c->mode);
  if (c->header[0] == '\0') {
    if (c->mode != AP_AFFINITY_NONE)
      return ap_error_set(err, AP_EINVAL,
                          "affinityHeader: required when affinity is \"%s\"",
                          ap_affinity_mode_name(c->mode));
  } else {
    int rc = check_header(c->header, err);
    if (rc != AP_OK) return rc;
  }
  if (c->max_sessions < 1 || c->max_sessions > AP_SESSION_MAX_SESSIONS)
    return ap_error_set(err, AP_ERANGE,
                        "maxSessions: %llu not in [1, %zu]",
                        (unsigned long long)c->max_sessions,
                        AP_SESSION_MAX_SESSIONS);
  if (c->hash_vnodes < 1 || c->hash_vnodes > AP_HASH_RING_MAX_VNODES)
    return ap_error_set(err, AP_ERANGE, "hashVnodes: %llu not in [1, %u]",
                        (unsigned long long)c->hash_vnodes,
                        AP_HASH_RING_MAX_VNODES);
  return AP_OK;
}

uint64_t ap_affinity_key_hash(const char *key, size_t key_len) {
  return ap_hash64(key, key == NULL ? 0 : key_len, AP_AFFINITY_KEY_SEED);
}

int ap_affinity_hash_choose(const ap_hash_ring *ring, const char *key,
                            size_t key_len, const uint8_t *usable,
                            size_t *member, ap_error *err) {
  if (ring == NULL)
    return ap_error_set(err, AP_EINVAL, "affinity hash: ring is NULL");
  if (key == NULL && key_len != 0)
    return ap_error_set(err, AP_EINVAL,
                        "affinity hash: key is NULL with length %zu", key_len);
  return ap_hash_ring_lookup_usable(ring, ap_affinity_key_hash(key, key_len),
                                    usable, member, err);
}
