// The interop server's per-call CPU work (--capacity, --work-us) and its
// ORCA trailer, against a real server process on 127.0.0.1: the trailer's
// bytes decoded by hand (field 1, a little-endian double), utilization in
// [0, 1] and higher under load than idle, capacity 0.5 doubling the work,
// and bad --capacity values refused.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <gtest/gtest.h>

#include "interop/testing/server_load.h"
#include "policy/core/skew/ap_orca.h"
#include "tests/common/raw_call.h"
#include "tests/interop/fleet_helper.h"
#include "tests/interop/orca_probe.h"

namespace {

class ServerLoadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    OrcaProbeInstall();
    grpc_init();
  }
  static void TearDownTestSuite() { grpc_shutdown(); }
};

struct Channel {
  explicit Channel(const std::string &addr) {
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    ch = grpc_channel_create(addr.c_str(), creds, nullptr);
    grpc_channel_credentials_release(creds);
  }
  ~Channel() { grpc_channel_destroy(ch); }
  grpc_channel *ch;
};

// One finished UnaryCall: its status, latency and the ORCA trailer's bytes.
struct CallResult {
  grpc_status_code status = GRPC_STATUS_UNKNOWN;
  double latency_ms = 0;
  bool has_trailer = false;
  std::string trailer;  // raw bytes of endpoint-load-metrics-bin
};

CallResult Call(grpc_channel *ch) {
  CallResult out;
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(nullptr);
  raw_call c;
  raw_call_opts o = {};
  o.method = "/grpc.testing.TestService/UnaryCall";
  o.timeout_ms = 10000;
  o.wait_for_ready = 1;
  long seen = OrcaProbeCount();
  auto t0 = std::chrono::steady_clock::now();
  if (raw_call_start(&c, ch, cq, &o) == 0) {
    grpc_event ev = grpc_completion_queue_pluck(
        cq, &c, gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_seconds(15, GPR_TIMESPAN)),
        nullptr);
    out.latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ev.type == GRPC_OP_COMPLETE) {
      out.status = c.status;
      // gRPC keeps endpoint-load-metrics-bin from the application (it is
      // for the LB policy): the probe saw it on the subchannel.
      if (OrcaProbeCount() > seen) {
        out.has_trailer = true;
        out.trailer = OrcaProbeLast();
      }
      for (size_t i = 0; i < c.trailing.count; i++) {
        const grpc_metadata &md = c.trailing.metadata[i];
        std::string key(reinterpret_cast<const char *>(GRPC_SLICE_START_PTR(md.key)),
                        GRPC_SLICE_LENGTH(md.key));
        if (key == "endpoint-load-metrics-bin") {
          out.has_trailer = true;
          out.trailer.assign(reinterpret_cast<const char *>(GRPC_SLICE_START_PTR(md.value)),
                             GRPC_SLICE_LENGTH(md.value));
        }
      }
    }
    raw_call_release(&c);
  }
  grpc_completion_queue_shutdown(cq);
  grpc_completion_queue_destroy(cq);
  return out;
}

// Decodes the trailer as a protobuf reader would, by hand: tag 0x09
// (field 1, wire type 1) then an 8-byte little-endian IEEE double.
bool DecodeCpu(const std::string &bytes, double *u) {
  if (bytes.size() != 9 || static_cast<unsigned char>(bytes[0]) != 0x09) return false;
  uint64_t bits = 0;
  for (int i = 0; i < 8; i++) bits |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[1 + i])) << (8 * i);
  std::memcpy(u, &bits, sizeof bits);
  return true;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string ReadFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ServerLoadUnits, OrcaReportIsTagNineAndLittleEndianDouble) {
  uint8_t b[ORCA_CPU_REPORT_LEN];
  ASSERT_EQ(9u, io_orca_cpu_report(0.5, b));
  const uint8_t want[9] = {0x09, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f};  // 0.5 = 0x3fe0000000000000
  EXPECT_EQ(0, std::memcmp(want, b, 9));
  double u = -1;
  io_orca_cpu_report(7.0, b);  // clamped
  ASSERT_EQ(0, io_orca_cpu_parse(b, 9, &u));
  EXPECT_EQ(1.0, u);
  io_orca_cpu_report(-3.0, b);
  ASSERT_EQ(0, io_orca_cpu_parse(b, 9, &u));
  EXPECT_EQ(0.0, u);
  // Other fields (mem_utilization 2: double, rps 3: varint, a map entry 4)
  // are skipped; a truncated double or no field 1 is refused.
  const uint8_t mixed[] = {0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x18, 0x96, 0x01, 0x22, 0x02, 'a',
                           'b', 0x09, 0, 0, 0, 0, 0, 0, 0xd0, 0x3f};
  ASSERT_EQ(0, io_orca_cpu_parse(mixed, sizeof mixed, &u));
  EXPECT_EQ(0.25, u);
  EXPECT_EQ(-1, io_orca_cpu_parse(mixed, 9, &u));
  EXPECT_EQ(-1, io_orca_cpu_parse(b, 5, &u));
}

TEST(ServerLoadUnits, RateReportIsFieldsOneSixAndNine) {
  uint8_t b[ORCA_RATE_REPORT_LEN];
  ASSERT_EQ(27u, io_orca_rate_report(0.5, 250, b));
  // 0.5 = 0x3fe0000000000000, 250 = 0x406f400000000000
  const uint8_t want[27] = {0x09, 0,    0,    0,    0, 0, 0, 0xe0, 0x3f,  // field 1
                            0x31, 0,    0,    0,    0, 0, 0x40, 0x6f, 0x40,  // field 6
                            0x49, 0,    0,    0,    0, 0, 0, 0xe0, 0x3f};  // field 9
  EXPECT_EQ(0, std::memcmp(want, b, 27));
  // The core's decoder (what the policy reads) finds all three.
  ap_orca_report r;
  ASSERT_EQ(AP_OK, ap_orca_decode(b, 27, &r, nullptr));
  EXPECT_EQ(0.5, r.cpu_utilization);
  EXPECT_EQ(250, r.rps_fractional);
  EXPECT_EQ(0.5, r.application_utilization);
  // Above 1 as it is (a soft limit), below 0 as 0.
  io_orca_rate_report(1.7, -3, b);
  ASSERT_EQ(AP_OK, ap_orca_decode(b, 27, &r, nullptr));
  EXPECT_EQ(1.7, r.cpu_utilization);
  EXPECT_EQ(0, r.rps_fractional);
  EXPECT_EQ(0u, io_orca_rate_report(1, 1, nullptr));
}

TEST(ServerLoadUnits, RateIsAnsweredCallsOfTheLastSecond) {
  server_load ld;
  const int64_t s = 1000000000LL;
  ASSERT_EQ(0, io_server_load_init(&ld, 2, 0, 0));
  for (int i = 0; i < 300; i++) io_server_load_count_call(&ld, 2 * s + i * (s / 1000));
  // 300 calls within [2.0, 2.3) s; at 2.95 s the window spans 0.9 s + 0.05 s
  EXPECT_NEAR(300 / 0.95, io_server_load_rate(&ld, 2 * s + 950 * (s / 1000)), 1e-6);
  EXPECT_EQ(0.0, io_server_load_rate(&ld, 4 * s));  // aged out
  // Younger than a second: over the time since the start.
  server_load young;
  ASSERT_EQ(0, io_server_load_init(&young, 1, 0, 0));
  for (int i = 0; i < 10; i++) io_server_load_count_call(&young, s / 10);
  EXPECT_NEAR(10 / 0.5, io_server_load_rate(&young, s / 2), 1e-6);
  EXPECT_EQ(0.0, io_server_load_rate(nullptr, s));
  io_server_load_destroy(&ld);
  io_server_load_destroy(&young);
}

TEST(ServerLoadUnits, UtilizationIsWorkOfTheLastSecondOverTheAllotment) {
  server_load ld;
  const int64_t s = 1000000000LL;
  ASSERT_EQ(0, io_server_load_init(&ld, 2, 0, 0));
  io_server_load_add(&ld, 2 * s, s / 2);  // 0.5 s of CPU at t = 2 s
  // 2 threads: 0.5 s over 1 s x 2 = 0.25 (the window spans 0.9 s + the
  // current bucket's part; at t = 2.05 s that is 0.95 s)
  EXPECT_NEAR(0.5 / (0.95 * 2), io_server_load_utilization(&ld, 2 * s + s / 20), 1e-9);
  EXPECT_EQ(0.0, io_server_load_utilization(&ld, 4 * s));  // aged out
  io_server_load_add(&ld, 4 * s, 10 * s);
  EXPECT_EQ(1.0, io_server_load_utilization(&ld, 4 * s + s / 2));  // clamped
  long calls = 0;
  EXPECT_EQ(s / 2 + 10 * s, io_server_load_total_ns(&ld, &calls));
  EXPECT_EQ(2, calls);
  io_server_load_destroy(&ld);
  // A quota of 0.5 cores: 1 ms of work holds the virtual CPU for 2 ms,
  // first come first served.
  ASSERT_EQ(0, io_server_load_init(&ld, 2, 0.5, 0));
  int64_t start = -1;
  EXPECT_EQ(2000000, io_server_load_reserve(&ld, 0, 1000000, 10000000, &start));
  EXPECT_EQ(0, start);
  EXPECT_EQ(4000000, io_server_load_reserve(&ld, 500000, 1000000, 10000000, &start));
  EXPECT_EQ(2000000, start);
  // 3.5 ms behind with 3 ms allowed: refused, nothing reserved
  EXPECT_EQ(-1, io_server_load_reserve(&ld, 500000, 1000000, 3000000, &start));
  EXPECT_EQ(6000000, io_server_load_reserve(&ld, 500000, 1000000, 10000000, &start));
  EXPECT_EQ(4000000, start);
  io_server_load_destroy(&ld);
  EXPECT_EQ(0u, io_server_work_iterations(0, 1, 100));
  EXPECT_EQ(200000u, io_server_work_iterations(1000, 0.5, 100));
  EXPECT_EQ(100000000u, io_server_work_iterations(100000, 0.01, 100));  // capped at 1 s
}

TEST_F(ServerLoadTest, OrcaTrailerIsStandardAndInRange) {
  ServerSet servers(1, {"--capacity", "1"}, "orca");
  ASSERT_GT(servers.port(0), 0);
  Channel c(servers.Address(0));
  for (int i = 0; i < 5; i++) {
    CallResult r = Call(c.ch);
    ASSERT_EQ(GRPC_STATUS_OK, r.status);
    ASSERT_TRUE(r.has_trailer) << "no endpoint-load-metrics-bin trailer";
    double u = -1;
    ASSERT_TRUE(DecodeCpu(r.trailer, &u)) << "trailer is not {1: double}: " << r.trailer.size()
                                          << " bytes";
    EXPECT_GE(u, 0.0);
    EXPECT_LE(u, 1.0);
    double parsed = -1;
    ASSERT_EQ(0, io_orca_cpu_parse(reinterpret_cast<const uint8_t *>(r.trailer.data()),
                                   r.trailer.size(), &parsed));
    EXPECT_EQ(u, parsed);
    double by_grpc = -1;  // what an LB policy reading the report gets
    ASSERT_EQ(0, OrcaProbeGrpcParse(r.trailer, &by_grpc));
    EXPECT_EQ(u, by_grpc);
  }
}

TEST_F(ServerLoadTest, CapacityQpsReportsTheRateOverTheCapacity) {
  // No work at all: the report is the server's own count of calls.
  ServerSet servers(1, {"--capacity-qps", "100"}, "rate");
  Channel c(servers.Address(0));
  ASSERT_EQ(GRPC_STATUS_OK, Call(c.ch).status);  // connect
  auto t0 = std::chrono::steady_clock::now();
  CallResult last;
  int n = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1200) && n < 5000) {
    last = Call(c.ch);
    ASSERT_EQ(GRPC_STATUS_OK, last.status);
    n++;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(last.has_trailer);
  ap_orca_report r;
  ap_error err;
  ASSERT_EQ(AP_OK, ap_orca_decode(reinterpret_cast<const uint8_t *>(last.trailer.data()),
                                  last.trailer.size(), &r, &err))
      << err.message;
  ASSERT_EQ(r.present, AP_ORCA_CPU | AP_ORCA_RPS | AP_ORCA_APP);
  // The last second's calls, ours the only ones: about n / secs.
  std::printf("%d calls in %.2f s; reported rps %.1f, utilization %.3f\n", n, secs,
              r.rps_fractional, r.cpu_utilization);
  EXPECT_GT(r.rps_fractional, 0.5 * n / secs);
  EXPECT_LT(r.rps_fractional, 1.5 * n / secs + 10);
  EXPECT_DOUBLE_EQ(r.cpu_utilization, r.rps_fractional / 100);
  EXPECT_EQ(r.application_utilization, r.cpu_utilization);
  double by_grpc = -1;  // gRPC's own parser reads the same cpu_utilization
  ASSERT_EQ(0, OrcaProbeGrpcParse(last.trailer, &by_grpc));
  EXPECT_EQ(by_grpc, r.cpu_utilization);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Json st = servers.Snapshot(0);
  ASSERT_TRUE(st);
  EXPECT_EQ(100, Num(st.get(), "capacity_qps"));
  EXPECT_EQ(0, Num(st.get(), "work_calls")) << "no CPU work";
}

TEST_F(ServerLoadTest, NoWorkAndNoTrailerByDefaultOrWithNoOrca) {
  ServerSet plain(1, {}, "plain");
  ServerSet no_orca(1, {"--capacity", "1", "--no-orca"}, "no-orca");
  Channel a(plain.Address(0)), b(no_orca.Address(0));
  CallResult ra = Call(a.ch), rb = Call(b.ch);
  EXPECT_EQ(GRPC_STATUS_OK, ra.status);
  EXPECT_EQ(GRPC_STATUS_OK, rb.status);
  EXPECT_FALSE(ra.has_trailer);
  EXPECT_FALSE(rb.has_trailer);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  Json sa = plain.Snapshot(0), sb = no_orca.Snapshot(0);
  ASSERT_TRUE(sa && sb);
  EXPECT_EQ(0, Num(sa.get(), "work_calls"));   // no --capacity/--work-us: no work
  EXPECT_EQ(1, Num(sb.get(), "work_calls"));   // --no-orca keeps the work
  EXPECT_GT(Num(sb.get(), "work_cpu_ns"), 0);
}

TEST_F(ServerLoadTest, UtilizationRisesUnderLoad) {
  // 1 ms of work a call on a 0.05-core quota: each call holds the virtual
  // CPU for 20 ms, so calls back to back keep it busy even when the
  // machine is (the quota needs only 0.05 of a core); one call after a
  // quiet second is 1 ms / (1 s x 0.05) = 0.02.
  ServerSet servers(1, {"--capacity", "1", "--work-us", "1000", "--cpu-quota", "0.05"}, "util");
  Channel c(servers.Address(0));
  ASSERT_EQ(GRPC_STATUS_OK, Call(c.ch).status);  // connect
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  CallResult idle_call = Call(c.ch);
  double idle = -1;
  ASSERT_TRUE(DecodeCpu(idle_call.trailer, &idle));
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  double loaded = -1;
  int n = 0;
  while (std::chrono::steady_clock::now() < until && n < 2000) {
    CallResult r = Call(c.ch);
    ASSERT_EQ(GRPC_STATUS_OK, r.status);
    ASSERT_TRUE(DecodeCpu(r.trailer, &loaded));
    EXPECT_GE(loaded, 0.0);
    EXPECT_LE(loaded, 1.0);
    n++;
  }
  // Idle: 0.02 (the call's own work). Loaded: ~0.95 (the gaps between
  // calls are idle); 0.3 leaves room for a busy machine.
  std::printf("utilization: idle %.4f, loaded %.4f after %d calls\n", idle, loaded, n);
  EXPECT_LT(idle, 0.1);
  EXPECT_GT(loaded, 0.3) << n << " calls";
  EXPECT_GT(loaded, idle + 0.2);
}

TEST_F(ServerLoadTest, HalfCapacityDoublesTheWorkPerCall) {
  // 2 ms of work at capacity 1 on a 0.05-core quota: a call holds the
  // virtual CPU 40 ms at capacity 1 and 80 ms at 0.5. Without a quota a
  // busy machine stretches an 8 ms burn more than a 4 ms one (more time
  // slices to wait for: x7 seen at load average 19); with it the burn
  // (4 ms of CPU) fits inside the hold even then, so the latency ratio is
  // the work's. The servers' own CPU measure is independent of the quota.
  const std::vector<std::string> common = {"--work-us", "2000", "--cpu-quota", "0.05"};
  std::vector<std::string> full_args = {"--capacity", "1"}, half_args = {"--capacity", "0.5"};
  full_args.insert(full_args.end(), common.begin(), common.end());
  half_args.insert(half_args.end(), common.begin(), common.end());
  ServerSet full(1, full_args, "full");
  ServerSet half(1, half_args, "half");
  Channel a(full.Address(0)), b(half.Address(0));
  ASSERT_EQ(GRPC_STATUS_OK, Call(a.ch).status);
  ASSERT_EQ(GRPC_STATUS_OK, Call(b.ch).status);
  std::vector<double> la, lb;
  for (int i = 0; i < 30; i++) {  // one call outstanding, alternating
    CallResult ra = Call(a.ch), rb = Call(b.ch);
    ASSERT_EQ(GRPC_STATUS_OK, ra.status);
    ASSERT_EQ(GRPC_STATUS_OK, rb.status);
    la.push_back(ra.latency_ms);
    lb.push_back(rb.latency_ms);
  }
  double ratio = Median(lb) / Median(la);
  std::printf("median latency: capacity 1 %.2f ms, capacity 0.5 %.2f ms (x%.2f)\n", Median(la),
              Median(lb), ratio);
  EXPECT_GE(ratio, 1.3) << Median(la) << " ms vs " << Median(lb) << " ms";
  EXPECT_LE(ratio, 3.5) << Median(la) << " ms vs " << Median(lb) << " ms";
  // The servers' own measure: work CPU time per call.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  Json sa = full.Snapshot(0), sb = half.Snapshot(0);
  ASSERT_TRUE(sa && sb);
  ASSERT_EQ(31, Num(sa.get(), "work_calls"));
  ASSERT_EQ(31, Num(sb.get(), "work_calls"));
  double per_a = Num(sa.get(), "work_cpu_ns") / 31, per_b = Num(sb.get(), "work_cpu_ns") / 31;
  std::printf("work CPU per call: %.0f ns vs %.0f ns (x%.2f)\n", per_a, per_b, per_b / per_a);
  EXPECT_GE(per_b / per_a, 1.3) << per_a << " ns vs " << per_b << " ns";
  EXPECT_LE(per_b / per_a, 3.5) << per_a << " ns vs " << per_b << " ns";
  EXPECT_EQ(0.5, Num(sb.get(), "capacity"));
  EXPECT_EQ(2000, Num(sb.get(), "work_us"));
}

TEST_F(ServerLoadTest, BadCapacityExitsNonZeroNamingTheFlag) {
  std::string dir = TempDir("bad-capacity");
  int k = 0;
  for (const char *bad : {"0", "-1", "abc", "1e9", "nan", ""}) {
    std::string log = dir + "/bad" + std::to_string(k++) + ".log";
    Child p(InteropBinary("server"), {"--port", "0", "--capacity", bad}, log);
    ASSERT_TRUE(p.started());
    int status = p.Wait(10000);
    ASSERT_NE(-1, status) << "--capacity '" << bad << "' did not exit";
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_NE(0, WEXITSTATUS(status)) << "--capacity '" << bad << "'";
    EXPECT_NE(std::string::npos, ReadFile(log).find("--capacity")) << ReadFile(log);
  }
}

}  // namespace
