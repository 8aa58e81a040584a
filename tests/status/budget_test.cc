// ap_status_budget: reservations fit beside what is held or are refused,
// releases give bytes back, and under threads racing reservations the
// bytes held never pass the limit.
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "policy/status/ap_status_budget.h"
}

namespace {

TEST(Budget, ReservesWhatFitsAndGivesItBack) {
  ap_status_budget b;
  ap_status_budget_init(&b, 1000);
  EXPECT_EQ(ap_status_budget_held(&b), 0u);
  EXPECT_EQ(ap_status_budget_reserve(&b, 600), 1);
  EXPECT_EQ(ap_status_budget_reserve(&b, 401), 0);  // 1001 > 1000
  EXPECT_EQ(ap_status_budget_held(&b), 600u);
  EXPECT_EQ(ap_status_budget_reserve(&b, 400), 1);  // exactly the limit
  EXPECT_EQ(ap_status_budget_reserve(&b, 1), 0);
  ap_status_budget_release(&b, 1000);
  EXPECT_EQ(ap_status_budget_held(&b), 0u);
  EXPECT_EQ(ap_status_budget_reserve(&b, 1001), 0);  // more than the whole
  EXPECT_EQ(ap_status_budget_reserve(&b, SIZE_MAX), 0);
  ap_status_budget_release(&b, 5);  // more than held: back to 0, no wrap
  EXPECT_EQ(ap_status_budget_held(&b), 0u);
  EXPECT_EQ(ap_status_budget_reserve(nullptr, 1), 0);
  EXPECT_EQ(ap_status_budget_held(nullptr), 0u);
  ap_status_budget_release(nullptr, 1);
  ap_status_budget_init(nullptr, 1);
}

TEST(Budget, RacingThreadsNeverHoldMoreThanTheLimit) {
  ap_status_budget b;
  ap_status_budget_init(&b, 10000);
  std::atomic<bool> over{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&b, &over, t] {
      for (int i = 0; i < 20000; ++i) {
        const size_t n = 1000 + static_cast<size_t>((i * 7 + t * 13) % 3000);
        if (ap_status_budget_reserve(&b, n)) {
          if (ap_status_budget_held(&b) > 10000) over = true;
          ap_status_budget_release(&b, n);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(over.load());
  EXPECT_EQ(ap_status_budget_held(&b), 0u);
}

}  // namespace
