// ap_orca: the OrcaLoadReport wire decode (bytes written here by hand from
// the protobuf encoding rules: tag = field << 3 | wire type, doubles as 8
// little-endian bytes) and the per-endpoint samples, with explicit times.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <atomic>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/skew/ap_orca.h"

namespace {

using Bytes = std::vector<uint8_t>;

void PutVarint(Bytes* b, uint64_t v) {
  while (v >= 0x80) {
    b->push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  b->push_back(static_cast<uint8_t>(v));
}

void PutDouble(Bytes* b, uint32_t field, double v) {
  PutVarint(b, (uint64_t{field} << 3) | 1);
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  for (int i = 0; i < 8; ++i) b->push_back(static_cast<uint8_t>(bits >> (8 * i)));
}

// A map entry {string key = 1; double value = 2} of map field `field`.
void PutMapEntry(Bytes* b, uint32_t field, const std::string& key, double v) {
  Bytes entry;
  PutVarint(&entry, (1 << 3) | 2);
  PutVarint(&entry, key.size());
  entry.insert(entry.end(), key.begin(), key.end());
  PutDouble(&entry, 2, v);
  PutVarint(b, (uint64_t{field} << 3) | 2);
  PutVarint(b, entry.size());
  b->insert(b->end(), entry.begin(), entry.end());
}

int Decode(const Bytes& b, ap_orca_report* r, ap_error* err = nullptr) {
  return ap_orca_decode(b.data(), b.size(), r, err);
}

TEST(OrcaDecode, EmptyReportHasNoField) {
  ap_orca_report r;
  ASSERT_EQ(ap_orca_decode(nullptr, 0, &r, nullptr), AP_OK);
  EXPECT_EQ(r.present, 0u);
  EXPECT_EQ(r.cpu_utilization, -1);
  EXPECT_EQ(r.rps_fractional, -1);
  EXPECT_EQ(r.application_utilization, -1);
}

TEST(OrcaDecode, ReadsTheFieldsOfARateReport) {
  // What a server reporting its rate sends (interop server --capacity-qps).
  Bytes b;
  PutDouble(&b, 1, 0.42);
  PutDouble(&b, 6, 420.5);
  PutDouble(&b, 9, 0.43);
  ap_orca_report r;
  ASSERT_EQ(Decode(b, &r), AP_OK);
  EXPECT_EQ(r.present, AP_ORCA_CPU | AP_ORCA_RPS | AP_ORCA_APP);
  EXPECT_EQ(r.cpu_utilization, 0.42);
  EXPECT_EQ(r.rps_fractional, 420.5);
  EXPECT_EQ(r.application_utilization, 0.43);
  EXPECT_EQ(r.mem_utilization, -1);
  EXPECT_EQ(r.eps, -1);
  // The first byte of each: field 1 -> 0x09, 6 -> 0x31, 9 -> 0x49.
  EXPECT_EQ(b[0], 0x09);
  EXPECT_EQ(b[9], 0x31);
  EXPECT_EQ(b[18], 0x49);
}

TEST(OrcaDecode, SkipsEveryOtherFieldByItsWireType) {
  Bytes b;
  PutVarint(&b, (3 << 3) | 0);  // rps (deprecated uint64)
  PutVarint(&b, 123456789);
  PutMapEntry(&b, 4, "db", 3487);       // request_cost
  PutDouble(&b, 2, 0.25);               // mem_utilization
  PutMapEntry(&b, 5, "queue", 0.5);     // utilization
  PutDouble(&b, 7, 1.5);                // eps
  PutMapEntry(&b, 8, "gpu", 1.2);       // named_metrics
  PutVarint(&b, (10 << 3) | 5);         // a later fixed32 field
  for (int i = 0; i < 4; ++i) b.push_back(0xff);
  PutVarint(&b, (1000 << 3) | 1);       // a later double field
  for (int i = 0; i < 8; ++i) b.push_back(0x7f);
  PutDouble(&b, 6, 77);
  ap_orca_report r;
  ASSERT_EQ(Decode(b, &r), AP_OK);
  EXPECT_EQ(r.present, AP_ORCA_MEM | AP_ORCA_EPS | AP_ORCA_RPS);
  EXPECT_EQ(r.mem_utilization, 0.25);
  EXPECT_EQ(r.eps, 1.5);
  EXPECT_EQ(r.rps_fractional, 77);
  EXPECT_EQ(r.cpu_utilization, -1);
}

TEST(OrcaDecode, ALaterValueOfAFieldWins) {
  Bytes b;
  PutDouble(&b, 6, 10);
  PutDouble(&b, 6, 20);
  ap_orca_report r;
  ASSERT_EQ(Decode(b, &r), AP_OK);
  EXPECT_EQ(r.rps_fractional, 20);
}

TEST(OrcaDecode, ValuesAreTakenAsSent) {
  Bytes b;
  PutDouble(&b, 1, 1.7);  // above 1: allowed over a soft limit
  PutDouble(&b, 6, -3);
  ap_orca_report r;
  ASSERT_EQ(Decode(b, &r), AP_OK);
  EXPECT_EQ(r.cpu_utilization, 1.7);
  EXPECT_EQ(r.rps_fractional, -3);
}

TEST(OrcaDecode, MalformedBytesAreErrorsWithTheOffset) {
  Bytes good;
  PutDouble(&good, 1, 0.5);
  struct Case {
    const char* name;
    Bytes bytes;
    const char* says;
  };
  Bytes truncated_double(good.begin(), good.end() - 1);
  Bytes truncated_tag = {0x80};
  Bytes long_varint(11, 0x80);
  Bytes past_end = {(4 << 3) | 2, 5, 1, 2};
  Bytes group = {(11 << 3) | 3};
  Bytes end_group = {(11 << 3) | 4};
  Bytes wire6 = {(11 << 3) | 6};
  Bytes rps_as_varint = {(6 << 3) | 0, 7};
  Bytes cpu_as_fixed32 = {(1 << 3) | 5, 0, 0, 0, 0};
  Bytes truncated_fixed32 = {(10 << 3) | 5, 0, 0};
  Bytes truncated_value_varint = {(3 << 3) | 0, 0x80};
  const Case cases[] = {
      {"truncated double", truncated_double, "truncated double"},
      {"truncated tag", truncated_tag, "bad tag at byte 0"},
      {"11-byte varint", long_varint, "bad tag"},
      {"length past the end", past_end, "bad length at byte 0"},
      {"start group", group, "wire type 3"},
      {"end group", end_group, "wire type 4"},
      {"wire type 6", wire6, "wire type 6"},
      {"rps as a varint", rps_as_varint, "field 6 has wire type 0"},
      {"cpu as fixed32", cpu_as_fixed32, "field 1 has wire type 5"},
      {"truncated fixed32", truncated_fixed32, "truncated fixed32"},
      {"truncated varint value", truncated_value_varint, "bad varint"},
  };
  for (const Case& c : cases) {
    ap_orca_report r;
    ap_error err;
    EXPECT_EQ(Decode(c.bytes, &r, &err), AP_EINVAL) << c.name;
    EXPECT_NE(std::strstr(err.message, c.says), nullptr)
        << c.name << ": " << err.message;
  }
  // What was read before the bad bytes stays readable.
  Bytes partial = good;
  partial.push_back(0x80);
  ap_orca_report r;
  EXPECT_EQ(Decode(partial, &r), AP_EINVAL);
  EXPECT_EQ(r.cpu_utilization, 0.5);
}

TEST(OrcaDecode, BadArguments) {
  ap_orca_report r;
  ap_error err;
  const uint8_t one = 0x09;
  EXPECT_EQ(ap_orca_decode(nullptr, 1, &r, &err), AP_EINVAL);
  EXPECT_NE(std::strstr(err.message, "buf is NULL"), nullptr);
  EXPECT_EQ(ap_orca_decode(&one, 1, nullptr, &err), AP_EINVAL);
}

constexpr int64_t kMs = 1000000;
constexpr int64_t kS = 1000 * kMs;
constexpr int64_t kT0 = 50 * kS;

ap_orca_report RateReport(double rps, double app) {
  ap_orca_report r;
  ap_orca_decode(nullptr, 0, &r, nullptr);
  r.rps_fractional = rps;
  r.application_utilization = app;
  r.present = AP_ORCA_RPS | AP_ORCA_APP;
  return r;
}

TEST(OrcaSample, OneClaimPerInterval) {
  ap_orca_sample s;
  ap_orca_sample_init(&s);
  const int64_t every = AP_ORCA_SAMPLE_INTERVAL_NS;
  EXPECT_EQ(ap_orca_sample_claim(&s, kT0, every), 1);
  EXPECT_EQ(ap_orca_sample_claim(&s, kT0, every), 0);
  EXPECT_EQ(ap_orca_sample_claim(&s, kT0 + every - 1, every), 0);
  EXPECT_EQ(ap_orca_sample_claim(&s, kT0 + every, every), 1);
  EXPECT_EQ(ap_orca_sample_claim(&s, kT0 + 10 * every, every), 1);
  EXPECT_EQ(ap_orca_sample_claim(&s, kT0 + 10 * every + 1, every), 0);
  EXPECT_EQ(ap_orca_sample_claim(nullptr, kT0, every), 0);
  EXPECT_EQ(ap_orca_sample_claim(&s, kT0 + 100 * every, 0), 0);
}

TEST(OrcaSample, ThreadsRacingForADueSampleGetOneClaim) {
  for (int round = 0; round < 200; ++round) {
    ap_orca_sample s;
    ap_orca_sample_init(&s);
    std::atomic<int> won{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        won += ap_orca_sample_claim(&s, kT0, AP_ORCA_SAMPLE_INTERVAL_NS);
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_EQ(won.load(), 1) << "round " << round;
  }
}

TEST(OrcaSample, RecordedRateIsFreshForFiveSeconds) {
  ap_orca_sample s;
  ap_orca_sample_init(&s);
  double v = 0;
  EXPECT_EQ(ap_orca_sample_rps(&s, kT0, &v), 0) << "never sampled";
  EXPECT_EQ(v, -1);
  const ap_orca_report r = RateReport(310.5, 0.31);
  ASSERT_EQ(ap_orca_sample_record(&s, &r, kT0, nullptr), AP_OK);
  EXPECT_EQ(ap_orca_sample_rps(&s, kT0, &v), 1);
  EXPECT_EQ(v, 310.5);
  EXPECT_EQ(ap_orca_sample_app_utilization(&s, kT0, &v), 1);
  EXPECT_EQ(v, 0.31);
  EXPECT_EQ(ap_orca_sample_rps(&s, kT0 + AP_ORCA_SAMPLE_STALE_NS, &v), 1);
  EXPECT_EQ(ap_orca_sample_rps(&s, kT0 + AP_ORCA_SAMPLE_STALE_NS + 1, &v), 0);
  EXPECT_EQ(v, -1);
}

TEST(OrcaSample, AbsentOrUnusableFieldsReadAsNone) {
  ap_orca_sample s;
  ap_orca_sample_init(&s);
  ap_orca_report r = RateReport(100, 0.1);
  r.present = AP_ORCA_CPU;  // neither field present
  ASSERT_EQ(ap_orca_sample_record(&s, &r, kT0, nullptr), AP_OK);
  double v = 0;
  EXPECT_EQ(ap_orca_sample_rps(&s, kT0, &v), 0);
  EXPECT_EQ(ap_orca_sample_app_utilization(&s, kT0, &v), 0);
  for (double bad : {-1.0, double{NAN}, double{INFINITY}}) {
    r = RateReport(bad, 0.1);
    ASSERT_EQ(ap_orca_sample_record(&s, &r, kT0, nullptr), AP_OK);
    EXPECT_EQ(ap_orca_sample_rps(&s, kT0, &v), 0) << bad;
    EXPECT_EQ(v, -1);
  }
  ap_error err;
  EXPECT_EQ(ap_orca_sample_record(nullptr, &r, kT0, &err), AP_EINVAL);
  EXPECT_EQ(ap_orca_sample_record(&s, nullptr, kT0, &err), AP_EINVAL);
  EXPECT_EQ(ap_orca_sample_rps(nullptr, kT0, &v), 0);
  EXPECT_EQ(ap_orca_sample_rps(&s, kT0, nullptr), 0);
}

}  // namespace
