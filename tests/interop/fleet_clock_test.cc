// The scenarios' bounded poll (fleet_clock): how many polls it takes, that
// a failed poll restarts the streak, and that it gives up.
#include <gtest/gtest.h>

#include "interop/fleet/fleet_clock.h"

namespace {

// Answers from a script, one value per poll; 0 once the script runs out.
struct Script {
  const int *answers;
  int n;
  int polls;
};

int Next(void *ctx) {
  Script *s = static_cast<Script *>(ctx);
  int v = s->polls < s->n ? s->answers[s->polls] : 0;
  s->polls++;
  return v;
}

TEST(FleetClockTest, ReturnsOnceTheCheckHoldsTheGivenPollsInARow) {
  const int answers[] = {1, 0, 1, 1, 1};
  Script s = {answers, 5, 0};
  EXPECT_EQ(io_fleet_wait_steady(Next, &s, 2, 60000, 1), 1);
  EXPECT_EQ(s.polls, 4);  // the 0 at poll 2 restarted the streak
}

TEST(FleetClockTest, OnePollInARowReturnsAtTheFirstSuccess) {
  const int answers[] = {0, 0, 1};
  Script s = {answers, 3, 0};
  EXPECT_EQ(io_fleet_wait_steady(Next, &s, 1, 60000, 1), 1);
  EXPECT_EQ(s.polls, 3);
}

TEST(FleetClockTest, GivesUpWhenTheCheckNeverHolds) {
  Script s = {nullptr, 0, 0};
  EXPECT_EQ(io_fleet_wait_steady(Next, &s, 2, 30, 1), 0);
}

TEST(FleetClockTest, RejectsAMissingCheckOrStreak) {
  Script s = {nullptr, 0, 0};
  EXPECT_EQ(io_fleet_wait_steady(nullptr, &s, 2, 30, 1), -1);
  EXPECT_EQ(io_fleet_wait_steady(Next, &s, 0, 30, 1), -1);
  EXPECT_EQ(s.polls, 0);
}

}  // namespace
