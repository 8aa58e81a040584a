// Tests of the instance registry: real callbacks that deep-copy a fake
// instance's published state, as the LB policy's callback does.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <memory>

#include <gtest/gtest.h>

extern "C" {
#include "policy/registry/ap_registry.h"
#include "policy/registry/ap_registry_testing.h"
}

namespace {

struct Instance {
  std::string target;
  uint32_t endpoints = 0;
  int fail_with = AP_OK;
  bool ignore_query = false;  // copy everything, as a careless callback would
  std::atomic<int> calls{0};
  // What the last call was asked for and copied.
  std::mutex mu;
  std::string seen_filter;
  size_t seen_start = 0, seen_max = 0, copied = 0;
  // When set, the callback blocks until `released` (signalling `entered`).
  bool block = false;
  bool entered = false, released = false, in_callback = false;
  std::condition_variable cv;
};

char *dup(const std::string &s) { return strdup(s.c_str()); }

// Deep copy of the instance's state: endpoint i has address "10.0.0.i:443"
// and ring index i, so a reader can check that a snapshot is whole. Only the
// page the query asks for is copied, as the LB policy's callback does.
int SnapshotInstance(void *ctx, ap_ring_state *out) {
  Instance *in = static_cast<Instance *>(ctx);
  in->calls.fetch_add(1);
  {
    std::unique_lock<std::mutex> lock(in->mu);
    in->in_callback = true;
    const ap_snapshot_query *q = out->query;
    in->seen_filter = q != nullptr && q->target_filter != nullptr ? q->target_filter : "(none)";
    in->seen_start = q != nullptr ? q->start_index : 0;
    in->seen_max = q != nullptr ? q->max_endpoints : 0;
    in->copied = 0;
    if (in->block) {
      in->entered = true;
      in->cv.notify_all();
      in->cv.wait(lock, [in] { return in->released; });
    }
  }
  struct Leave {
    Instance *in;
    ~Leave() {
      std::lock_guard<std::mutex> lock(in->mu);
      in->in_callback = false;
    }
  } leave{in};
  if (in->fail_with != AP_OK) {
    out->target = dup("partial");  // must be freed by the registry
    return in->fail_with;
  }
  if (!in->ignore_query && !ap_snapshot_query_matches(out->query, in->target.c_str()))
    return AP_SNAPSHOT_SKIP;
  out->target = dup(in->target);
  out->mode = dup("continuous");
  out->coordinate_source = AP_COORDINATE_API;
  out->last_status = dup("");
  out->peer_index = 1;
  out->peer_count = 3;
  snprintf(out->fingerprint, sizeof out->fingerprint, "%016x", in->endpoints);
  out->endpoint_count = in->endpoints;
  size_t first = 0, count = in->endpoints;
  if (!in->ignore_query) ap_snapshot_query_page(out->query, in->endpoints, &first, &count);
  out->first_endpoint = first;
  if (count > 0) {
    out->endpoints = ap_endpoint_states_alloc(count);
    out->copied_endpoints = count;
    for (size_t k = 0; k < count; k++) {
      char addr[32];
      snprintf(addr, sizeof addr, "10.0.0.%zu:443", first + k);
      out->endpoints[k].address = strdup(addr);
      out->endpoints[k].ring_index = static_cast<uint32_t>(first + k);
      out->endpoints[k].connectivity = AP_CONN_READY;
    }
  }
  std::lock_guard<std::mutex> lock(in->mu);
  in->copied = count;
  return AP_OK;
}

// Waits (bounded) until `pred` holds under the instance's mutex.
template <typename Pred>
bool WaitFor(Instance &in, Pred pred) {
  std::unique_lock<std::mutex> lock(in.mu);
  return in.cv.wait_for(lock, std::chrono::seconds(30), pred);
}

void Release(Instance &in) {
  std::lock_guard<std::mutex> lock(in.mu);
  in.released = true;
  in.cv.notify_all();
}

int SnapshotFiltered(const char *filter, ap_ring_state **states, size_t *count, ap_error *err) {
  ap_snapshot_query q = {filter, 0, SIZE_MAX};
  return ap_registry_snapshot(&q, SIZE_MAX, states, count, err);
}

std::vector<std::string> Targets(const char *filter) {
  ap_ring_state *states = nullptr;
  size_t count = 0;
  ap_error err;
  EXPECT_EQ(SnapshotFiltered(filter, &states, &count, &err), AP_OK) << err.message;
  std::vector<std::string> out;
  for (size_t i = 0; i < count; i++) out.push_back(states[i].target);
  ap_ring_states_free(states, count);
  return out;
}

TEST(Registry, EmptySnapshotIsNullAndZero) {
  ap_ring_state *states = reinterpret_cast<ap_ring_state *>(0x1);
  size_t count = 7;
  ASSERT_EQ(ap_registry_snapshot(nullptr, 0, &states, &count, nullptr), AP_OK);
  EXPECT_EQ(states, nullptr);
  EXPECT_EQ(count, 0u);
}

TEST(Registry, AddSnapshotRemoveInInsertionOrder) {
  Instance a, b;
  a.target = "dns:///alpha.svc:443";
  a.endpoints = 3;
  b.target = "dns:///beta.svc:443";
  b.endpoints = 0;
  ap_registry_entry *ea = nullptr, *eb = nullptr;
  ap_error err;
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &a, &ea, &err), AP_OK);
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &b, &eb, &err), AP_OK);
  ASSERT_NE(ea, nullptr);

  ap_ring_state *states = nullptr;
  size_t count = 0;
  ASSERT_EQ(SnapshotFiltered("", &states, &count, &err), AP_OK);
  ASSERT_EQ(count, 2u);
  EXPECT_STREQ(states[0].target, "dns:///alpha.svc:443");
  EXPECT_STREQ(states[0].mode, "continuous");
  EXPECT_EQ(states[0].peer_count, 3u);
  ASSERT_EQ(states[0].endpoint_count, 3u);
  EXPECT_STREQ(states[0].endpoints[2].address, "10.0.0.2:443");
  EXPECT_EQ(states[0].endpoints[2].ring_index, 2u);
  EXPECT_STREQ(states[1].target, "dns:///beta.svc:443");
  EXPECT_EQ(states[1].endpoint_count, 0u);
  EXPECT_EQ(states[1].endpoints, nullptr);
  ap_ring_states_free(states, count);

  ap_registry_remove(ea);
  EXPECT_EQ(Targets(nullptr), std::vector<std::string>{"dns:///beta.svc:443"});
  ap_registry_remove(eb);
  EXPECT_TRUE(Targets(nullptr).empty());
}

TEST(Registry, FilterIsSubstringOfTarget) {
  Instance a, b, c;
  a.target = "dns:///alpha.svc:443";
  b.target = "dns:///beta.svc:443";
  c.target = "ipv4:127.0.0.1:50051";
  ap_registry_entry *ea, *eb, *ec;
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &a, &ea, nullptr), AP_OK);
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &b, &eb, nullptr), AP_OK);
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &c, &ec, nullptr), AP_OK);
  EXPECT_EQ(Targets("svc"), (std::vector<std::string>{a.target, b.target}));
  EXPECT_EQ(Targets("beta"), std::vector<std::string>{b.target});
  EXPECT_EQ(Targets("127.0.0.1"), std::vector<std::string>{c.target});
  EXPECT_TRUE(Targets("gamma").empty());
  EXPECT_EQ(Targets("").size(), 3u);
  ap_registry_remove(ea);
  ap_registry_remove(eb);
  ap_registry_remove(ec);
}

TEST(Registry, NoCallbackAfterRemove) {
  Instance a;
  a.target = "t";
  ap_registry_entry *e;
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &a, &e, nullptr), AP_OK);
  Targets(nullptr);
  EXPECT_EQ(a.calls.load(), 1);
  ap_registry_remove(e);
  Targets(nullptr);
  Targets("t");
  EXPECT_EQ(a.calls.load(), 1);
}

TEST(Registry, FailingCallbackIsLeftOutOthersStay) {
  Instance good, bad;
  good.target = "good";
  bad.target = "bad";
  bad.fail_with = AP_EINTERNAL;
  ap_registry_entry *eg, *eb;
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &good, &eg, nullptr), AP_OK);
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &bad, &eb, nullptr), AP_OK);
  EXPECT_EQ(Targets(nullptr), std::vector<std::string>{"good"});
  bad.fail_with = AP_ENOMEM;
  ap_ring_state *states = nullptr;
  size_t count = 5;
  ap_error err;
  EXPECT_EQ(ap_registry_snapshot(nullptr, 0, &states, &count, &err), AP_ENOMEM);
  EXPECT_EQ(err.code, AP_ENOMEM);
  EXPECT_NE(std::string(err.message).find("memory"), std::string::npos);
  EXPECT_EQ(states, nullptr);
  EXPECT_EQ(count, 0u);
  ap_registry_remove(eg);
  ap_registry_remove(eb);
}

TEST(Registry, InvalidArgumentsAreReportedNotFatal) {
  ap_error err;
  ap_registry_entry *e = reinterpret_cast<ap_registry_entry *>(0x1);
  EXPECT_EQ(ap_registry_add(nullptr, nullptr, &e, &err), AP_EINVAL);
  EXPECT_EQ(e, nullptr);
  EXPECT_NE(std::string(err.message).find("fn"), std::string::npos);
  EXPECT_EQ(ap_registry_add(SnapshotInstance, nullptr, nullptr, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("out"), std::string::npos);
  size_t count;
  EXPECT_EQ(ap_registry_snapshot(nullptr, 0, nullptr, &count, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("states"), std::string::npos);
  ap_ring_state *states;
  EXPECT_EQ(ap_registry_snapshot(nullptr, 0, &states, nullptr, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("count"), std::string::npos);
  ap_registry_remove(nullptr);
  ap_ring_state_clear(nullptr);
  ap_ring_states_free(nullptr, 3);
}

TEST(Registry, ConnectivityNames) {
  EXPECT_STREQ(ap_connectivity_name(AP_CONN_IDLE), "idle");
  EXPECT_STREQ(ap_connectivity_name(AP_CONN_CONNECTING), "connecting");
  EXPECT_STREQ(ap_connectivity_name(AP_CONN_READY), "ready");
  EXPECT_STREQ(ap_connectivity_name(AP_CONN_TRANSIENT_FAILURE), "transient_failure");
  EXPECT_STREQ(ap_connectivity_name(AP_CONN_SHUTDOWN), "shutdown");
  EXPECT_STREQ(ap_connectivity_name(-1), "unknown");
  EXPECT_STREQ(ap_connectivity_name(5), "unknown");
}

// Several threads add and remove their own instances while others take
// snapshots; every snapshot must contain whole, self-consistent states and
// only instances that are live. Bounded by iteration count.
TEST(Registry, ConcurrentAddRemoveSnapshot) {
  constexpr int kChurners = 3, kReaders = 2, kRounds = 400;
  std::atomic<bool> bad{false};
  std::atomic<long> seen{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kChurners; t++) {
    threads.emplace_back([t, &bad] {
      for (int r = 0; r < kRounds; r++) {
        Instance in;
        in.target = "churn-" + std::to_string(t) + "-" + std::to_string(r);
        in.endpoints = static_cast<uint32_t>(r % 17);
        ap_registry_entry *e = nullptr;
        if (ap_registry_add(SnapshotInstance, &in, &e, nullptr) != AP_OK) bad = true;
        std::this_thread::yield();
        ap_registry_remove(e);  // `in` dies right after: no callback may follow
      }
    });
  }
  for (int t = 0; t < kReaders; t++) {
    threads.emplace_back([&bad, &seen] {
      for (int r = 0; r < kRounds; r++) {
        ap_ring_state *states = nullptr;
        size_t count = 0;
        if (SnapshotFiltered(r % 2 ? "churn-1" : nullptr, &states, &count, nullptr) != AP_OK) {
          bad = true;
          continue;
        }
        for (size_t i = 0; i < count; i++) {
          const ap_ring_state &s = states[i];
          if (strncmp(s.target, "churn-", 6) != 0) bad = true;
          if (r % 2 && strstr(s.target, "churn-1") == nullptr) bad = true;
          char fp[17];
          snprintf(fp, sizeof fp, "%016zx", s.endpoint_count);
          if (strcmp(fp, s.fingerprint) != 0) bad = true;
          if (s.copied_endpoints != s.endpoint_count) bad = true;
          for (size_t k = 0; k < s.copied_endpoints; k++)
            if (s.endpoints[k].ring_index != k) bad = true;
        }
        seen += static_cast<long>(count);
        ap_ring_states_free(states, count);
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_FALSE(bad.load());
  EXPECT_TRUE(Targets(nullptr).empty());
}

// The filter and the page reach the callback, which copies only that page;
// an instance the filter leaves out copies nothing. The response budget
// shrinks the page of later instances.
TEST(Registry, CallbackGetsTheFilterAndCopiesOnlyThePage) {
  Instance a, b, c;
  a.target = "dns:///alpha.svc:443";
  a.endpoints = 100;
  b.target = "dns:///beta.svc:443";
  b.endpoints = 100;
  c.target = "dns:///alpha-2.svc:443";
  c.endpoints = 100;
  ap_registry_entry *ea, *eb, *ec;
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &a, &ea, nullptr), AP_OK);
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &b, &eb, nullptr), AP_OK);
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &c, &ec, nullptr), AP_OK);

  ap_snapshot_query q = {"alpha", 10, 30};
  ap_ring_state *states = nullptr;
  size_t count = 0;
  ap_error err;
  ASSERT_EQ(ap_registry_snapshot(&q, 45, &states, &count, &err), AP_OK) << err.message;
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(a.seen_filter, "alpha");
  EXPECT_EQ(a.seen_start, 10u);
  EXPECT_EQ(a.seen_max, 30u);
  EXPECT_EQ(a.copied, 30u);
  EXPECT_EQ(b.seen_filter, "alpha");
  EXPECT_EQ(b.copied, 0u);  // filtered out inside its callback
  EXPECT_EQ(c.seen_max, 15u);  // what is left of the budget of 45
  EXPECT_EQ(c.copied, 15u);

  EXPECT_STREQ(states[0].target, a.target.c_str());
  EXPECT_EQ(states[0].endpoint_count, 100u);
  EXPECT_EQ(states[0].first_endpoint, 10u);
  ASSERT_EQ(states[0].copied_endpoints, 30u);
  EXPECT_EQ(states[0].endpoints[0].ring_index, 10u);
  EXPECT_STREQ(states[0].endpoints[29].address, "10.0.0.39:443");
  EXPECT_EQ(states[0].query, nullptr);  // borrowed for the call only
  EXPECT_STREQ(states[1].target, c.target.c_str());
  EXPECT_EQ(states[1].copied_endpoints, 15u);
  ap_ring_states_free(states, count);

  // A start past the end copies nothing and says where the ring ends.
  ap_snapshot_query past = {"alpha.svc", 500, 30};
  ASSERT_EQ(ap_registry_snapshot(&past, 1000, &states, &count, nullptr), AP_OK);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(states[0].first_endpoint, 100u);
  EXPECT_EQ(states[0].copied_endpoints, 0u);
  EXPECT_EQ(states[0].endpoints, nullptr);
  ap_ring_states_free(states, count);
  ap_registry_remove(ea);
  ap_registry_remove(eb);
  ap_registry_remove(ec);
}

TEST(Registry, QueryPageArithmetic) {
  size_t first = 9, count = 9;
  ap_snapshot_query_page(nullptr, 7, &first, &count);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(count, 7u);
  ap_snapshot_query q = {nullptr, 5, 3};
  ap_snapshot_query_page(&q, 7, &first, &count);
  EXPECT_EQ(first, 5u);
  EXPECT_EQ(count, 2u);
  q.start_index = 8;
  ap_snapshot_query_page(&q, 7, &first, &count);
  EXPECT_EQ(first, 7u);
  EXPECT_EQ(count, 0u);
  ap_snapshot_query_page(&q, 7, nullptr, &count);  // ignored, no crash
  EXPECT_EQ(ap_snapshot_query_matches(nullptr, "x"), 1);
  q.target_filter = "";
  EXPECT_EQ(ap_snapshot_query_matches(&q, nullptr), 1);
  q.target_filter = "ab";
  EXPECT_EQ(ap_snapshot_query_matches(&q, "xaby"), 1);
  EXPECT_EQ(ap_snapshot_query_matches(&q, "xy"), 0);
  EXPECT_EQ(ap_snapshot_query_matches(&q, nullptr), 0);
}

// A callback that ignores the query cannot widen the response: the registry
// drops a target the filter excludes and frees endpoints past the page.
TEST(Registry, ACallbackThatIgnoresTheQueryIsTrimmed) {
  Instance a, b;
  a.target = "keep";
  a.endpoints = 50;
  a.ignore_query = true;
  b.target = "other";
  b.endpoints = 50;
  b.ignore_query = true;
  ap_registry_entry *ea, *eb;
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &a, &ea, nullptr), AP_OK);
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &b, &eb, nullptr), AP_OK);
  ap_snapshot_query q = {"keep", 0, 4};
  ap_ring_state *states = nullptr;
  size_t count = 0;
  ASSERT_EQ(ap_registry_snapshot(&q, 100, &states, &count, nullptr), AP_OK);
  ASSERT_EQ(count, 1u);
  EXPECT_STREQ(states[0].target, "keep");
  EXPECT_EQ(states[0].copied_endpoints, 4u);
  EXPECT_EQ(states[0].endpoint_count, 50u);
  ap_ring_states_free(states, count);  // LeakSanitizer checks the trimmed rest
  ap_registry_remove(ea);
  ap_registry_remove(eb);
}

// While one instance's callback is running (blocked here), other channels
// can still be created and shut down: adding and removing instances does not
// wait for the snapshot. An instance removed after the snapshot took its
// reference, but before its callback ran, is skipped and its memory stays
// valid until the snapshot lets go (AddressSanitizer checks that).
TEST(Registry, AddAndRemoveDoNotWaitForARunningSnapshot) {
  Instance slow;
  slow.target = "slow";
  slow.endpoints = 3;
  slow.block = true;
  auto later = std::make_unique<Instance>();
  later->target = "later";
  later->endpoints = 2;
  ap_registry_entry *e_slow, *e_later;
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &slow, &e_slow, nullptr), AP_OK);
  ASSERT_EQ(ap_registry_add(SnapshotInstance, later.get(), &e_later, nullptr), AP_OK);

  std::vector<std::string> seen;
  std::thread reader([&seen] { seen = Targets(nullptr); });
  ASSERT_TRUE(WaitFor(slow, [&slow] { return slow.entered; })) << "the snapshot never reached the callback";

  std::mutex mu;
  std::condition_variable cv;
  bool churned = false;
  std::thread churner([&] {
    Instance fresh;
    fresh.target = "fresh";
    ap_registry_entry *e_fresh = nullptr;
    ap_registry_add(SnapshotInstance, &fresh, &e_fresh, nullptr);
    ap_registry_remove(e_fresh);
    ap_registry_remove(e_later);  // held by the running snapshot
    std::lock_guard<std::mutex> lock(mu);
    churned = true;
    cv.notify_all();
  });
  bool done;
  {
    std::unique_lock<std::mutex> lock(mu);
    done = cv.wait_for(lock, std::chrono::seconds(30), [&] { return churned; });
  }
  EXPECT_TRUE(done) << "add/remove waited for a running snapshot callback";
  later.reset();  // the policy is gone; its entry must not be touched through it
  Release(slow);
  churner.join();
  reader.join();
  EXPECT_EQ(seen, std::vector<std::string>{"slow"});
  ap_registry_remove(e_slow);
  EXPECT_TRUE(Targets(nullptr).empty());
}

// Removing an instance whose callback is running returns only after the
// callback returned: the caller may free what the callback reads.
TEST(Registry, RemoveReturnsAfterItsOwnCallbackFinished) {
  Instance slow;
  slow.target = "slow";
  slow.block = true;
  ap_registry_entry *e;
  ASSERT_EQ(ap_registry_add(SnapshotInstance, &slow, &e, nullptr), AP_OK);
  std::thread reader([] { Targets(nullptr); });
  ASSERT_TRUE(WaitFor(slow, [&slow] { return slow.entered; }));
  std::atomic<bool> callback_running_after_remove{true};
  std::thread remover([&] {
    ap_registry_remove(e);
    std::lock_guard<std::mutex> lock(slow.mu);
    callback_running_after_remove = slow.in_callback;
  });
  Release(slow);
  remover.join();
  reader.join();
  EXPECT_FALSE(callback_running_after_remove.load());
  EXPECT_EQ(slow.calls.load(), 1);
}

}  // namespace
