// ap_order: a stable endpoint order and its fingerprint.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/ap_hash.h"
#include "policy/core/ring/ap_order.h"

namespace {

std::vector<std::string> Ordered(const std::vector<std::string> &in) {
  std::vector<const char *> ptrs;
  for (const auto &s : in) ptrs.push_back(s.c_str());
  std::vector<size_t> order(in.size());
  ap_error err;
  EXPECT_EQ(ap_order_endpoints(ptrs.data(), in.size(), order.data(), &err),
            AP_OK)
      << err.message;
  std::vector<std::string> out;
  for (size_t k : order) out.push_back(in[k]);
  return out;
}

uint64_t Fingerprint(const std::vector<std::string> &in) {
  std::vector<const char *> ptrs;
  for (const auto &s : in) ptrs.push_back(s.c_str());
  std::vector<size_t> order(in.size());
  EXPECT_EQ(ap_order_endpoints(ptrs.data(), in.size(), order.data(), nullptr),
            AP_OK);
  return ap_order_fingerprint(ptrs.data(), order.data(), in.size());
}

std::vector<std::string> Fleet(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) {
    v.push_back("10.1." + std::to_string(i / 250) + "." +
                std::to_string(i % 250 + 1) + ":" + std::to_string(8000 + i % 3));
  }
  return v;
}

TEST(Order, SameOrderWhateverTheInputOrder) {
  const auto fleet = Fleet(500);
  const auto reference = Ordered(fleet);
  std::mt19937 gen(2024);
  for (int trial = 0; trial < 20; ++trial) {
    auto shuffled = fleet;
    std::shuffle(shuffled.begin(), shuffled.end(), gen);
    EXPECT_EQ(Ordered(shuffled), reference);
    EXPECT_EQ(Fingerprint(shuffled), Fingerprint(fleet));
  }
}

TEST(Order, KeyIsHostHashThenPortThenString) {
  // Reference order computed independently from the documented key.
  std::vector<std::string> in = {"b:80", "a:443", "a:80", "c:9", "[::1]:81",
                                 "[::1]:80", "a:x", "::1", "host:99999"};
  struct Key {
    uint64_t h;
    unsigned port;
    std::string s;
  };
  auto key = [](const std::string &host, unsigned port, const std::string &s) {
    return Key{ap_hash_str(host.c_str(), 0), port, s};
  };
  std::vector<Key> keys = {
      key("b", 80, "b:80"),       key("a", 443, "a:443"),
      key("a", 80, "a:80"),       key("c", 9, "c:9"),
      key("::1", 81, "[::1]:81"), key("::1", 80, "[::1]:80"),
      key("a:x", 0, "a:x"),       key("::1", 0, "::1"),
      key("host:99999", 0, "host:99999")};
  std::sort(keys.begin(), keys.end(), [](const Key &x, const Key &y) {
    return std::tie(x.h, x.port, x.s) < std::tie(y.h, y.port, y.s);
  });
  std::vector<std::string> expected;
  for (const auto &k : keys) expected.push_back(k.s);
  EXPECT_EQ(Ordered(in), expected);
}

TEST(Order, MatchesAReferenceSortWithManyTies) {
  // 7 hosts x 150 ports (ties on the host hash everywhere), plus addresses
  // whose port does not parse; shuffled input, reference by std::sort on the
  // documented key.
  std::vector<std::string> in;
  struct Key {
    uint64_t h;
    unsigned port;
    std::string s;
  };
  std::vector<Key> keys;
  for (int h = 0; h < 7; ++h) {
    const std::string host = "host-" + std::to_string(h) + ".svc";
    for (int p = 0; p < 150; ++p) {
      const unsigned port = 1 + (unsigned)((p * 7919) % 65535);
      in.push_back(host + ":" + std::to_string(port));
      keys.push_back({ap_hash_str(host.c_str(), 0), port, in.back()});
    }
    in.push_back(host + ":http");
    keys.push_back({ap_hash_str(in.back().c_str(), 0), 0, in.back()});
  }
  std::sort(keys.begin(), keys.end(), [](const Key &x, const Key &y) {
    return std::tie(x.h, x.port, x.s) < std::tie(y.h, y.port, y.s);
  });
  std::vector<std::string> expected;
  for (const auto &k : keys) expected.push_back(k.s);
  std::mt19937 gen(7);
  std::shuffle(in.begin(), in.end(), gen);
  EXPECT_EQ(Ordered(in), expected);
}

TEST(Order, SameHostOrderedByPortNumberNotText) {
  auto out = Ordered({"h:10000", "h:9", "h:80"});
  EXPECT_EQ(out, (std::vector<std::string>{"h:9", "h:80", "h:10000"}));
  auto v6 = Ordered({"[::1]:443", "[::1]:80"});
  EXPECT_EQ(v6, (std::vector<std::string>{"[::1]:80", "[::1]:443"}));
}

TEST(Order, DuplicateIsRejectedByName) {
  const char *in[] = {"10.0.0.1:80", "10.0.0.2:80", "10.0.0.1:80"};
  size_t order[3];
  ap_error err;
  EXPECT_EQ(ap_order_endpoints(in, 3, order, &err), AP_EINVAL);
  EXPECT_NE(strstr(err.message, "duplicate address \"10.0.0.1:80\""), nullptr)
      << err.message;
  EXPECT_NE(strstr(err.message, "[0] and [2]"), nullptr) << err.message;
}

TEST(Order, BadInputs) {
  size_t order[2];
  ap_error err;
  const char *ok[] = {"a:1", "b:2"};
  const char *with_null[] = {"a:1", nullptr};
  const char *with_empty[] = {"", "b:2"};
  EXPECT_EQ(ap_order_endpoints(nullptr, 2, order, &err), AP_EINVAL);
  EXPECT_NE(strstr(err.message, "addresses"), nullptr);
  EXPECT_EQ(ap_order_endpoints(ok, 2, nullptr, &err), AP_EINVAL);
  EXPECT_NE(strstr(err.message, "order"), nullptr);
  EXPECT_EQ(ap_order_endpoints(ok, 0, order, &err), AP_ERANGE);
  EXPECT_NE(strstr(err.message, "n (address count) is 0"), nullptr);
  EXPECT_EQ(ap_order_endpoints(ok, AP_MAX_ENDPOINTS + 1, order, &err),
            AP_ERANGE);
  EXPECT_EQ(ap_order_endpoints(with_null, 2, order, &err), AP_EINVAL);
  EXPECT_STREQ(err.message, "addresses[1] is NULL");
  EXPECT_EQ(ap_order_endpoints(with_empty, 2, order, &err), AP_EINVAL);
  EXPECT_STREQ(err.message, "addresses[0] is empty");
  EXPECT_EQ(ap_order_endpoints(ok, 2, order, nullptr), AP_OK);
}

TEST(Order, OneEndpoint) {
  EXPECT_EQ(Ordered({"only:1"}), (std::vector<std::string>{"only:1"}));
}

TEST(Fingerprint, DiffersWhenTheListDiffers) {
  auto fleet = Fleet(100);
  const uint64_t base = Fingerprint(fleet);
  auto removed = fleet;
  removed.pop_back();
  EXPECT_NE(Fingerprint(removed), base);
  auto changed = fleet;
  changed[5] = "10.9.9.9:1";
  EXPECT_NE(Fingerprint(changed), base);
  // Splitting the same characters differently changes the value.
  EXPECT_NE(Fingerprint({"ab:1", "c:2"}), Fingerprint({"a:b1", "c:2"}));
}

TEST(Fingerprint, NullOrderMeansGivenOrder) {
  const char *in[] = {"x:1", "y:2", "z:3"};
  const size_t identity[] = {0, 1, 2};
  const size_t reversed[] = {2, 1, 0};
  EXPECT_EQ(ap_order_fingerprint(in, nullptr, 3),
            ap_order_fingerprint(in, identity, 3));
  EXPECT_NE(ap_order_fingerprint(in, nullptr, 3),
            ap_order_fingerprint(in, reversed, 3));
  // Degenerate inputs do not crash.
  ap_order_fingerprint(nullptr, nullptr, 3);
  ap_order_fingerprint(in, nullptr, 0);
}

TEST(Fingerprint, FormatsAsSixteenHexDigits) {
  char out[17];
  ap_fingerprint_format(0x00ab0000000000cdull, out);
  EXPECT_STREQ(out, "00ab0000000000cd");
  ap_fingerprint_format(~0ull, out);
  EXPECT_STREQ(out, "ffffffffffffffff");
  ap_fingerprint_format(1, nullptr);
}

}  // namespace
