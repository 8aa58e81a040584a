#include <gtest/gtest.h>
TEST(Smoke, Works) { EXPECT_EQ(1, 1); }
