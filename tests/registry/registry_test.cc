// Tests of the instance registry: real callbacks that deep-copy a fake
// instance's published state, as the LB policy's callback does.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "policy/registry/ap_registry.h"
}

namespace {

struct Instance {
  std::string target;
  uint32_t endpoints = 0;
  int fail_with = AP_OK;
  std::atomic<int> calls{0};
};

char *dup(const std::string &s) { return strdup(s.c_str()); }

// Deep copy of the instance's state: endpoint i has address "10.0.0.i:443"
// and ring index i, so a reader can check that a snapshot is whole.
int SnapshotInstance(void *ctx, ap_ring_state *out) {
  Instance *in = static_cast<Instance *>(ctx);
  in->calls.fetch_add(1);
  if (in->fail_with != AP_OK) {
    out->target = dup("partial");  // must be freed by the registry
    return in->fail_with;
  }
  out->target = dup(in->target);
  out->mode = dup("continuous");
  out->coordinate_source = AP_COORDINATE_API;
  out->last_status = dup("");
  out->peer_index = 1;
  out->peer_count = 3;
  snprintf(out->fingerprint, sizeof out->fingerprint, "%016x", in->endpoints);
  out->endpoint_count = in->endpoints;
  if (in->endpoints > 0) {
    out->endpoints = static_cast<ap_endpoint_state *>(
        calloc(in->endpoints, sizeof(ap_endpoint_state)));
    for (uint32_t i = 0; i < in->endpoints; i++) {
      char addr[32];
      snprintf(addr, sizeof addr, "10.0.0.%u:443", i);
      out->endpoints[i].address = strdup(addr);
      out->endpoints[i].ring_index = i;
      out->endpoints[i].connectivity = AP_CONN_READY;
    }
  }
  return AP_OK;
}

std::vector<std::string> Targets(const char *filter) {
  ap_ring_state *states = nullptr;
  size_t count = 0;
  ap_error err;
  EXPECT_EQ(ap_registry_snapshot(filter, &states, &count, &err), AP_OK) << err.message;
  std::vector<std::string> out;
  for (size_t i = 0; i < count; i++) out.push_back(states[i].target);
  ap_ring_states_free(states, count);
  return out;
}

TEST(Registry, EmptySnapshotIsNullAndZero) {
  ap_ring_state *states = reinterpret_cast<ap_ring_state *>(0x1);
  size_t count = 7;
  ASSERT_EQ(ap_registry_snapshot(nullptr, &states, &count, nullptr), AP_OK);
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
  ASSERT_EQ(ap_registry_snapshot("", &states, &count, &err), AP_OK);
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
  EXPECT_EQ(ap_registry_snapshot(nullptr, &states, &count, &err), AP_ENOMEM);
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
  EXPECT_EQ(ap_registry_snapshot(nullptr, nullptr, &count, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("states"), std::string::npos);
  ap_ring_state *states;
  EXPECT_EQ(ap_registry_snapshot(nullptr, &states, nullptr, &err), AP_EINVAL);
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
        if (ap_registry_snapshot(r % 2 ? "churn-1" : nullptr, &states, &count, nullptr) != AP_OK) {
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
          for (size_t k = 0; k < s.endpoint_count; k++)
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

}  // namespace
