// ap_error, ap_number's integer parser, ap_hash, ap_rng and ap_vdc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/ap_error.h"
#include "policy/core/ap_error_testing.h"
#include "policy/core/ap_hash.h"
#include "policy/core/ap_number.h"
#include "policy/core/ap_rng.h"
#include "policy/core/ap_rng_testing.h"
#include "policy/core/ring/ap_vdc.h"

namespace {

TEST(Error, SetWritesCodeAndMessageAndReturnsCode) {
  ap_error err;
  EXPECT_EQ(ap_error_set(&err, AP_ERANGE, "n is %d", 7), AP_ERANGE);
  EXPECT_EQ(err.code, AP_ERANGE);
  EXPECT_STREQ(err.message, "n is 7");
  ap_error_clear(&err);
  EXPECT_EQ(err.code, AP_OK);
  EXPECT_STREQ(err.message, "");
}

TEST(Error, NullErrorIsAccepted) {
  EXPECT_EQ(ap_error_set(nullptr, AP_EINVAL, "x"), AP_EINVAL);
  ap_error_clear(nullptr);
}

TEST(Error, LongMessagesAreTruncatedAndTerminated) {
  ap_error err;
  std::string longer(1000, 'x');
  ap_error_set(&err, AP_EINVAL, "%s", longer.c_str());
  EXPECT_EQ(strlen(err.message), sizeof(err.message) - 1);
}

TEST(Error, StatusNames) {
  EXPECT_STREQ(ap_result_name(AP_OK), "OK");
  EXPECT_STREQ(ap_result_name(AP_EINVAL), "EINVAL");
  EXPECT_STREQ(ap_result_name(AP_ERANGE), "ERANGE");
  EXPECT_STREQ(ap_result_name(AP_ENOMEM), "ENOMEM");
  EXPECT_STREQ(ap_result_name(AP_ESTATE), "ESTATE");
  EXPECT_STREQ(ap_result_name(AP_EUNAVAIL), "EUNAVAIL");
  EXPECT_STREQ(ap_result_name(AP_EINTERNAL), "EINTERNAL");
  EXPECT_STREQ(ap_result_name(-99), "UNKNOWN");
}

// Digits only, the whole text, within [lo, hi]: every config integer, and
// the environment's and the addresses' numbers, go through it.
TEST(ParseUint, DigitsOnlyWithinTheRange) {
  uint64_t v = 7;
  ap_error err;
  EXPECT_EQ(ap_parse_uint("0", 0, 10, &v, &err), AP_OK);
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(ap_parse_uint("10", 0, 10, &v, &err), AP_OK);
  EXPECT_EQ(v, 10u);
  EXPECT_EQ(ap_parse_uint("0007", 1, 10, &v, nullptr), AP_OK);
  EXPECT_EQ(v, 7u);
  EXPECT_EQ(ap_parse_uint("18446744073709551615", 0, UINT64_MAX, &v, &err), AP_OK);
  EXPECT_EQ(v, UINT64_MAX);

  v = 42;
  for (const char* bad : {"", "-0", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "1,5", "a"}) {
    EXPECT_EQ(ap_parse_uint(bad, 0, 100, &v, &err), AP_EINVAL) << bad;
    EXPECT_EQ(std::string(err.message), std::string("must be an integer in [0, 100], got ") + bad);
  }
  EXPECT_EQ(ap_parse_uint("11", 0, 10, &v, &err), AP_ERANGE);
  EXPECT_STREQ(err.message, "must be an integer in [0, 10], got 11");
  EXPECT_EQ(ap_parse_uint("0", 1, 10, &v, &err), AP_ERANGE);
  EXPECT_STREQ(err.message, "must be an integer in [1, 10], got 0");
  EXPECT_EQ(ap_parse_uint("18446744073709551616", 0, UINT64_MAX, &v, &err), AP_ERANGE);
  EXPECT_EQ(ap_parse_uint("99999999999999999999999", 0, UINT64_MAX, &v, &err), AP_ERANGE);
  EXPECT_EQ(v, 42u);  // untouched by every failure

  EXPECT_EQ(ap_parse_uint(nullptr, 0, 1, &v, &err), AP_EINVAL);
  EXPECT_EQ(ap_parse_uint("1", 0, 1, nullptr, &err), AP_EINVAL);
  EXPECT_EQ(ap_parse_uint("1", 2, 1, &v, &err), AP_EINVAL);
}

TEST(Hash, StringAndBytesAgree) {
  EXPECT_EQ(ap_hash_str("10.0.0.1", 0), ap_hash64("10.0.0.1", 8, 0));
  EXPECT_EQ(ap_hash_str(nullptr, 5), ap_hash_str("", 5));
  EXPECT_EQ(ap_hash64(nullptr, 0, 5), ap_hash_str("", 5));
}

TEST(Hash, PinnedValuesSoEveryClientAgrees) {
  // Clients of different builds must order endpoints identically, so the
  // hash is part of the wire contract: these values must never change.
  EXPECT_EQ(ap_hash_str("", 0), 0xb39362cb946013e3ull);
  EXPECT_EQ(ap_hash_str("10.0.0.1", 0), 0x294a4ccef18a01c9ull);
  EXPECT_EQ(ap_hash_str("backend-17.example:8443", 42), 0x2e39e6e48552afb7ull);
  EXPECT_EQ(ap_mix64(1), 0x5692161d100b05e5ull);
}

TEST(Hash, SeedLengthAndEveryByteMatter) {
  EXPECT_NE(ap_hash_str("a", 0), ap_hash_str("a", 1));
  const char with_nul[2] = {'a', '\0'};
  EXPECT_NE(ap_hash64("a", 1, 0), ap_hash64(with_nul, 2, 0));
  // Flipping any single bit of a 24-byte input changes about half the output
  // bits on average (avalanche); require a mean within [24, 40].
  unsigned char buf[24];
  for (int i = 0; i < 24; ++i) buf[i] = (unsigned char)(i * 37 + 1);
  const uint64_t base = ap_hash64(buf, sizeof(buf), 0);
  double total = 0;
  for (int bit = 0; bit < 24 * 8; ++bit) {
    buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    total += __builtin_popcountll(base ^ ap_hash64(buf, sizeof(buf), 0));
    buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
  }
  const double mean = total / (24 * 8);
  EXPECT_GT(mean, 24.0);
  EXPECT_LT(mean, 40.0);
}

TEST(Hash, NoCollisionsOverManyAddresses) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 100000; ++i) {
    std::string a = "10." + std::to_string(i / 65536) + "." +
                    std::to_string((i / 256) % 256) + "." +
                    std::to_string(i % 256);
    seen.insert(ap_hash_str(a.c_str(), 0));
  }
  EXPECT_EQ(seen.size(), 100000u);
}

TEST(Mix, IsABijectionOnASample) {
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < 10000; ++i) seen.insert(ap_mix64(i));
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(Rng, SameSeedSameSequenceDifferentSeedDifferent) {
  ap_rng a, b, c;
  ap_rng_seed(&a, 7);
  ap_rng_seed(&b, 7);
  ap_rng_seed(&c, 8);
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = ap_rng_next(&a);
    EXPECT_EQ(x, ap_rng_next(&b));
    differ += x != ap_rng_next(&c);
  }
  EXPECT_EQ(differ, 100);
}

TEST(Rng, SeedZeroWorksAndNullIsIgnored) {
  ap_rng r;
  ap_rng_seed(&r, 0);
  EXPECT_NE(r.s[0] | r.s[1] | r.s[2] | r.s[3], 0u);
  ap_rng_seed(nullptr, 1);
  EXPECT_EQ(ap_rng_next(nullptr), 0u);
  EXPECT_EQ(ap_rng_below(nullptr, 10), 0u);
}

TEST(Rng, UniformStaysInUnitIntervalWithMeanOneHalf) {
  ap_rng r;
  ap_rng_seed(&r, 123);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double u = ap_rng_uniform(&r);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  // Standard error of the mean is sqrt(1/12 / n) = 6.5e-4: 6 sigma = 0.004.
  EXPECT_NEAR(sum / n, 0.5, 0.004);
}

TEST(Rng, BelowIsUnbiased) {
  ap_rng r;
  ap_rng_seed(&r, 99);
  EXPECT_EQ(ap_rng_below(&r, 0), 0u);
  EXPECT_EQ(ap_rng_below(&r, 1), 0u);
  const int k = 7, n = 70000;
  std::vector<int> counts(k, 0);
  for (int i = 0; i < n; ++i) {
    const uint64_t v = ap_rng_below(&r, k);
    ASSERT_LT(v, (uint64_t)k);
    counts[v]++;
  }
  double chi2 = 0;
  for (int c : counts) chi2 += (c - 10000.0) * (c - 10000.0) / 10000.0;
  // Chi-square, 6 degrees of freedom: P(chi2 > 22.46) = 0.001.
  EXPECT_LT(chi2, 22.46);
  // A huge bound (not a power of two) stays below the bound.
  const uint64_t big = (1ull << 63) + 12345;
  for (int i = 0; i < 1000; ++i) ASSERT_LT(ap_rng_below(&r, big), big);
}

TEST(Vdc, FirstValuesAreTheBinarySequence) {
  const double expected[] = {0,     0.5,    0.25,  0.75,  0.125, 0.625,
                             0.375, 0.875, 0.0625, 0.5625, 0.3125, 0.8125};
  for (uint32_t i = 0; i < 12; ++i) EXPECT_EQ(ap_vdc(i), expected[i]) << i;
}

TEST(Vdc, ExtremesAndBits) {
  EXPECT_EQ(ap_vdc(0x80000000u), std::ldexp(1.0, -32));
  EXPECT_EQ(ap_vdc(0xFFFFFFFFu), 1.0 - std::ldexp(1.0, -32));
  EXPECT_EQ(ap_vdc_bits(1), 0x80000000u);
  EXPECT_EQ(ap_vdc_bits(6), 0x60000000u);
  for (uint32_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(ap_vdc_bits(ap_vdc_bits(i)), i);
    EXPECT_EQ(ap_vdc(i), std::ldexp((double)ap_vdc_bits(i), -32));
  }
}

TEST(Vdc, FirstPowerOfTwoValuesAreEvenlySpaced) {
  // The first 2^k values are exactly the multiples of 2^-k.
  std::vector<double> v;
  for (uint32_t i = 0; i < 64; ++i) v.push_back(ap_vdc(i));
  std::sort(v.begin(), v.end());
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(v[i], i / 64.0);
}

}  // namespace
