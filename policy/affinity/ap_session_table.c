/*
 * ap_session_table: shards of (chained hash table + LRU list), each behind
 * one mutex. An entry is a single block holding its key and address; the
 * block of an evicted or replaced entry is reused when it is big enough, so
 * a full table under a flood of new keys stops allocating.
 */
#define _POSIX_C_SOURCE 200809L

#include "policy/affinity/ap_session_table.h"
#include "policy/affinity/ap_session_table_testing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "policy/affinity/ap_siphash.h"

typedef struct ap_session_entry {
  struct ap_session_entry *chain_next; /* bucket chain */
  struct ap_session_entry *newer;      /* LRU list, towards the head */
  struct ap_session_entry *older;      /* LRU list, towards the tail */
  uint64_t hash;
  uint64_t last_used_ms;
  uint32_t key_len;
  uint32_t address_len;
  uint32_t storage; /* bytes available in data[] */
  char data[];      /* key bytes, then the address and its NUL */
} ap_session_entry;

/* One lock and its share of the table. Aligned to a cache line so threads
 * working on different shards do not contend on the same line. */
typedef struct ap_session_shard {
  _Alignas(64) pthread_mutex_t mu;
  ap_session_entry **buckets;
  size_t bucket_mask;
  ap_session_entry *newest; /* LRU head */
  ap_session_entry *oldest; /* LRU tail: evicted first */
  size_t count;
  size_t capacity;
} ap_session_shard;

struct ap_session_table {
  ap_siphash_key key; /* secret: keys cannot be chosen to collide */
  size_t capacity;
  uint64_t idle_ms;
  unsigned shard_bits;
  size_t nshards;
  ap_session_shard *shards;
  _Atomic size_t size;
  _Atomic uint64_t evictions;
};

/* ---- small helpers ---------------------------------------------------- */

static size_t next_pow2(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

static int check_key(const char *key, size_t key_len, const char *what,
                     ap_error *err) {
  if (key == NULL)
    return ap_error_set(err, AP_EINVAL, "%s: key is NULL", what);
  if (key_len == 0)
    return ap_error_set(err, AP_EINVAL, "%s: key is empty", what);
  if (key_len > AP_SESSION_MAX_KEY_LEN)
    return ap_error_set(err, AP_ERANGE,
                        "%s: key of %zu bytes exceeds the bound of %zu", what,
                        key_len, AP_SESSION_MAX_KEY_LEN);
  return AP_OK;
}

/* Length of a valid address, or a negative status. */
static int check_address(const char *address, size_t *len, const char *what,
                         ap_error *err) {
  if (address == NULL)
    return ap_error_set(err, AP_EINVAL, "%s: address is NULL", what);
  size_t n = strnlen(address, AP_SESSION_MAX_ADDRESS_LEN + 1);
  if (n == 0)
    return ap_error_set(err, AP_EINVAL, "%s: address is empty", what);
  if (n > AP_SESSION_MAX_ADDRESS_LEN)
    return ap_error_set(err, AP_ERANGE,
                        "%s: address longer than the bound of %zu bytes", what,
                        AP_SESSION_MAX_ADDRESS_LEN);
  *len = n;
  return AP_OK;
}

static uint64_t key_hash(const ap_session_table *t, const char *key,
                         size_t key_len) {
  return ap_siphash24(&t->key, key, key_len);
}

static ap_session_shard *shard_of(ap_session_table *t, uint64_t hash) {
  /* Top bits pick the shard, low bits the bucket: independent parts. */
  size_t i = t->shard_bits ? (size_t)(hash >> (64 - t->shard_bits)) : 0;
  return &t->shards[i];
}

static const char *entry_address(const ap_session_entry *e) {
  return e->data + e->key_len;
}

static int is_expired(const ap_session_table *t, const ap_session_entry *e,
                      uint64_t now_ms) {
  return t->idle_ms != 0 && now_ms > e->last_used_ms &&
         now_ms - e->last_used_ms > t->idle_ms;
}

/* ---- shard internals (caller holds shard->mu) ------------------------- */

static ap_session_entry *find(const ap_session_shard *s, uint64_t hash,
                              const char *key, size_t key_len) {
  for (ap_session_entry *e = s->buckets[hash & s->bucket_mask]; e != NULL;
       e = e->chain_next) {
    if (e->hash == hash && e->key_len == key_len &&
        memcmp(e->data, key, key_len) == 0)
      return e;
  }
  return NULL;
}

static void lru_unlink(ap_session_shard *s, ap_session_entry *e) {
  if (e->newer) e->newer->older = e->older; else s->newest = e->older;
  if (e->older) e->older->newer = e->newer; else s->oldest = e->newer;
  e->newer = e->older = NULL;
}

static void lru_push_newest(ap_session_shard *s, ap_session_entry *e) {
  e->newer = NULL;
  e->older = s->newest;
  if (s->newest) s->newest->newer = e; else s->oldest = e;
  s->newest = e;
}

/* Takes `e` out of its bucket chain and the LRU list; the caller owns the
 * block afterwards. */
static void detach(ap_session_table *t, ap_session_shard *s,
                   ap_session_entry *e) {
  ap_session_entry **link = &s->buckets[e->hash & s->bucket_mask];
  while (*link != e) link = &(*link)->chain_next;
  *link = e->chain_next;
  e->chain_next = NULL;
  lru_unlink(s, e);
  s->count--;
  atomic_fetch_sub_explicit(&t->size, 1, memory_order_relaxed);
}

/* The live entry for the key, or NULL; an expired one is dropped on the
 * way. Call with the shard's lock held. */
static ap_session_entry *find_live(ap_session_table *t, ap_session_shard *s,
                                   uint64_t hash, const char *key,
                                   size_t key_len, uint64_t now_ms) {
  ap_session_entry *e = find(s, hash, key, key_len);
  if (e != NULL && is_expired(t, e, now_ms)) {
    detach(t, s, e);
    free(e);
    e = NULL;
  }
  return e;
}

/* Drops up to `most` expired entries at the old end of the LRU list. */
static void reclaim_expired_upto(ap_session_table *t, ap_session_shard *s,
                                 uint64_t now_ms, size_t most,
                                 size_t *reclaimed) {
  for (size_t n = 0; n < most && s->oldest != NULL &&
                     is_expired(t, s->oldest, now_ms);
       n++) {
    ap_session_entry *e = s->oldest;
    detach(t, s, e);
    free(e);
    if (reclaimed) (*reclaimed)++;
  }
}

/* Drops the expired entries at the old end of the LRU list. */
static void reclaim_expired(ap_session_table *t, ap_session_shard *s,
                            uint64_t now_ms, size_t *reclaimed) {
  while (s->oldest != NULL && is_expired(t, s->oldest, now_ms)) {
    ap_session_entry *e = s->oldest;
    detach(t, s, e);
    free(e);
    if (reclaimed) (*reclaimed)++;
  }
}

/* The least recently used entry of the bucket of `hash` when that bucket
 * already holds AP_SESSION_MAX_CHAIN entries, else NULL. */
static ap_session_entry *full_chain_victim(const ap_session_shard *s,
                                           uint64_t hash) {
  ap_session_entry *victim = NULL;
  size_t length = 0;
  for (ap_session_entry *e = s->buckets[hash & s->bucket_mask]; e != NULL;
       e = e->chain_next) {
    length++;
    if (victim == NULL || e->last_used_ms <= victim->last_used_ms) victim = e;
  }
  return length >= AP_SESSION_MAX_CHAIN ? victim : NULL;
}

/* Inserts a new entry for (key, address) as the newest one. `spare` is a
 * detached block (or NULL) to reuse or free. Evicts the oldest entry of the
 * key's bucket when that chain is at its bound, else the shard's oldest
 * entry when the shard is full. Returns AP_OK or AP_ENOMEM (then nothing is
 * inserted and the spare is freed). */
static int insert(ap_session_table *t, ap_session_shard *s, uint64_t hash,
                  const char *key, size_t key_len, const char *address,
                  size_t address_len, uint64_t now_ms, ap_session_entry *spare,
                  ap_error *err) {
  reclaim_expired(t, s, now_ms, NULL);
  ap_session_entry *victim = full_chain_victim(s, hash);
  if (victim == NULL && s->count >= s->capacity) victim = s->oldest;
  if (victim != NULL) {
    detach(t, s, victim);
    atomic_fetch_add_explicit(&t->evictions, 1, memory_order_relaxed);
    if (spare == NULL || victim->storage > spare->storage) {
      free(spare);
      spare = victim;
    } else {
      free(victim);
    }
  }
  size_t need = key_len + address_len + 1;
  ap_session_entry *e = spare;
  if (e == NULL || e->storage < need) {
    free(e);
    e = malloc(sizeof *e + need);
    if (e == NULL)
      return ap_error_set(err, AP_ENOMEM,
                          "session table: out of memory for an entry");
    e->storage = (uint32_t)need;
  }
  e->hash = hash;
  e->last_used_ms = now_ms;
  e->key_len = (uint32_t)key_len;
  e->address_len = (uint32_t)address_len;
  memcpy(e->data, key, key_len);
  memcpy(e->data + key_len, address, address_len + 1);
  ap_session_entry **bucket = &s->buckets[hash & s->bucket_mask];
  e->chain_next = *bucket;
  *bucket = e;
  lru_push_newest(s, e);
  s->count++;
  atomic_fetch_add_explicit(&t->size, 1, memory_order_relaxed);
  return AP_OK;
}

/* ---- public API ------------------------------------------------------- */

int ap_session_table_create(size_t max_sessions, uint64_t idle_ms,
                            ap_session_table **out, ap_error *err) {
  const ap_siphash_key key = ap_siphash_process_key();
  return ap_session_table_create_keyed(max_sessions, idle_ms, &key, out, err);
}

int ap_session_table_create_keyed(size_t max_sessions, uint64_t idle_ms,
                                  const ap_siphash_key *key,
                                  ap_session_table **out, ap_error *err) {
  if (key == NULL)
    return ap_error_set(err, AP_EINVAL, "session table: key is NULL");
  if (out == NULL)
    return ap_error_set(err, AP_EINVAL, "session table: out is NULL");
  if (max_sessions < 1 || max_sessions > AP_SESSION_MAX_SESSIONS)
    return ap_error_set(err, AP_ERANGE,
                        "session table: max_sessions %zu not in [1, %zu]",
                        max_sessions, AP_SESSION_MAX_SESSIONS);
  ap_session_table *t = calloc(1, sizeof *t);
  if (t == NULL)
    return ap_error_set(err, AP_ENOMEM, "session table: out of memory");
  /* As many shards as the default allows with at least one slot each; a
   * power of two so the top bits of the hash select one. */
  unsigned bits = 0;
  while ((1u << (bits + 1)) <= AP_SESSION_DEFAULT_SHARDS &&
         ((size_t)1 << (bits + 1)) <= max_sessions)
    bits++;
  t->key = *key;
  t->capacity = max_sessions;
  t->idle_ms = idle_ms;
  t->shard_bits = bits;
  t->nshards = (size_t)1 << bits;
  atomic_init(&t->size, 0);
  atomic_init(&t->evictions, 0);
  t->shards = aligned_alloc(64, t->nshards * sizeof *t->shards);
  if (t->shards == NULL) {
    free(t);
    return ap_error_set(err, AP_ENOMEM, "session table: out of memory");
  }
  memset(t->shards, 0, t->nshards * sizeof *t->shards);
  size_t created = 0;
  int rc = AP_OK;
  for (size_t i = 0; i < t->nshards; i++) {
    ap_session_shard *s = &t->shards[i];
    /* Shares differ by at most one so they sum to exactly max_sessions. */
    s->capacity = max_sessions / t->nshards + (i < max_sessions % t->nshards);
    size_t nb = next_pow2(s->capacity);
    s->bucket_mask = nb - 1;
    s->buckets = calloc(nb, sizeof *s->buckets);
    if (s->buckets == NULL) {
      rc = ap_error_set(err, AP_ENOMEM,
                        "session table: out of memory for %zu buckets", nb);
      break;
    }
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
      free(s->buckets);
      s->buckets = NULL;
      rc = ap_error_set(err, AP_EINTERNAL,
                        "session table: pthread_mutex_init failed");
      break;
    }
    created++;
  }
  if (rc != AP_OK) {
    for (size_t i = 0; i < created; i++) {
      pthread_mutex_destroy(&t->shards[i].mu);
      free(t->shards[i].buckets);
    }
    free(t->shards);
    free(t);
    return rc;
  }
  *out = t;
  return AP_OK;
}

void ap_session_table_destroy(ap_session_table *t) {
  if (t == NULL) return;
  for (size_t i = 0; i < t->nshards; i++) {
    ap_session_shard *s = &t->shards[i];
    ap_session_entry *e = s->newest;
    while (e != NULL) {
      ap_session_entry *next = e->older;
      free(e);
      e = next;
    }
    free(s->buckets);
    pthread_mutex_destroy(&s->mu);
  }
  free(t->shards);
  free(t);
}

int ap_session_table_get(ap_session_table *t, const char *key, size_t key_len,
                         uint64_t now_ms, char *address, size_t cap,
                         int *found, ap_error *err) {
  static const char what[] = "session table get";
  if (t == NULL) return ap_error_set(err, AP_EINVAL, "%s: table is NULL", what);
  int rc = check_key(key, key_len, what, err);
  if (rc != AP_OK) return rc;
  if (address == NULL)
    return ap_error_set(err, AP_EINVAL, "%s: address buffer is NULL", what);
  if (found == NULL)
    return ap_error_set(err, AP_EINVAL, "%s: found is NULL", what);
  *found = 0;
  uint64_t hash = key_hash(t, key, key_len);
  ap_session_shard *s = shard_of(t, hash);
  pthread_mutex_lock(&s->mu);
  ap_session_entry *e = find_live(t, s, hash, key, key_len, now_ms);
  if (e != NULL) {
    if ((size_t)e->address_len + 1 > cap) {
      size_t need = (size_t)e->address_len + 1;
      pthread_mutex_unlock(&s->mu);
      return ap_error_set(err, AP_ERANGE,
                          "%s: address needs %zu bytes, buffer has %zu", what,
                          need, cap);
    }
    memcpy(address, entry_address(e), (size_t)e->address_len + 1);
    if (now_ms > e->last_used_ms) e->last_used_ms = now_ms;
    lru_unlink(s, e);
    lru_push_newest(s, e);
    *found = 1;
  }
  pthread_mutex_unlock(&s->mu);
  return AP_OK;
}

int ap_session_table_put(ap_session_table *t, const char *key, size_t key_len,
                         const char *address, uint64_t now_ms, ap_error *err) {
  static const char what[] = "session table put";
  if (t == NULL) return ap_error_set(err, AP_EINVAL, "%s: table is NULL", what);
  int rc = check_key(key, key_len, what, err);
  if (rc != AP_OK) return rc;
  size_t address_len = 0;
  rc = check_address(address, &address_len, what, err);
  if (rc != AP_OK) return rc;
  uint64_t hash = key_hash(t, key, key_len);
  ap_session_shard *s = shard_of(t, hash);
  pthread_mutex_lock(&s->mu);
  ap_session_entry *old = find(s, hash, key, key_len);
  if (old != NULL) detach(t, s, old);
  rc = insert(t, s, hash, key, key_len, address, address_len, now_ms, old,
              err);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int ap_session_table_remove(ap_session_table *t, const char *key,
                            size_t key_len, int *removed, ap_error *err) {
  static const char what[] = "session table remove";
  if (t == NULL) return ap_error_set(err, AP_EINVAL, "%s: table is NULL", what);
  int rc = check_key(key, key_len, what, err);
  if (rc != AP_OK) return rc;
  uint64_t hash = key_hash(t, key, key_len);
  ap_session_shard *s = shard_of(t, hash);
  pthread_mutex_lock(&s->mu);
  ap_session_entry *e = find(s, hash, key, key_len);
  if (e != NULL) {
    detach(t, s, e);
    free(e);
  }
  pthread_mutex_unlock(&s->mu);
  if (removed != NULL) *removed = e != NULL;
  return AP_OK;
}

int ap_session_table_route(ap_session_table *t, const char *key,
                           size_t key_len, uint64_t now_ms,
                           const ap_session_chooser *chooser,
                           ap_session_outcome *outcome, ap_error *err) {
  static const char what[] = "session table route";
  if (t == NULL) return ap_error_set(err, AP_EINVAL, "%s: table is NULL", what);
  int rc = check_key(key, key_len, what, err);
  if (rc != AP_OK) return rc;
  if (chooser == NULL || chooser->usable == NULL || chooser->place == NULL)
    return ap_error_set(err, AP_EINVAL,
                        "%s: chooser or one of its callbacks is NULL", what);
  uint64_t hash = key_hash(t, key, key_len);
  ap_session_shard *s = shard_of(t, hash);
  pthread_mutex_lock(&s->mu);
  ap_session_entry *e = find_live(t, s, hash, key, key_len, now_ms);
  if (e != NULL && chooser->usable(chooser->ctx, entry_address(e))) {
    if (now_ms > e->last_used_ms) e->last_used_ms = now_ms;
    lru_unlink(s, e);
    lru_push_newest(s, e);
    /* Expiry is the data path's: a few of the shard's idle entries go
     * with each call (a new key's insert reclaims them all). */
    reclaim_expired_upto(t, s, now_ms, AP_SESSION_RECLAIM_PER_CALL, NULL);
    pthread_mutex_unlock(&s->mu);
    if (outcome) *outcome = AP_SESSION_HIT;
    return AP_OK;
  }
  const int known = e != NULL;
  if (e != NULL) detach(t, s, e); /* stale: reused below or freed */
  const char *address = chooser->place(chooser->ctx);
  size_t address_len = 0;
  if (address == NULL) {
    rc = ap_error_set(err, AP_EUNAVAIL, "%s: no endpoint to place the key on",
                      what);
  } else {
    rc = check_address(address, &address_len, what, err);
  }
  if (rc != AP_OK) {
    free(e);
    pthread_mutex_unlock(&s->mu);
    return rc;
  }
  rc = insert(t, s, hash, key, key_len, address, address_len, now_ms, e, err);
  pthread_mutex_unlock(&s->mu);
  if (rc == AP_OK && outcome)
    *outcome = known ? AP_SESSION_MOVED : AP_SESSION_PLACED;
  return rc;
}

int ap_session_table_expire(ap_session_table *t, uint64_t now_ms,
                            size_t *expired, ap_error *err) {
  if (t == NULL)
    return ap_error_set(err, AP_EINVAL, "session table expire: table is NULL");
  size_t n = 0;
  if (t->idle_ms != 0) {
    for (size_t i = 0; i < t->nshards; i++) {
      ap_session_shard *s = &t->shards[i];
      pthread_mutex_lock(&s->mu);
      reclaim_expired(t, s, now_ms, &n);
      pthread_mutex_unlock(&s->mu);
    }
  }
  if (expired != NULL) *expired = n;
  return AP_OK;
}

size_t ap_session_table_size(const ap_session_table *t) {
  if (t == NULL) return 0;
  return atomic_load_explicit(&((ap_session_table *)t)->size,
                              memory_order_relaxed);
}

size_t ap_session_table_capacity(const ap_session_table *t) {
  return t ? t->capacity : 0;
}

uint64_t ap_session_table_evictions(const ap_session_table *t) {
  if (t == NULL) return 0;
  return atomic_load_explicit(&((ap_session_table *)t)->evictions,
                              memory_order_relaxed);
}

size_t ap_session_table_longest_chain(ap_session_table *t) {
  if (t == NULL) return 0;
  size_t longest = 0;
  for (size_t i = 0; i < t->nshards; i++) {
    ap_session_shard *s = &t->shards[i];
    pthread_mutex_lock(&s->mu);
    for (size_t b = 0; b <= s->bucket_mask; b++) {
      size_t n = 0;
      for (ap_session_entry *e = s->buckets[b]; e != NULL; e = e->chain_next)
        n++;
      if (n > longest) longest = n;
    }
    pthread_mutex_unlock(&s->mu);
  }
  return longest;
}
