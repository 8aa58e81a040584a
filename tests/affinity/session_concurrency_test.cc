// The session table from several threads at once. Run under
// --config=tsan and --config=asan to check the locking and ownership; the
// assertions check what concurrency must not break: concurrent first calls
// with one key agree on one endpoint, and the size never passes the cap.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "policy/affinity/ap_session_table.h"
#include "policy/affinity/ap_session_table_testing.h"
}

namespace {

constexpr int kThreads = 4;

// Spins until every thread arrived, so the threads really overlap.
class StartLine {
 public:
  explicit StartLine(int n) : waiting_(n) {}
  void Arrive() {
    waiting_.fetch_sub(1);
    while (waiting_.load() > 0) std::this_thread::yield();
  }

 private:
  std::atomic<int> waiting_;
};

// Per-thread chooser: every remembered endpoint is usable; a new key is
// placed on this thread's own address, so a disagreement would show.
struct ThreadChooser {
  std::string mine;
  std::string chosen;
  static int Usable(void* ctx, const char* address) {
    static_cast<ThreadChooser*>(ctx)->chosen = address;
    return 1;
  }
  static const char* Place(void* ctx) {
    auto* c = static_cast<ThreadChooser*>(ctx);
    c->chosen = c->mine;
    return c->mine.c_str();
  }
};

TEST(SessionConcurrency, ConcurrentFirstCallsAgreeOnOneEndpoint) {
  const int keys = 2000;
  ap_session_table* t = nullptr;
  ap_error err;
  // Room for 4x the keys: each of the 16 shards holds 500 and receives
  // about 125 (sd ~11), so nothing is evicted and every key stays placed.
  ASSERT_EQ(ap_session_table_create(4 * keys, 0, &t, &err), AP_OK)
      << err.message;
  std::vector<std::vector<std::string>> seen(kThreads,
                                             std::vector<std::string>(keys));
  std::vector<int> failures(kThreads, 0);
  std::atomic<int> placed{0};
  StartLine start(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; th++) {
    threads.emplace_back([&, th] {
      ThreadChooser chooser{"10.0.0." + std::to_string(th) + ":80", ""};
      ap_session_chooser ch = {&ThreadChooser::Usable, &ThreadChooser::Place,
                               &chooser};
      start.Arrive();
      for (int k = 0; k < keys; k++) {
        std::string key = "user-" + std::to_string(k);
        ap_session_outcome out;
        if (ap_session_table_route(t, key.data(), key.size(), 0, &ch, &out,
                                   nullptr) != AP_OK) {
          failures[th]++;
          continue;
        }
        if (out == AP_SESSION_PLACED) placed.fetch_add(1);
        seen[th][k] = chooser.chosen;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int th = 0; th < kThreads; th++) EXPECT_EQ(failures[th], 0);
  // Each key was placed exactly once; every thread got that placement.
  EXPECT_EQ(placed.load(), keys);
  int disagreements = 0;
  for (int k = 0; k < keys; k++)
    for (int th = 1; th < kThreads; th++)
      if (seen[th][k] != seen[0][k]) disagreements++;
  EXPECT_EQ(disagreements, 0);
  EXPECT_EQ(ap_session_table_size(t), static_cast<size_t>(keys));
  ap_session_table_destroy(t);
}

TEST(SessionConcurrency, MixedChurnStaysWithinTheCap) {
  const size_t cap = 256;
  const int ops = 30000;
  ap_session_table* t = nullptr;
  ASSERT_EQ(ap_session_table_create(cap, 50, &t, nullptr), AP_OK);
  std::atomic<size_t> max_size{0};
  std::atomic<int> errors{0};
  std::atomic<uint64_t> clock_ms{0};
  StartLine start(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; th++) {
    threads.emplace_back([&, th] {
      ThreadChooser chooser{"10.0.1." + std::to_string(th) + ":80", ""};
      ap_session_chooser ch = {&ThreadChooser::Usable, &ThreadChooser::Place,
                               &chooser};
      char buf[AP_SESSION_MAX_ADDRESS_LEN + 1];
      start.Arrive();
      for (int i = 0; i < ops; i++) {
        uint64_t now = clock_ms.fetch_add(1) / 64;  // a shared logical clock
        // Half the keys are shared by all threads, half are unique floods.
        std::string key = (i % 2 == 0)
                              ? "shared-" + std::to_string(i % 512)
                              : "t" + std::to_string(th) + "-" +
                                    std::to_string(i);
        int rc = AP_OK;
        int found = 0;
        switch (i % 7) {
          case 0:
            rc = ap_session_table_put(t, key.data(), key.size(),
                                      chooser.mine.c_str(), now, nullptr);
            break;
          case 1:
            rc = ap_session_table_get(t, key.data(), key.size(), now, buf,
                                      sizeof buf, &found, nullptr);
            break;
          case 2:
            rc = ap_session_table_remove(t, key.data(), key.size(), nullptr,
                                         nullptr);
            break;
          case 3:
            if (th == 0 && i % 1000 == 3)
              rc = ap_session_table_expire(t, now, nullptr, nullptr);
            break;
          default:
            rc = ap_session_table_route(t, key.data(), key.size(), now, &ch,
                                        nullptr, nullptr);
        }
        if (rc != AP_OK) errors.fetch_add(1);
        size_t s = ap_session_table_size(t);
        size_t m = max_size.load();
        while (s > m && !max_size.compare_exchange_weak(m, s)) {
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  // The counter is updated under each shard's lock, one entry at a time,
  // and a shard is never over its share, so the sum never passes the cap.
  EXPECT_LE(max_size.load(), cap);
  EXPECT_LE(ap_session_table_size(t), cap);
  EXPECT_GT(ap_session_table_evictions(t), 0u);
  ap_session_table_destroy(t);
}

}  // namespace
