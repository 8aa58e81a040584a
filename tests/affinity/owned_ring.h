// A consistent-hash ring built from std::strings, destroyed with its owner.
#ifndef APERTURE_TESTS_HASH_RING_OWNED_RING_H
#define APERTURE_TESTS_HASH_RING_OWNED_RING_H

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "policy/core/ap_error.h"
#include "policy/affinity/ap_hash_ring.h"

namespace hash_ring_test {

struct OwnedRing {
  ap_hash_ring* ring = nullptr;
  std::vector<std::string> names;
  // `weights` empty: every member weighs 1.
  OwnedRing(std::vector<std::string> n, const std::vector<double>& weights,
            uint32_t vnodes)
      : names(std::move(n)) {
    std::vector<const char*> ptrs;
    for (const auto& s : names) ptrs.push_back(s.c_str());
    ap_error err;
    int rc = ap_hash_ring_create(ptrs.data(),
                                 weights.empty() ? nullptr : weights.data(),
                                 ptrs.size(), vnodes, &ring, &err);
    EXPECT_EQ(rc, AP_OK) << err.message;
  }
  ~OwnedRing() { ap_hash_ring_destroy(ring); }
  OwnedRing(const OwnedRing&) = delete;
  OwnedRing& operator=(const OwnedRing&) = delete;
};

}  // namespace hash_ring_test

#endif  // APERTURE_TESTS_HASH_RING_OWNED_RING_H
