// Debounced membership (policy/core/ap_membership): removal grace,
// coalescing of bursts, weights and every bad input. Time is an argument,
// so every case is deterministic and nothing sleeps.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/membership/ap_membership.h"
#include "policy/core/membership/ap_membership_testing.h"
#include "policy/core/ring/ap_order.h"

namespace {

struct MembershipDeleter {
  void operator()(ap_membership *m) const { ap_membership_destroy(m); }
};
using Membership = std::unique_ptr<ap_membership, MembershipDeleter>;

Membership Make(uint64_t grace_ms, uint64_t coalesce_ms) {
  ap_membership_params params;
  ap_membership_params_init(&params);
  params.removal_grace_ms = grace_ms;
  params.coalesce_ms = coalesce_ms;
  ap_membership *m = nullptr;
  ap_error err;
  EXPECT_EQ(ap_membership_create(&params, &m, &err), AP_OK) << err.message;
  return Membership(m);
}

// Offers `addresses` (weights 1 unless given) and returns the change bits;
// fails the test on an error.
unsigned Update(ap_membership *m, const std::vector<std::string> &addresses,
                uint64_t now_ms, const std::vector<double> &weights = {}) {
  std::vector<const char *> pointers;
  for (const auto &a : addresses) pointers.push_back(a.c_str());
  unsigned changes = 12345;
  ap_error err;
  EXPECT_EQ(ap_membership_update(m, pointers.data(),
                                 weights.empty() ? nullptr : weights.data(),
                                 pointers.size(), now_ms, &changes, &err),
            AP_OK)
      << err.message;
  return changes;
}

unsigned Tick(ap_membership *m, uint64_t now_ms) {
  unsigned changes = 12345;
  ap_error err;
  EXPECT_EQ(ap_membership_tick(m, now_ms, &changes, &err), AP_OK)
      << err.message;
  return changes;
}

// "address" or "address(draining)" or "address*weight", in member order.
std::string Describe(const ap_membership *m) {
  std::string out;
  for (size_t i = 0; i < ap_membership_count(m); ++i) {
    ap_membership_entry e;
    ap_error err;
    EXPECT_EQ(ap_membership_get(m, i, &e, &err), AP_OK) << err.message;
    if (!out.empty()) out += " ";
    out += e.address;
    if (e.weight != 1) out += "*" + std::to_string(static_cast<int>(e.weight));
    if (e.draining) out += "(draining)";
  }
  return out;
}

bool Mentions(const ap_error &err, const std::string &what) {
  return std::string(err.message).find(what) != std::string::npos;
}

constexpr unsigned kRing = AP_MEMBERSHIP_RING_CHANGED;
constexpr unsigned kDraining = AP_MEMBERSHIP_DRAINING_CHANGED;
constexpr unsigned kHeld = AP_MEMBERSHIP_HELD;

TEST(Membership, FirstListBuildsTheRingInAddressOrder) {
  Membership m = Make(5000, 0);
  EXPECT_EQ(ap_membership_count(m.get()), 0u);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 0u);
  EXPECT_EQ(Update(m.get(), {"10.0.0.3:80", "10.0.0.1:80", "10.0.0.2:80"}, 0),
            kRing);
  EXPECT_EQ(Describe(m.get()), "10.0.0.1:80 10.0.0.2:80 10.0.0.3:80");
  EXPECT_EQ(ap_membership_ring_version(m.get()), 1u);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), AP_MEMBERSHIP_NO_DEADLINE);
  // The same set in another order is no change at all.
  EXPECT_EQ(Update(m.get(), {"10.0.0.2:80", "10.0.0.3:80", "10.0.0.1:80"}, 5),
            0u);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 1u);
}

TEST(Membership, GoneAndBackWithinGraceChangesNoRing) {
  Membership m = Make(5000, 0);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1", "c:1"}, 1000), kRing);
  // b leaves: it keeps its slot, draining, until 1000 + 100 + 5000.
  EXPECT_EQ(Update(m.get(), {"a:1", "c:1"}, 1100), kDraining);
  EXPECT_EQ(Describe(m.get()), "a:1 b:1(draining) c:1");
  EXPECT_EQ(ap_membership_draining_count(m.get()), 1u);
  ap_membership_entry e;
  size_t index = 99;
  ASSERT_EQ(ap_membership_find(m.get(), "b:1", &index, nullptr), AP_OK);
  EXPECT_EQ(index, 1u);
  ASSERT_EQ(ap_membership_get(m.get(), index, &e, nullptr), AP_OK);
  EXPECT_EQ(e.drain_deadline_ms, 6100u);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), 6100u);
  // Ticks before the deadline change nothing.
  EXPECT_EQ(Tick(m.get(), 3000), 0u);
  // b restarts at the same address within the grace.
  EXPECT_EQ(Update(m.get(), {"c:1", "b:1", "a:1"}, 6099), kDraining);
  EXPECT_EQ(Describe(m.get()), "a:1 b:1 c:1");
  EXPECT_EQ(ap_membership_draining_count(m.get()), 0u);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), AP_MEMBERSHIP_NO_DEADLINE);
  EXPECT_EQ(Tick(m.get(), 20000), 0u);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 1u);  // never rebuilt
}

TEST(Membership, GonePastGraceLeaves) {
  Membership m = Make(5000, 0);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1", "c:1"}, 0), kRing);
  ASSERT_EQ(Update(m.get(), {"a:1", "c:1"}, 100), kDraining);
  EXPECT_EQ(Tick(m.get(), 5099), 0u);
  EXPECT_EQ(ap_membership_count(m.get()), 3u);
  EXPECT_EQ(Tick(m.get(), 5100), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1 c:1");
  EXPECT_EQ(ap_membership_ring_version(m.get()), 2u);
  size_t index;
  ap_error err;
  EXPECT_EQ(ap_membership_find(m.get(), "b:1", &index, &err), AP_EUNAVAIL);
  EXPECT_TRUE(Mentions(err, "b:1")) << err.message;
  EXPECT_EQ(ap_membership_next_deadline(m.get()), AP_MEMBERSHIP_NO_DEADLINE);
  // Coming back after the grace is a new member: a ring change.
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1", "c:1"}, 6000), kRing);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 3u);
}

TEST(Membership, ExpiredGraceAppliesOnTheNextUpdateWithoutATick) {
  Membership m = Make(1000, 0);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1"}, 0), kRing);
  ASSERT_EQ(Update(m.get(), {"a:1"}, 10), kDraining);
  // The caller's timer was late: the next update removes b all the same.
  EXPECT_EQ(Update(m.get(), {"a:1"}, 5000), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1");
}

TEST(Membership, ZeroGraceRemovesAtOnce) {
  Membership m = Make(0, 0);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1", "c:1"}, 0), kRing);
  EXPECT_EQ(Update(m.get(), {"a:1", "c:1"}, 1), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1 c:1");
  EXPECT_EQ(ap_membership_draining_count(m.get()), 0u);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), AP_MEMBERSHIP_NO_DEADLINE);
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1", "c:1"}, 2), kRing);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 3u);
}

TEST(Membership, EmptyListDrainsEveryoneWithinGrace) {
  Membership m = Make(2000, 0);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1"}, 0), kRing);
  EXPECT_EQ(Update(m.get(), {}, 100), kDraining);
  EXPECT_EQ(Describe(m.get()), "a:1(draining) b:1(draining)");
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1"}, 500), kDraining);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 1u);
  // Gone for longer than the grace: both leave, together.
  EXPECT_EQ(Update(m.get(), {}, 600), kDraining);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), 2600u);
  EXPECT_EQ(Tick(m.get(), 2600), kRing);
  EXPECT_EQ(ap_membership_count(m.get()), 0u);
}

TEST(Membership, BurstWithinCoalesceWindowIsOneRebuild) {
  Membership m = Make(0, 1000);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1", "c:1"}, 0), kRing);
  // Nine updates inside the window opened by that rebuild: all held.
  for (int k = 1; k <= 9; ++k) {
    std::vector<std::string> list = {"a:1", "b:1"};
    for (int extra = 0; extra < k; ++extra) {
      list.push_back("n" + std::to_string(extra) + ":1");
    }
    EXPECT_EQ(Update(m.get(), list, 10 * k), kHeld) << k;
    EXPECT_TRUE(ap_membership_has_held(m.get()));
    EXPECT_EQ(ap_membership_next_deadline(m.get()), 1000u);
  }
  EXPECT_EQ(Describe(m.get()), "a:1 b:1 c:1");  // nothing applied yet
  EXPECT_EQ(Tick(m.get(), 999), 0u);
  EXPECT_EQ(Tick(m.get(), 1000), kRing);  // the latest list, once
  EXPECT_EQ(Describe(m.get()),
            "a:1 b:1 n0:1 n1:1 n2:1 n3:1 n4:1 n5:1 n6:1 n7:1 n8:1");
  EXPECT_EQ(ap_membership_ring_version(m.get()), 2u);
  EXPECT_FALSE(ap_membership_has_held(m.get()));
  EXPECT_EQ(ap_membership_next_deadline(m.get()), AP_MEMBERSHIP_NO_DEADLINE);
  // That rebuild opened a new window: the next change waits for its end.
  EXPECT_EQ(Update(m.get(), {"a:1"}, 1500), kHeld);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), 2000u);
  EXPECT_EQ(Tick(m.get(), 2000), kRing);
  // After a quiet period a single change is applied at once.
  EXPECT_EQ(Update(m.get(), {"a:1", "z:1"}, 9000), kRing);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 4u);
}

TEST(Membership, BurstThatEndsWhereItStartedRebuildsNothing) {
  Membership m = Make(0, 1000);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1"}, 0), kRing);
  EXPECT_EQ(Update(m.get(), {"a:1"}, 10), kHeld);
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1", "c:1"}, 20), kHeld);
  // Back to the current list: the held update is dropped.
  EXPECT_EQ(Update(m.get(), {"b:1", "a:1"}, 30), 0u);
  EXPECT_FALSE(ap_membership_has_held(m.get()));
  EXPECT_EQ(ap_membership_next_deadline(m.get()), AP_MEMBERSHIP_NO_DEADLINE);
  EXPECT_EQ(Tick(m.get(), 1000), 0u);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 1u);
}

TEST(Membership, UpdateAfterAMissedDeadlineSupersedesTheHeldOne) {
  Membership m = Make(0, 1000);
  ASSERT_EQ(Update(m.get(), {"a:1"}, 0), kRing);
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1"}, 10), kHeld);
  // No tick at 1000; the next update (after the window) wins.
  EXPECT_EQ(Update(m.get(), {"a:1", "c:1"}, 1200), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1 c:1");
  EXPECT_FALSE(ap_membership_has_held(m.get()));
  EXPECT_EQ(ap_membership_ring_version(m.get()), 2u);
}

TEST(Membership, GraceExpiryWaitsForTheCoalescingWindow) {
  Membership m = Make(100, 1000);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1", "c:1"}, 0), kRing);
  // Quiet period, then c leaves (draining only: no rebuild, no window) ...
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1"}, 2000), kDraining);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), 2100u);
  // ... and d joins: a rebuild that opens a window until 3050.
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1", "d:1"}, 2050), kRing);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), 3050u);
  EXPECT_EQ(Tick(m.get(), 2100), 0u);  // c's grace is over, the window not
  EXPECT_EQ(Describe(m.get()), "a:1 b:1 c:1(draining) d:1");
  EXPECT_EQ(Tick(m.get(), 3050), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1 b:1 d:1");
  EXPECT_EQ(ap_membership_ring_version(m.get()), 3u);
}

TEST(Membership, HeldRemovalStartsItsGraceWhenApplied) {
  Membership m = Make(100, 1000);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1"}, 0), kRing);
  EXPECT_EQ(Update(m.get(), {"a:1"}, 10), kHeld);
  EXPECT_EQ(Tick(m.get(), 1000), kDraining);
  ap_membership_entry e;
  ASSERT_EQ(ap_membership_get(m.get(), 1, &e, nullptr), AP_OK);
  EXPECT_STREQ(e.address, "b:1");
  EXPECT_TRUE(e.draining);
  EXPECT_EQ(e.drain_deadline_ms, 1100u);
  EXPECT_EQ(Tick(m.get(), 1100), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1");
}

TEST(Membership, WeightChangesRebuildAndDrainingKeepsItsWeight) {
  Membership m = Make(1000, 0);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1"}, 0, {2, 3}), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1*2 b:1*3");
  EXPECT_EQ(Update(m.get(), {"b:1", "a:1"}, 1, {3, 2}), 0u);  // same weights
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1"}, 2, {2, 5}), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1*2 b:1*5");
  // NULL weights mean 1.
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1"}, 3), kRing);
  EXPECT_EQ(Describe(m.get()), "a:1 b:1");
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1"}, 4, {4, 4}), kRing);
  // b drains with its weight: its ring slot is unchanged.
  EXPECT_EQ(Update(m.get(), {"a:1"}, 5, {4}), kDraining);
  EXPECT_EQ(Describe(m.get()), "a:1*4 b:1*4(draining)");
  // Back with another weight: a ring change.
  EXPECT_EQ(Update(m.get(), {"a:1", "b:1"}, 6, {4, 7}), kRing | kDraining);
  EXPECT_EQ(Describe(m.get()), "a:1*4 b:1*7");
}

TEST(Membership, KeepsItsOwnCopiesOfTheAddresses) {
  Membership m = Make(1000, 1000);
  char a[] = "host-a:1", b[] = "host-b:1";
  const char *list[] = {a, b};
  ASSERT_EQ(ap_membership_update(m.get(), list, nullptr, 2, 0, nullptr,
                                 nullptr),
            AP_OK);
  const char *held[] = {a};
  ASSERT_EQ(ap_membership_update(m.get(), held, nullptr, 1, 10, nullptr,
                                 nullptr),
            AP_OK);
  a[0] = 'X';
  b[0] = 'Y';
  EXPECT_EQ(Describe(m.get()), "host-a:1 host-b:1");
  EXPECT_EQ(Tick(m.get(), 1000), kDraining);  // the held copy was "host-a:1"
  EXPECT_EQ(Describe(m.get()), "host-a:1 host-b:1(draining)");
}

TEST(Membership, LargeListsMergeCorrectly) {
  Membership m = Make(1000, 0);
  std::vector<std::string> all, even;
  for (int i = 0; i < 2000; ++i) {
    all.push_back("10.1." + std::to_string(i / 250) + "." +
                  std::to_string(i % 250) + ":443");
    if (i % 2 == 0) even.push_back(all.back());
  }
  ASSERT_EQ(Update(m.get(), all, 0), kRing);
  EXPECT_EQ(Update(m.get(), even, 1), kDraining);
  EXPECT_EQ(ap_membership_count(m.get()), 2000u);
  EXPECT_EQ(ap_membership_draining_count(m.get()), 1000u);
  for (size_t i = 0; i < all.size(); ++i) {
    size_t index;
    ASSERT_EQ(ap_membership_find(m.get(), all[i].c_str(), &index, nullptr),
              AP_OK);
    ap_membership_entry e;
    ASSERT_EQ(ap_membership_get(m.get(), index, &e, nullptr), AP_OK);
    EXPECT_EQ(all[i], e.address);
    EXPECT_EQ(e.draining != 0, i % 2 == 1) << all[i];
  }
  EXPECT_EQ(Tick(m.get(), 1001), kRing);
  EXPECT_EQ(ap_membership_count(m.get()), 1000u);
  EXPECT_EQ(ap_membership_draining_count(m.get()), 0u);
}

TEST(MembershipValidation, Create) {
  ap_membership_params params;
  ap_membership_params_init(&params);
  ap_membership *m = reinterpret_cast<ap_membership *>(0x1);
  ap_error err;
  EXPECT_EQ(ap_membership_create(nullptr, &m, &err), AP_EINVAL);
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(Mentions(err, "params")) << err.message;
  EXPECT_EQ(ap_membership_create(&params, nullptr, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "out")) << err.message;
  params.removal_grace_ms = AP_MEMBERSHIP_MAX_MS + 1;
  EXPECT_EQ(ap_membership_create(&params, &m, &err), AP_ERANGE);
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(Mentions(err, "removal_grace_ms")) << err.message;
  params.removal_grace_ms = AP_MEMBERSHIP_MAX_MS;
  params.coalesce_ms = UINT64_MAX;
  EXPECT_EQ(ap_membership_create(&params, &m, &err), AP_ERANGE);
  EXPECT_TRUE(Mentions(err, "coalesce_ms")) << err.message;
  params.coalesce_ms = AP_MEMBERSHIP_MAX_MS;  // both maxima are accepted
  ASSERT_EQ(ap_membership_create(&params, &m, &err), AP_OK) << err.message;
  ap_membership_destroy(m);
  ap_membership_destroy(nullptr);
  ap_membership_params_init(nullptr);
}

TEST(MembershipValidation, BadListsChangeNothing) {
  Membership m = Make(1000, 0);
  ASSERT_EQ(Update(m.get(), {"a:1", "b:1"}, 100), kRing);
  const std::string before = Describe(m.get());
  ap_error err;
  unsigned changes = 77;
  const char *good[] = {"a:1", "c:1"};
  EXPECT_EQ(ap_membership_update(nullptr, good, nullptr, 2, 200, &changes,
                                 &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "membership")) << err.message;
  EXPECT_EQ(changes, 0u);
  EXPECT_EQ(ap_membership_update(m.get(), nullptr, nullptr, 2, 200, &changes,
                                 &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "addresses")) << err.message;
  const char *with_null[] = {"a:1", nullptr};
  EXPECT_EQ(ap_membership_update(m.get(), with_null, nullptr, 2, 200,
                                 &changes, &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "addresses[1] is NULL")) << err.message;
  const char *with_empty[] = {"", "a:1"};
  EXPECT_EQ(ap_membership_update(m.get(), with_empty, nullptr, 2, 200,
                                 &changes, &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "addresses[0] is empty")) << err.message;
  const char *duplicate[] = {"c:1", "a:1", "c:1"};
  EXPECT_EQ(ap_membership_update(m.get(), duplicate, nullptr, 3, 200,
                                 &changes, &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "duplicate address 'c:1'")) << err.message;
  for (double bad : {0.0, -1.0, (double)NAN, (double)INFINITY}) {
    const double weights[] = {1, bad};
    EXPECT_EQ(ap_membership_update(m.get(), good, weights, 2, 200, &changes,
                                   &err),
              AP_EINVAL)
        << bad;
    EXPECT_TRUE(Mentions(err, "weights[1] (c:1)")) << err.message;
    EXPECT_EQ(changes, 0u);
  }
  EXPECT_EQ(ap_membership_update(m.get(), good, nullptr, AP_MAX_ENDPOINTS + 1,
                                 200, &changes, &err),
            AP_ERANGE);
  EXPECT_TRUE(Mentions(err, "n ")) << err.message;
  // The clock must not go backwards, nor beyond the supported range.
  EXPECT_EQ(ap_membership_update(m.get(), good, nullptr, 2, 99, &changes,
                                 &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "now_ms 99 is before the previous call's 100"))
      << err.message;
  EXPECT_EQ(ap_membership_update(m.get(), good, nullptr, 2,
                                 AP_MEMBERSHIP_MAX_TIME_MS + 1, &changes,
                                 &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "now_ms")) << err.message;
  // A NULL err is fine.
  EXPECT_EQ(ap_membership_update(m.get(), duplicate, nullptr, 3, 200, nullptr,
                                 nullptr),
            AP_EINVAL);
  // None of that changed anything.
  EXPECT_EQ(Describe(m.get()), before);
  EXPECT_EQ(ap_membership_ring_version(m.get()), 1u);
  EXPECT_EQ(ap_membership_next_deadline(m.get()), AP_MEMBERSHIP_NO_DEADLINE);
  // The same time as the last good call is fine.
  EXPECT_EQ(Update(m.get(), {"a:1", "c:1"}, 100), kRing | kDraining);
}

TEST(MembershipValidation, TickAndAccessors) {
  Membership m = Make(1000, 0);
  ap_error err;
  unsigned changes = 5;
  EXPECT_EQ(ap_membership_tick(nullptr, 0, &changes, &err), AP_EINVAL);
  EXPECT_EQ(changes, 0u);
  EXPECT_TRUE(Mentions(err, "membership")) << err.message;
  EXPECT_EQ(Tick(m.get(), 50), 0u);  // empty: nothing due
  EXPECT_EQ(ap_membership_tick(m.get(), 49, &changes, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "before the previous")) << err.message;
  EXPECT_EQ(ap_membership_tick(m.get(), AP_MEMBERSHIP_MAX_TIME_MS + 1,
                               &changes, &err),
            AP_EINVAL);
  EXPECT_EQ(ap_membership_tick(m.get(), 60, nullptr, nullptr), AP_OK);

  ASSERT_EQ(Update(m.get(), {"a:1"}, 100), kRing);
  ap_membership_entry e;
  EXPECT_EQ(ap_membership_get(nullptr, 0, &e, &err), AP_EINVAL);
  EXPECT_EQ(ap_membership_get(m.get(), 0, nullptr, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "entry")) << err.message;
  EXPECT_EQ(ap_membership_get(m.get(), 1, &e, &err), AP_ERANGE);
  EXPECT_TRUE(Mentions(err, "index 1")) << err.message;
  size_t index;
  EXPECT_EQ(ap_membership_find(nullptr, "a:1", &index, &err), AP_EINVAL);
  EXPECT_EQ(ap_membership_find(m.get(), nullptr, &index, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "address")) << err.message;
  EXPECT_EQ(ap_membership_find(m.get(), "a:1", nullptr, &err), AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "index")) << err.message;
  EXPECT_EQ(ap_membership_count(nullptr), 0u);
  EXPECT_EQ(ap_membership_draining_count(nullptr), 0u);
  EXPECT_EQ(ap_membership_has_held(nullptr), 0);
  EXPECT_EQ(ap_membership_ring_version(nullptr), 0u);
  EXPECT_EQ(ap_membership_next_deadline(nullptr), AP_MEMBERSHIP_NO_DEADLINE);
}

}  // namespace

namespace {

std::vector<std::string> Numbered(const std::string &prefix, size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

// A list swap within the removal grace: the old members drain while the new
// ones join. Together they must stay within what a ring holds
// (AP_MAX_ENDPOINTS), or the channel's rebuild fails.
TEST(MembershipDrainingCap, LargeListSwapStaysWithinTheRingLimit) {
  Membership m = Make(60000, 0);
  const size_t n = 600000;
  Update(m.get(), Numbered("10.1.", n), 0);
  ASSERT_EQ(ap_membership_count(m.get()), n);
  unsigned changes = Update(m.get(), Numbered("10.2.", n), 10);
  EXPECT_NE(changes & AP_MEMBERSHIP_RING_CHANGED, 0u);
  EXPECT_LE(ap_membership_count(m.get()), AP_MAX_ENDPOINTS);
  EXPECT_EQ(ap_membership_count(m.get()), AP_MAX_ENDPOINTS);
  EXPECT_EQ(ap_membership_draining_count(m.get()), AP_MAX_ENDPOINTS - n);
}

// The rule with a small bound: the draining members that would leave first
// (earliest deadline, then address order) leave now; live ones stay.
TEST(MembershipDrainingCap, EarliestDeadlinesLeaveFirst) {
  ap_membership_params params;
  ap_membership_params_init(&params);
  params.removal_grace_ms = 1000;
  params.max_members = 6;
  ap_membership *raw = nullptr;
  ap_error err;
  ASSERT_EQ(ap_membership_create(&params, &raw, &err), AP_OK) << err.message;
  Membership m(raw);
  Update(m.get(), {"a", "b", "c"}, 0);
  Update(m.get(), {"c"}, 100);                // a, b drain until 1100
  Update(m.get(), {"d", "e"}, 200);           // c drains until 1200
  EXPECT_EQ(ap_membership_count(m.get()), 5u);
  EXPECT_EQ(ap_membership_draining_count(m.get()), 3u);
  Update(m.get(), {"d", "e", "f", "g"}, 300);  // 4 live + 3 draining > 6
  EXPECT_EQ(ap_membership_count(m.get()), 6u);
  EXPECT_EQ(ap_membership_draining_count(m.get()), 2u);
  size_t index = 0;
  EXPECT_NE(ap_membership_find(m.get(), "a", &index, nullptr), AP_OK);  // left first
  EXPECT_EQ(ap_membership_find(m.get(), "b", &index, nullptr), AP_OK);
  EXPECT_EQ(ap_membership_find(m.get(), "c", &index, nullptr), AP_OK);
  Update(m.get(), {"d", "e", "f", "g", "h", "i", "j"}, 400);  // live alone > 6
  EXPECT_EQ(ap_membership_count(m.get()), 7u);
  EXPECT_EQ(ap_membership_draining_count(m.get()), 0u);

  params.max_members = AP_MAX_ENDPOINTS + 1;
  EXPECT_EQ(ap_membership_create(&params, &raw, &err), AP_ERANGE);
  EXPECT_NE(std::string(err.message).find("max_members"), std::string::npos);
}

}  // namespace
