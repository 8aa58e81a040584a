// ap_ring: arcs, weights, point lookup and window overlap.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/ring/ap_ring.h"
#include "policy/core/ring/ap_ring_testing.h"
#include "tests/core/test_util.h"

namespace {

using aptest::MakeRing;

TEST(Ring, EqualArcsStartAtIOverN) {
  auto ring = MakeRing(10);
  ASSERT_EQ(ap_ring_size(ring.get()), 10u);
  double total = 0;
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(ap_ring_arc_start(ring.get(), i), (double)i / 10.0);
    EXPECT_NEAR(ap_ring_arc_width(ring.get(), i), 0.1, 1e-15);
    EXPECT_EQ(ap_ring_weight(ring.get(), i), 1.0);
    total += ap_ring_arc_width(ring.get(), i);
  }
  EXPECT_NEAR(total, 1.0, 1e-15);
  EXPECT_EQ(ap_ring_arc_width(ring.get(), 10), 0.0);
  EXPECT_EQ(ap_ring_arc_start(ring.get(), 10), 0.0);
  EXPECT_EQ(ap_ring_weight(ring.get(), 10), 0.0);
}

TEST(Ring, WeightedArcsAreProportional) {
  auto ring = MakeRing(4, {1, 2, 3, 4});
  EXPECT_EQ(ap_ring_arc_start(ring.get(), 0), 0.0);
  EXPECT_NEAR(ap_ring_arc_start(ring.get(), 1), 0.1, 1e-15);
  EXPECT_NEAR(ap_ring_arc_start(ring.get(), 2), 0.3, 1e-15);
  EXPECT_NEAR(ap_ring_arc_start(ring.get(), 3), 0.6, 1e-15);
  EXPECT_NEAR(ap_ring_arc_width(ring.get(), 3), 0.4, 1e-15);
  EXPECT_EQ(ap_ring_weight(ring.get(), 2), 3.0);
}

TEST(Ring, OneEndpointOwnsEverything) {
  auto ring = MakeRing(1);
  EXPECT_EQ(ap_ring_arc_width(ring.get(), 0), 1.0);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.999), 0u);
  EXPECT_EQ(ap_ring_overlap(ring.get(), 0, 0.3, 0.5), 0.5);
}

TEST(Ring, IndexAtBoundariesAndModulo) {
  auto ring = MakeRing(10);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.0), 0u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.1), 1u);  // boundary belongs right
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.3), 3u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.29999999), 2u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.99999), 9u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 1.0), 0u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 1.35), 3u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), -0.05), 9u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), NAN), 0u);
}

TEST(Ring, IndexAtAgreesWithArcsForCoordinates) {
  // p / C that equals i / N as a rational must land exactly on arc i.
  for (size_t n : {3, 7, 10, 12, 1000}) {
    auto ring = MakeRing(n);
    for (size_t c : {2, 3, 5, 6, 30, 300}) {
      for (size_t p = 0; p < c; ++p) {
        const double x = (double)p / (double)c;
        const size_t i = ap_ring_index_at(ring.get(), x);
        ASSERT_LT(i, n);
        EXPECT_LE(ap_ring_arc_start(ring.get(), i), x);
        EXPECT_LT(x, i + 1 < n ? ap_ring_arc_start(ring.get(), i + 1) : 1.0);
        if ((p * n) % c == 0) {
          EXPECT_EQ(i, p * n / c);
        }
      }
    }
  }
}

TEST(Ring, IndexAtWeighted) {
  auto ring = MakeRing(4, {1, 2, 3, 4});
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.05), 0u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.25), 1u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.5), 2u);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.61), 3u);
}

TEST(Ring, OverlapPartialFullAndWrapping) {
  auto ring = MakeRing(10);
  // [0.25, 0.75): arc 2 half, arc 5 full, arc 7 half, arc 8 none.
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 2, 0.25, 0.5), 0.05, 1e-15);
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 5, 0.25, 0.5), 0.1, 1e-15);
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 7, 0.25, 0.5), 0.05, 1e-15);
  EXPECT_EQ(ap_ring_overlap(ring.get(), 8, 0.25, 0.5), 0.0);
  // [0.85, 1.15): arc 8 half, arc 9 full, arc 0 full, arc 1 half.
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 8, 0.85, 0.3), 0.05, 1e-15);
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 9, 0.85, 0.3), 0.1, 1e-15);
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 0, 0.85, 0.3), 0.1, 1e-15);
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 1, 0.85, 0.3), 0.05, 1e-15);
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 2, 0.85, 0.3), 0.0, 1e-15);
  // A window wrapping back into its own start arc counts both pieces.
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 5, 0.55, 0.99), 0.09, 1e-15);
  // Full width: the whole arc.
  EXPECT_NEAR(ap_ring_overlap(ring.get(), 3, 0.37, 1.0), 0.1, 1e-15);
  // Invalid inputs give 0.
  EXPECT_EQ(ap_ring_overlap(ring.get(), 11, 0.0, 0.5), 0.0);
  EXPECT_EQ(ap_ring_overlap(ring.get(), 1, 0.0, 0.0), 0.0);
  EXPECT_EQ(ap_ring_overlap(ring.get(), 1, NAN, 0.5), 0.0);
  EXPECT_EQ(ap_ring_overlap(nullptr, 1, 0.0, 0.5), 0.0);
}

TEST(Ring, OverlapsOfAnyWindowSumToItsWidth) {
  auto ring = MakeRing(7, {1, 0.5, 2, 2, 3, 0.25, 1});
  for (double offset : {0.0, 0.13, 0.5, 0.77, 0.9999}) {
    for (double width : {0.01, 0.3, 0.5, 0.95, 1.0}) {
      double sum = 0;
      for (size_t i = 0; i < 7; ++i) {
        sum += ap_ring_overlap(ring.get(), i, offset, width);
      }
      EXPECT_NEAR(sum, width, 1e-14) << offset << " " << width;
    }
  }
}

TEST(Ring, LargeRing) {
  auto ring = MakeRing(100000);
  EXPECT_EQ(ap_ring_index_at(ring.get(), 0.5), 50000u);
  EXPECT_NEAR(ap_ring_arc_width(ring.get(), 99999), 1e-5, 1e-15);
}

TEST(Ring, NullAccessorsAreSafe) {
  EXPECT_EQ(ap_ring_size(nullptr), 0u);
  EXPECT_EQ(ap_ring_arc_start(nullptr, 0), 0.0);
  EXPECT_EQ(ap_ring_arc_width(nullptr, 0), 0.0);
  EXPECT_EQ(ap_ring_weight(nullptr, 0), 0.0);
  EXPECT_EQ(ap_ring_index_at(nullptr, 0.5), 0u);
  ap_ring_destroy(nullptr);
}

}  // namespace
