/*
 * ap_session_table_testing: what tests read and drive of the session table
 * directly (the picker goes through ap_affinity). Only tests include this
 * header; no product code calls these.
 */
#ifndef AP_SESSION_TABLE_TESTING_H
#define AP_SESSION_TABLE_TESTING_H

#include "policy/affinity/ap_session_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copies the address of `key` (key_len bytes, 1..AP_SESSION_MAX_KEY_LEN, not
 * necessarily NUL-terminated) into `address` (capacity `cap` bytes, written
 * NUL-terminated) and marks the entry used at `now_ms`. *found is 1 when a
 * live entry exists, 0 when the key is unknown or expired (an expired entry
 * is removed). AP_ERANGE when `cap` is too small for the stored address. */
int ap_session_table_get(ap_session_table *table, const char *key,
                         size_t key_len, uint64_t now_ms, char *address,
                         size_t cap, int *found, ap_error *err);

/* Maps `key` to `address` (NUL-terminated, 1..AP_SESSION_MAX_ADDRESS_LEN
 * bytes) used at `now_ms`, replacing any previous address. Evicts the
 * shard's least recently used entry when the shard is full. */
int ap_session_table_put(ap_session_table *table, const char *key,
                         size_t key_len, const char *address, uint64_t now_ms,
                         ap_error *err);

/* Removes `key`; *removed (may be NULL) says whether it was present. */
int ap_session_table_remove(ap_session_table *table, const char *key,
                            size_t key_len, int *removed, ap_error *err);

/* The configured capacity; 0 for NULL. */
size_t ap_session_table_capacity(const ap_session_table *table);

/* Number of entries evicted to make room since creation; 0 for NULL. */
uint64_t ap_session_table_evictions(const ap_session_table *table);

/* Length of the longest bucket chain now (never above
 * AP_SESSION_MAX_CHAIN); 0 for NULL. A diagnostic: takes every shard lock
 * in turn and walks every bucket. */
size_t ap_session_table_longest_chain(ap_session_table *table);

#ifdef __cplusplus
}
#endif

#endif /* AP_SESSION_TABLE_TESTING_H */
