// Tests of the bounded session table (policy/affinity/ap_session_table.h):
// insert / lookup / move, input validation, LRU eviction at the cap under a
// flood of unique keys, idle expiry with caller-supplied time, and the
// atomic route() used by sticky picks (the seed 002 scenario on the table).
#include <malloc.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "policy/affinity/ap_session_table.h"
#include "policy/affinity/ap_session_table_testing.h"
#include "policy/core/ap_hash.h"
}

namespace {

// Owns a table for one test.
struct Table {
  ap_session_table* t = nullptr;
  // A fixed hash key: the shard split is the same every run.
  Table(size_t cap, uint64_t idle_ms) {
    ap_error err;
    const ap_siphash_key key = {0x0123456789abcdefull, 0x0fedcba987654321ull};
    int rc = ap_session_table_create_keyed(cap, idle_ms, &key, &t, &err);
    EXPECT_EQ(rc, AP_OK) << err.message;
  }
  ~Table() { ap_session_table_destroy(t); }

  int Put(const std::string& key, const std::string& addr, uint64_t now = 0) {
    ap_error err;
    int rc = ap_session_table_put(t, key.data(), key.size(), addr.c_str(),
                                  now, &err);
    EXPECT_EQ(rc, AP_OK) << err.message;
    return rc;
  }
  // The address of `key`, or "" when absent.
  std::string Get(const std::string& key, uint64_t now = 0) {
    char buf[AP_SESSION_MAX_ADDRESS_LEN + 1];
    int found = -1;
    ap_error err;
    int rc = ap_session_table_get(t, key.data(), key.size(), now, buf,
                                  sizeof buf, &found, &err);
    EXPECT_EQ(rc, AP_OK) << err.message;
    EXPECT_TRUE(found == 0 || found == 1);
    return found == 1 ? std::string(buf) : std::string();
  }
  size_t Size() const { return ap_session_table_size(t); }
};

TEST(SessionTable, CreateValidatesArguments) {
  ap_session_table* t = nullptr;
  ap_error err;
  EXPECT_EQ(ap_session_table_create(10, 0, nullptr, &err), AP_EINVAL);
  EXPECT_NE(std::strstr(err.message, "out"), nullptr) << err.message;
  EXPECT_EQ(ap_session_table_create(0, 0, &t, &err), AP_ERANGE);
  EXPECT_NE(std::strstr(err.message, "max_sessions"), nullptr);
  EXPECT_EQ(ap_session_table_create(AP_SESSION_MAX_SESSIONS + 1, 0, &t, &err),
            AP_ERANGE);
  EXPECT_EQ(t, nullptr);
  // err may be NULL.
  EXPECT_EQ(ap_session_table_create(0, 0, &t, nullptr), AP_ERANGE);
  ASSERT_EQ(ap_session_table_create(1, 0, &t, &err), AP_OK);
  EXPECT_EQ(ap_session_table_capacity(t), 1u);
  EXPECT_EQ(ap_session_table_size(t), 0u);
  ap_session_table_destroy(t);
  ap_session_table_destroy(nullptr);  // ignored
  EXPECT_EQ(ap_session_table_size(nullptr), 0u);
  EXPECT_EQ(ap_session_table_capacity(nullptr), 0u);
  EXPECT_EQ(ap_session_table_evictions(nullptr), 0u);
}

TEST(SessionTable, InsertLookupMove) {
  Table tb(100, 0);
  EXPECT_EQ(tb.Get("u1"), "");
  tb.Put("u1", "127.0.0.1:1001");
  tb.Put("u2", "127.0.0.1:1002");
  EXPECT_EQ(tb.Get("u1"), "127.0.0.1:1001");
  EXPECT_EQ(tb.Get("u2"), "127.0.0.1:1002");
  EXPECT_EQ(tb.Size(), 2u);
  // Move u1: the new address replaces the old one, the size stays.
  tb.Put("u1", "[::1]:2001-a-much-longer-address-than-before");
  EXPECT_EQ(tb.Get("u1"), "[::1]:2001-a-much-longer-address-than-before");
  tb.Put("u1", "h:1");
  EXPECT_EQ(tb.Get("u1"), "h:1");
  EXPECT_EQ(tb.Size(), 2u);
  int removed = -1;
  ap_error err;
  ASSERT_EQ(ap_session_table_remove(tb.t, "u1", 2, &removed, &err), AP_OK);
  EXPECT_EQ(removed, 1);
  ASSERT_EQ(ap_session_table_remove(tb.t, "u1", 2, &removed, &err), AP_OK);
  EXPECT_EQ(removed, 0);
  EXPECT_EQ(tb.Get("u1"), "");
  EXPECT_EQ(tb.Get("u2"), "127.0.0.1:1002");
  EXPECT_EQ(tb.Size(), 1u);
  EXPECT_EQ(ap_session_table_evictions(tb.t), 0u);
}

TEST(SessionTable, KeysAreByteStrings) {
  Table tb(100, 0);
  // Keys are (pointer, length): embedded NULs and prefixes are distinct keys.
  const std::string a("ab\0c", 4), b("ab\0d", 4), c("ab", 2);
  tb.Put(a, "A:1");
  tb.Put(b, "B:1");
  tb.Put(c, "C:1");
  EXPECT_EQ(tb.Get(a), "A:1");
  EXPECT_EQ(tb.Get(b), "B:1");
  EXPECT_EQ(tb.Get(c), "C:1");
  EXPECT_EQ(tb.Size(), 3u);
}

TEST(SessionTable, CallsValidateInput) {
  Table tb(10, 0);
  ap_error err;
  char buf[64];
  int found = 0;
  std::string long_key(AP_SESSION_MAX_KEY_LEN + 1, 'k');
  std::string long_addr(AP_SESSION_MAX_ADDRESS_LEN + 1, 'a');
  EXPECT_EQ(ap_session_table_put(nullptr, "k", 1, "a:1", 0, &err), AP_EINVAL);
  EXPECT_EQ(ap_session_table_put(tb.t, nullptr, 1, "a:1", 0, &err), AP_EINVAL);
  EXPECT_EQ(ap_session_table_put(tb.t, "k", 0, "a:1", 0, &err), AP_EINVAL);
  EXPECT_NE(std::strstr(err.message, "key is empty"), nullptr) << err.message;
  EXPECT_EQ(ap_session_table_put(tb.t, long_key.data(), long_key.size(), "a:1",
                                 0, &err),
            AP_ERANGE);
  EXPECT_EQ(ap_session_table_put(tb.t, "k", 1, nullptr, 0, &err), AP_EINVAL);
  EXPECT_EQ(ap_session_table_put(tb.t, "k", 1, "", 0, &err), AP_EINVAL);
  EXPECT_EQ(ap_session_table_put(tb.t, "k", 1, long_addr.c_str(), 0, &err),
            AP_ERANGE);
  EXPECT_EQ(tb.Size(), 0u);

  EXPECT_EQ(ap_session_table_get(nullptr, "k", 1, 0, buf, sizeof buf, &found,
                                 &err),
            AP_EINVAL);
  EXPECT_EQ(ap_session_table_get(tb.t, "k", 1, 0, nullptr, 8, &found, &err),
            AP_EINVAL);
  EXPECT_EQ(ap_session_table_get(tb.t, "k", 1, 0, buf, sizeof buf, nullptr,
                                 &err),
            AP_EINVAL);
  // A buffer too small for the stored address is an error, not a cut.
  tb.Put("k", "127.0.0.1:50051");
  EXPECT_EQ(ap_session_table_get(tb.t, "k", 1, 0, buf, 8, &found, &err),
            AP_ERANGE);
  EXPECT_NE(std::strstr(err.message, "16 bytes"), nullptr) << err.message;

  EXPECT_EQ(ap_session_table_remove(nullptr, "k", 1, nullptr, &err), AP_EINVAL);
  EXPECT_EQ(ap_session_table_remove(tb.t, nullptr, 1, nullptr, &err),
            AP_EINVAL);
  EXPECT_EQ(ap_session_table_expire(nullptr, 0, nullptr, &err), AP_EINVAL);
  ap_session_chooser incomplete = {nullptr, nullptr, nullptr};
  EXPECT_EQ(ap_session_table_route(tb.t, "k", 1, 0, &incomplete, nullptr,
                                   &err),
            AP_EINVAL);
  EXPECT_EQ(ap_session_table_route(tb.t, "k", 1, 0, nullptr, nullptr, &err),
            AP_EINVAL);
  EXPECT_EQ(tb.Size(), 1u);
}

TEST(SessionTable, SingleSlotEvictsLeastRecentlyUsed) {
  Table tb(1, 0);
  tb.Put("a", "A:1");
  tb.Put("b", "B:1");
  EXPECT_EQ(tb.Get("a"), "");
  EXPECT_EQ(tb.Get("b"), "B:1");
  EXPECT_EQ(tb.Size(), 1u);
  EXPECT_EQ(ap_session_table_evictions(tb.t), 1u);
}

TEST(SessionTable, FloodOfUniqueKeysStaysAtTheCapAndKeepsHotKeys) {
  const size_t cap = 1000;
  const int flood = 200000;
  Table tb(cap, 0);
  tb.Put("hot", "H:1", 0);
  size_t max_seen = 0;
  for (int i = 0; i < flood; i++) {
    uint64_t now = static_cast<uint64_t>(i) + 1;
    tb.Put("flood-" + std::to_string(i), "F:" + std::to_string(i), now);
    // A key in steady use is always the most recent one of its shard.
    if (i % 4 == 0) {
      ASSERT_EQ(tb.Get("hot", now), "H:1") << "at " << i;
    }
    size_t s = tb.Size();
    if (s > max_seen) max_seen = s;
  }
  EXPECT_LE(max_seen, cap);
  EXPECT_EQ(tb.Size(), cap);
  // Every insertion beyond the capacity evicted exactly one entry.
  EXPECT_EQ(ap_session_table_evictions(tb.t), flood + 1 - cap);
  EXPECT_EQ(tb.Get("flood-0"), "");
  EXPECT_EQ(tb.Get("flood-" + std::to_string(flood - 1)),
            "F:" + std::to_string(flood - 1));
  // The survivors are recent keys: with 16 shards of 62-63 slots each, no
  // key older than a few thousand insertions can remain (a shard receives
  // about 1/16 of the keys, so 63 slots cover ~1000 recent insertions; 5000
  // is a margin of > 10 standard deviations on the per-shard count).
  int old_survivors = 0;
  for (int i = 0; i < flood - 5000; i++)
    if (!tb.Get("flood-" + std::to_string(i), flood).empty()) old_survivors++;
  EXPECT_EQ(old_survivors, 0);
}

// ---- hashing under chosen keys ---------------------------------------------

// The inverse of an odd 64-bit multiplier (Newton's iteration).
uint64_t InverseOf(uint64_t a) {
  uint64_t x = a;
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}

uint64_t Rotr(uint64_t x, int r) { return (x >> r) | (x << (64 - r)); }

// An 8-byte key whose ap_hash64 under `seed` is exactly `target`: ap_hash64
// is unkeyed and every step of it is invertible, so anyone can aim keys.
std::string KeyWithUnkeyedHash(uint64_t target, uint64_t seed) {
  const uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full,
                 k3 = 0x165667B19E3779F9ull;
  uint64_t x = target;  // undo the splitmix64 finalizer
  x ^= (x >> 31) ^ (x >> 62);
  x *= InverseOf(0x94D049BB133111EBull);
  x ^= (x >> 27) ^ (x >> 54);
  x *= InverseOf(0xBF58476D1CE4E5B9ull);
  x ^= (x >> 30) ^ (x >> 60);
  const uint64_t h1 = x ^ 8;  // the length is xored in before finalizing
  const uint64_t h0 = (seed + k3) ^ (8 * k1);
  const uint64_t mixed = Rotr((h1 - k2) * InverseOf(k3), 27) ^ h0;
  const uint64_t word = Rotr(mixed * InverseOf(k1), 31) * InverseOf(k2);
  std::string key(8, '\0');
  for (int i = 0; i < 8; ++i) key[i] = static_cast<char>(word >> (8 * i));
  return key;
}

// Keys aimed, under the unkeyed hash the table once used (seed 0x5e55104),
// at shard 0 and bucket 0 must spread like any others: no shard overflows,
// so nothing is evicted from a table far from full.
TEST(SessionTable, KeysAimedAtOneShardDoNotEvictOthers) {
  const uint64_t kOldSeed = 0x5e55104u;
  Table tb(1024, 0);  // 16 shards of 64 entries
  std::vector<std::string> victims;
  for (int i = 0; i < 32; ++i) victims.push_back("victim-" + std::to_string(i));
  for (const auto& v : victims) tb.Put(v, "V:1");
  for (uint64_t i = 1; i <= 300; ++i) {
    // Top 4 bits 0 (shard 0), low 20 bits 0 (bucket 0).
    const std::string key = KeyWithUnkeyedHash(i << 20, kOldSeed);
    ASSERT_EQ(ap_hash64(key.data(), key.size(), kOldSeed), i << 20);
    tb.Put(key, "A:1");
  }
  EXPECT_EQ(ap_session_table_evictions(tb.t), 0u);
  EXPECT_EQ(tb.Size(), 332u);
  for (const auto& v : victims) EXPECT_EQ(tb.Get(v), "V:1") << v;
  EXPECT_LE(ap_session_table_longest_chain(tb.t), AP_SESSION_MAX_CHAIN);
}

// Even keys that do share a bucket (found here by search, since the test
// knows the hash key) never make a chain longer than AP_SESSION_MAX_CHAIN:
// the chain's least recently used entry makes room.
TEST(SessionTable, BucketChainsAreBounded) {
  const ap_siphash_key key = {0x0123456789abcdefull, 0x0fedcba987654321ull};
  Table tb(1024, 0);  // the same key as Table uses; 64 buckets per shard
  std::vector<std::string> same_bucket;
  for (uint64_t i = 0; same_bucket.size() < 20 && i < 10000000; ++i) {
    const std::string k = "k" + std::to_string(i);
    const uint64_t h = ap_siphash24(&key, k.data(), k.size());
    if ((h >> 60) == 0 && (h & 63) == 0) same_bucket.push_back(k);
  }
  ASSERT_EQ(same_bucket.size(), 20u);
  for (size_t i = 0; i < same_bucket.size(); ++i)
    tb.Put(same_bucket[i], "S:" + std::to_string(i), i + 1);
  EXPECT_EQ(ap_session_table_longest_chain(tb.t), AP_SESSION_MAX_CHAIN);
  EXPECT_EQ(tb.Size(), AP_SESSION_MAX_CHAIN);
  EXPECT_EQ(ap_session_table_evictions(tb.t), 20u - AP_SESSION_MAX_CHAIN);
  // The survivors are the most recently used ones.
  EXPECT_EQ(tb.Get(same_bucket[0]), "");
  EXPECT_EQ(tb.Get(same_bucket[19]), "S:19");
}

// The documented bound: a full table of AP_SESSION_MAX_SESSIONS entries
// with keys and addresses at their length bounds fits in 2 GiB. The cost
// per entry is measured from the allocator on a smaller table.
TEST(SessionTable, FullTableAtTheCapFitsTheDocumentedMemory) {
  const size_t n = 4096;
  struct mallinfo2 before = mallinfo2();
  {
    Table tb(n, 0);
    const std::string address(AP_SESSION_MAX_ADDRESS_LEN, 'a');
    struct mallinfo2 empty = mallinfo2();
    if (empty.uordblks == before.uordblks)
      GTEST_SKIP() << "the allocator does not report usage (sanitizer)";
    for (size_t i = 0; i < n; ++i) {
      std::string key = std::to_string(i);
      key.resize(AP_SESSION_MAX_KEY_LEN, 'k');
      tb.Put(key, address);
    }
    struct mallinfo2 full = mallinfo2();
    const double per_entry =
        static_cast<double>(full.uordblks - before.uordblks) / n;
    const double at_cap = per_entry * AP_SESSION_MAX_SESSIONS;
    EXPECT_LE(at_cap, 2.0 * (1u << 30)) << per_entry << " bytes per entry";
  }
}

TEST(SessionTable, IdleEntriesExpire) {
  Table tb(100, 1000);
  tb.Put("a", "A:1", 0);
  EXPECT_EQ(tb.Get("a", 1000), "A:1");  // exactly idle_ms: still alive
  EXPECT_EQ(tb.Get("a", 2000), "A:1");  // used at 1000: alive until 2000
  EXPECT_EQ(tb.Get("a", 3001), "");     // idle 1001 ms: expired and removed
  EXPECT_EQ(tb.Size(), 0u);

  for (int i = 0; i < 10; i++) tb.Put("k" + std::to_string(i), "K:1", 10000);
  for (int i = 0; i < 5; i++) EXPECT_EQ(tb.Get("k" + std::to_string(i), 10500),
                                        "K:1");
  size_t expired = 99;
  ap_error err;
  ASSERT_EQ(ap_session_table_expire(tb.t, 11200, &expired, &err), AP_OK);
  EXPECT_EQ(expired, 5u);
  EXPECT_EQ(tb.Size(), 5u);
  for (int i = 0; i < 5; i++)
    EXPECT_EQ(tb.Get("k" + std::to_string(i), 11200), "K:1");
  for (int i = 5; i < 10; i++)
    EXPECT_EQ(tb.Get("k" + std::to_string(i), 11200), "");
  // A write into a shard reclaims its expired entries too.
  ASSERT_EQ(ap_session_table_expire(tb.t, 50000, &expired, &err), AP_OK);
  EXPECT_EQ(expired, 5u);
  EXPECT_EQ(tb.Size(), 0u);
}

TEST(SessionTable, ZeroIdleNeverExpires) {
  Table tb(10, 0);
  tb.Put("a", "A:1", 0);
  size_t expired = 99;
  ASSERT_EQ(ap_session_table_expire(tb.t, UINT64_MAX, &expired, nullptr),
            AP_OK);
  EXPECT_EQ(expired, 0u);
  EXPECT_EQ(tb.Get("a", UINT64_MAX), "A:1");
}

// A pool of named endpoints with an up/down flag and a round-robin placer,
// as in seed 002 ("a sticky selector wrapping round-robin").
struct Pool {
  std::vector<std::string> names;
  std::vector<bool> up;
  size_t cursor = 0;
  int placements = 0;
  std::string chosen;

  void Add(const std::string& n) {
    names.push_back(n);
    up.push_back(true);
  }
  void SetUp(const std::string& n, bool u) {
    for (size_t i = 0; i < names.size(); i++)
      if (names[i] == n) up[i] = u;
  }
  static int Usable(void* ctx, const char* address) {
    auto* p = static_cast<Pool*>(ctx);
    for (size_t i = 0; i < p->names.size(); i++) {
      if (p->names[i] == address && p->up[i]) {
        p->chosen = address;
        return 1;
      }
    }
    return 0;
  }
  static const char* Place(void* ctx) {
    auto* p = static_cast<Pool*>(ctx);
    for (size_t step = 0; step < p->names.size(); step++) {
      size_t i = p->cursor++ % p->names.size();
      if (p->up[i]) {
        p->placements++;
        p->chosen = p->names[i];
        return p->names[i].c_str();
      }
    }
    return nullptr;
  }
  // Routes `key`; returns the endpoint and stores the outcome.
  std::string Route(ap_session_table* t, const std::string& key,
                    ap_session_outcome* outcome, uint64_t now = 0) {
    ap_session_chooser ch = {&Pool::Usable, &Pool::Place, this};
    ap_error err;
    chosen.clear();
    int rc = ap_session_table_route(t, key.data(), key.size(), now, &ch,
                                    outcome, &err);
    EXPECT_EQ(rc, AP_OK) << err.message;
    return chosen;
  }
};

TEST(SessionTable, RouteFollowsTheStickyScenario) {
  Table tb(100, 0);
  Pool pool;
  pool.Add("A:1");
  pool.Add("B:1");
  pool.Add("C:1");
  ap_session_outcome out;
  EXPECT_EQ(pool.Route(tb.t, "u1", &out), "A:1");
  EXPECT_EQ(out, AP_SESSION_PLACED);
  // The second u1 comes from the table without advancing round-robin.
  EXPECT_EQ(pool.Route(tb.t, "u1", &out), "A:1");
  EXPECT_EQ(out, AP_SESSION_HIT);
  EXPECT_EQ(pool.placements, 1);
  EXPECT_EQ(pool.Route(tb.t, "u2", &out), "B:1");
  EXPECT_EQ(out, AP_SESSION_PLACED);
  // A new backend joins: u1 does not move.
  pool.Add("D:1");
  EXPECT_EQ(pool.Route(tb.t, "u1", &out), "A:1");
  EXPECT_EQ(out, AP_SESSION_HIT);
  // A goes down: u1 is re-placed once, then sticks to its new home.
  pool.SetUp("A:1", false);
  std::string home = pool.Route(tb.t, "u1", &out);
  EXPECT_EQ(out, AP_SESSION_MOVED);
  EXPECT_NE(home, "A:1");
  EXPECT_FALSE(home.empty());
  int placements = pool.placements;
  pool.SetUp("A:1", true);  // A coming back does not pull u1 back
  for (int i = 0; i < 5; i++) {
    EXPECT_EQ(pool.Route(tb.t, "u1", &out), home);
    EXPECT_EQ(out, AP_SESSION_HIT);
  }
  EXPECT_EQ(pool.placements, placements);
  EXPECT_EQ(tb.Get("u1"), home);
  EXPECT_EQ(tb.Size(), 2u);
}

TEST(SessionTable, RouteWithNothingToPlaceOn) {
  Table tb(100, 0);
  Pool pool;
  pool.Add("A:1");
  pool.SetUp("A:1", false);
  ap_session_chooser ch = {&Pool::Usable, &Pool::Place, &pool};
  ap_error err;
  EXPECT_EQ(ap_session_table_route(tb.t, "u1", 2, 0, &ch, nullptr, &err),
            AP_EUNAVAIL);
  EXPECT_EQ(tb.Size(), 0u);  // an unknown key is not stored
  tb.Put("u2", "A:1");
  EXPECT_EQ(ap_session_table_route(tb.t, "u2", 2, 0, &ch, nullptr, &err),
            AP_EUNAVAIL);
  EXPECT_EQ(tb.Size(), 0u);  // the stale entry is dropped
}

TEST(SessionTable, RouteReplacesExpiredEntriesAsNew) {
  Table tb(100, 1000);
  Pool pool;
  pool.Add("A:1");
  pool.Add("B:1");
  ap_session_outcome out;
  EXPECT_EQ(pool.Route(tb.t, "u1", &out, 0), "A:1");
  EXPECT_EQ(pool.Route(tb.t, "u1", &out, 900), "A:1");
  EXPECT_EQ(out, AP_SESSION_HIT);
  EXPECT_EQ(pool.Route(tb.t, "u1", &out, 5000), "B:1");
  EXPECT_EQ(out, AP_SESSION_PLACED);
  EXPECT_EQ(tb.Size(), 1u);
}

// Expiry is the data path's: a known key's hit reclaims up to
// AP_SESSION_RECLAIM_PER_CALL idle entries of its own shard, oldest
// first, until none is left there; the other shards keep theirs (still
// counted: the size is what the table holds) until calls reach them.
TEST(SessionTable, AHitReclaimsIdleEntriesOfItsShard) {
  Table tb(1000, 1000);
  Pool pool;
  pool.Add("A:1");
  for (int i = 0; i < 200; ++i) tb.Put("idle-" + std::to_string(i), "A:1", 0);
  ap_session_outcome out;
  EXPECT_EQ(pool.Route(tb.t, "hot", &out, 900), "A:1");  // used at 900
  EXPECT_EQ(out, AP_SESSION_PLACED);
  ASSERT_EQ(tb.Size(), 201u);
  // At 1500 every idle-* entry has expired, "hot" has not.
  size_t size = tb.Size();
  for (int call = 0; call < 40; ++call) {
    EXPECT_EQ(pool.Route(tb.t, "hot", &out, 1500), "A:1");
    EXPECT_EQ(out, AP_SESSION_HIT);
    const size_t now = tb.Size();
    EXPECT_LE(size - now, AP_SESSION_RECLAIM_PER_CALL);
    if (call == 0) EXPECT_EQ(size - now, AP_SESSION_RECLAIM_PER_CALL);
    size = now;
  }
  // 200 keys over 16 shards: "hot"'s shard had some, the others keep
  // theirs until a call reaches them or ap_session_table_expire runs.
  EXPECT_LT(size, 201u - AP_SESSION_RECLAIM_PER_CALL);
  EXPECT_GT(size, 100u);
  size_t expired = 0;
  ASSERT_EQ(ap_session_table_expire(tb.t, 1500, &expired, nullptr), AP_OK);
  EXPECT_EQ(tb.Size(), 1u);
  EXPECT_EQ(expired, size - 1);
}

// place() must return a plausible address; the table refuses others.
TEST(SessionTable, RouteRejectsBadPlacedAddress) {
  Table tb(10, 0);
  struct Bad {
    static int Usable(void*, const char*) { return 1; }
    static const char* Place(void*) { return ""; }
  };
  ap_session_chooser ch = {&Bad::Usable, &Bad::Place, nullptr};
  ap_error err;
  EXPECT_EQ(ap_session_table_route(tb.t, "u1", 2, 0, &ch, nullptr, &err),
            AP_EINVAL);
  EXPECT_EQ(tb.Size(), 0u);
}

}  // namespace
