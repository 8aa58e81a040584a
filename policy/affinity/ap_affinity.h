/*
 * ap_affinity: the request-affinity settings of the aperture policy and the
 * member choice of `hash` mode. Pure C, no gRPC.
 *
 * Modes:
 *   none   - every call is balanced by the normal pick (default);
 *   sticky - a call's key is remembered with the endpoint it was first
 *            placed on (ap_session_table.h) and keeps going there while that
 *            endpoint is READY and in the aperture;
 *   hash   - a call's key goes to its owner on a consistent-hash ring with
 *            virtual nodes and weights over the aperture's members
 *            (policy/affinity/ap_hash_ring.h), skipping unhealthy members to the
 *            next point clockwise.
 * Calls without a key are balanced as usual in every mode.
 */
#ifndef AP_AFFINITY_H
#define AP_AFFINITY_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"
#include "policy/affinity/ap_hash_ring.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ap_affinity_mode {
  AP_AFFINITY_NONE = 0,
  AP_AFFINITY_STICKY = 1,
  AP_AFFINITY_HASH = 2
} ap_affinity_mode;

/* Defaults of the optional fields. */
#define AP_AFFINITY_DEFAULT_MAX_SESSIONS 10000u
#define AP_AFFINITY_DEFAULT_SESSION_IDLE_MS 600000u /* 10 minutes */
#define AP_AFFINITY_DEFAULT_HASH_VNODES 100u
/* Bound on the header name (gRPC metadata keys are short in practice). */
#define AP_AFFINITY_MAX_HEADER_LEN 256u

/* Settings as they appear in the service config under "aperture". */
typedef struct ap_affinity_config {
  ap_affinity_mode mode;     /* "affinity" */
  char header[AP_AFFINITY_MAX_HEADER_LEN + 1]; /* "affinityHeader": owned
                               copy (ap_affinity_config_set_header), "" if
                               absent; the struct is self-contained */
  uint64_t max_sessions;     /* "maxSessions" (sticky) */
  uint64_t session_idle_ms;  /* "sessionIdleMs" (sticky); 0 = never expire */
  uint64_t hash_vnodes;      /* "hashVnodes": points per unit weight (hash) */
} ap_affinity_config;

/* Fills *config with the defaults: mode none, no header, the default
 * maxSessions, sessionIdleMs and hashVnodes. NULL is ignored. */
void ap_affinity_config_init(ap_affinity_config *config);

/* Sets "affinityHeader" to the `len` bytes at `header` (not necessarily
 * NUL-terminated). AP_EINVAL / AP_ERANGE, with a message naming the field,
 * when config or header is NULL, the header is empty or longer than
 * AP_AFFINITY_MAX_HEADER_LEN; the header is then left unset. Its form is
 * checked by ap_affinity_config_validate(). */
int ap_affinity_config_set_header(ap_affinity_config *config,
                                  const char *header, size_t len,
                                  ap_error *err);

/* Parses a mode name ("none", "sticky", "hash"). AP_EINVAL with a message
 * naming the field "affinity" otherwise. */
int ap_affinity_mode_parse(const char *name, ap_affinity_mode *out,
                           ap_error *err);

/* Name of a mode ("none", "sticky", "hash"); "unknown" otherwise. */
const char *ap_affinity_mode_name(int mode);

/* Checks a config; the message names the offending field, e.g.
 * "affinityHeader: required when affinity is \"sticky\"". Rules:
 * affinityHeader required unless mode is none, lower case [a-z0-9-_.],
 * not starting with "grpc-" or ':' and not ending in "-bin";
 * maxSessions in [1, AP_SESSION_MAX_SESSIONS]; hashVnodes in
 * [1, AP_HASH_RING_MAX_VNODES]. */
int ap_affinity_config_validate(const ap_affinity_config *config,
                                ap_error *err);

/* Hash of an affinity key (key_len bytes, not necessarily NUL-terminated):
 * the point the key takes on a hash ring. Same value in every process. */
uint64_t ap_affinity_key_hash(const char *key, size_t key_len);

/* Member of `ring` that serves `key`: the owner of the key's point, or the
 * next member clockwise with usable[m] != 0 (usable has
 * ap_hash_ring_members(ring) entries). AP_EUNAVAIL when none is usable.
 * Lock-free and allocation-free. */
int ap_affinity_hash_choose(const ap_hash_ring *ring, const char *key,
                            size_t key_len, const uint8_t *usable,
                            size_t *member, ap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AP_AFFINITY_H */
