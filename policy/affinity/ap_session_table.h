/*
 * ap_session_table: a bounded, thread-safe map from a session key to the
 * address of the endpoint that serves it, for sticky request affinity.
 *
 * Bounded: at most `max_sessions` entries. The table is split into shards
 * (by key hash), each with its own small mutex, its own share of the
 * capacity and its own LRU list; a new key in a full shard evicts that
 * shard's least recently used entry, so a flood of unique keys keeps the
 * size at the cap and memory bounded (approximate global LRU, exact per
 * shard). Because each shard has a fixed share, a table far from full may
 * already evict in a shard that received more than its share of keys; size
 * it with some room (keys spread evenly over the shards by hash). Entries unused for `idle_ms` expire: an expired entry is never
 * returned, and the calls through its shard reclaim it (a new key's
 * insert all of the shard's expired entries, a known key's hit up to
 * AP_SESSION_RECLAIM_PER_CALL), as does ap_session_table_expire(). Until
 * then it still counts in ap_session_table_size(), which is what the
 * table holds.
 *
 * Cost: every call that carries a key takes one shard mutex for a hash
 * lookup and a few pointer moves, unlike the lock-free default pick path.
 * With many shards, threads rarely wait on each other. A known key
 * allocates nothing; a new key allocates one block for key and address,
 * except when it reuses the block of the entry it evicts.
 *
 * Hashing: keys are hashed with SipHash-2-4 under a secret key (one per
 * process, drawn from the kernel), so clients that choose session keys
 * cannot aim them at one shard or one bucket. Each bucket chain is also
 * capped at AP_SESSION_MAX_CHAIN entries (a new key in a full chain evicts
 * that chain's least recently used entry), so a lookup compares at most
 * that many keys whatever the hash does.
 *
 * Memory: an entry costs about 56 bytes of header + key + address + 1,
 * plus the allocator's rounding (~16 bytes) and its share of the bucket
 * array (8 to 16 bytes). A full table of AP_SESSION_MAX_SESSIONS entries
 * therefore holds about 140 MiB with 36-byte keys and short addresses, and
 * at most about 1.6 GiB with keys and addresses at their length bounds.
 *
 * Time is passed in by the caller (`now_ms`, a monotonic clock in
 * milliseconds) so the table never reads a clock itself and tests are
 * deterministic.
 *
 * Thread-safety: every function except create/destroy may be called from
 * any number of threads at once. The caller must ensure no call is in
 * progress when it destroys the table.
 */
#ifndef AP_SESSION_TABLE_H
#define AP_SESSION_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"
#include "policy/affinity/ap_siphash.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds that keep the memory of a full table predictable (see Memory
 * above: at most ~1.6 GiB at the cap, ~140 MiB for typical keys). */
#define AP_SESSION_MAX_SESSIONS ((size_t)1 << 20)
#define AP_SESSION_MAX_KEY_LEN ((size_t)1024)
#define AP_SESSION_MAX_ADDRESS_LEN ((size_t)512)
/* Longest bucket chain: a lookup compares at most this many keys. */
#define AP_SESSION_MAX_CHAIN 8u
/* Expired entries a known key's route reclaims in its shard at most. */
#define AP_SESSION_RECLAIM_PER_CALL 2u
/* Shards used when the capacity allows (one mutex each). */
#define AP_SESSION_DEFAULT_SHARDS 16u

typedef struct ap_session_table ap_session_table;

/* Creates an empty table with room for `max_sessions` entries (in
 * [1, AP_SESSION_MAX_SESSIONS]) whose entries expire after `idle_ms`
 * milliseconds without use (0 = never expire). *out owns the table; free it
 * with ap_session_table_destroy(). */
int ap_session_table_create(size_t max_sessions, uint64_t idle_ms,
                            ap_session_table **out, ap_error *err);

/* As ap_session_table_create(), with the hash key given instead of the
 * process's secret one: for reproducible tests and benchmarks. A key known
 * to the clients gives up the protection against chosen collisions. */
int ap_session_table_create_keyed(size_t max_sessions, uint64_t idle_ms,
                                  const ap_siphash_key *key,
                                  ap_session_table **out, ap_error *err);

/* Frees the table and every entry (NULL is ignored). */
void ap_session_table_destroy(ap_session_table *table);

/* Single-step get / put / remove and the inspection counters are for tests
 * (ap_session_table_testing.h). The policy's data path uses
 * ap_session_table_route(), which does the lookup and the insert in one
 * shard lock. */

/* The decision a sticky pick needs, made atomically under the key's shard
 * lock so that concurrent first calls with one key agree on one endpoint.
 * `usable(ctx, address)` returns non-zero when the remembered endpoint may
 * still serve the key. `place(ctx)` chooses a new endpoint and returns its
 * address (NUL-terminated, owned by the caller, valid until route returns),
 * or NULL when none is available. Both run under the shard lock: they must
 * be quick, must not block and must not call back into the table. */
typedef struct ap_session_chooser {
  int (*usable)(void *ctx, const char *address);
  const char *(*place)(void *ctx);
  void *ctx;
} ap_session_chooser;

typedef enum ap_session_outcome {
  AP_SESSION_HIT = 0,     /* the key's remembered endpoint was usable */
  AP_SESSION_PLACED = 1,  /* unknown (or expired) key placed and remembered */
  AP_SESSION_MOVED = 2    /* remembered endpoint unusable; key re-placed */
} ap_session_outcome;

/* Looks `key` up; when its endpoint is usable marks it used at `now_ms` and
 * reports AP_SESSION_HIT, else calls place() and remembers the result.
 * Returns AP_EUNAVAIL (table unchanged for an unknown key, the stale entry
 * removed for a known one) when place() returns NULL, AP_EINVAL or
 * AP_ERANGE when the placed address is empty or too long. *outcome may be NULL. The endpoint
 * the caller should use is the one its callbacks last accepted or returned.
 */
int ap_session_table_route(ap_session_table *table, const char *key,
                           size_t key_len, uint64_t now_ms,
                           const ap_session_chooser *chooser,
                           ap_session_outcome *outcome, ap_error *err);

/* Removes every entry idle for longer than idle_ms at `now_ms`; *expired (may
 * be NULL) receives how many. No-op when idle_ms is 0. Cost: one lock per
 * shard plus the expired entries (each shard's LRU tail is its oldest). */
int ap_session_table_expire(ap_session_table *table, uint64_t now_ms,
                            size_t *expired, ap_error *err);

/* Number of entries held now (including expired ones not yet reclaimed).
 * Lock-free read of a counter, so that the status service can report it
 * without taking a shard lock; 0 for NULL. */
size_t ap_session_table_size(const ap_session_table *table);

#ifdef __cplusplus
}
#endif

#endif /* AP_SESSION_TABLE_H */
