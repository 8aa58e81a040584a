// aperturectl as a real process against a real status server in this
// process, with instances registered through real snapshot callbacks.
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "policy/include/aperture.h"
#include "policy/status/ap_status_limits.h"
}
#include "tests/status/canned_server.h"
#include "tests/status/fake_instance.h"

namespace {

struct CtlRun {
  int exit_code = -1;
  std::string out, err;
};

std::string Aperturectl() {
  const char *srcdir = getenv("TEST_SRCDIR");
  const char *rel = getenv("APERTURECTL");
  EXPECT_NE(srcdir, nullptr);
  EXPECT_NE(rel, nullptr);
  return std::string(srcdir) + "/aperture/" + rel;
}

// Runs aperturectl with `args` (shell words, trusted test input).
CtlRun Ctl(const std::string &args) {
  const char *tmp = getenv("TEST_TMPDIR");
  std::string err_path = std::string(tmp ? tmp : "/tmp") + "/aperturectl.stderr";
  std::string cmd = Aperturectl() + " " + args + " 2>" + err_path;
  CtlRun r;
  FILE *p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(err_path);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  return r;
}

bool Has(const std::string &text, const std::string &what) {
  return text.find(what) != std::string::npos;
}

size_t Count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) n++;
  return n;
}

class AperturectlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    aperture_error err;
    ASSERT_EQ(aperture_status_server_start(nullptr, &server_, &err), APERTURE_OK) << err.message;
    addr_ = "127.0.0.1:" + std::to_string(aperture_status_server_port(server_));
  }
  void TearDown() override { aperture_status_server_stop(server_); }
  aperture_status_server *server_ = nullptr;
  std::string addr_;
};

TEST_F(AperturectlTest, TablePrintsHeaderAndEndpointRows) {
  RegisteredInstance alpha("dns:///alpha.svc:443", 6);
  CtlRun r = Ctl("status " + addr_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "channel dns:///alpha.svc:443\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "mode continuous  coordinate 2/5 (api)  offset 0.400000  width 0.200000"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "aperture min 3  logical 4  physical 5  widened 1  fingerprint "
                         "000000000abc0006"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "resolver_updates 7  rebuilds 1  subchannels created 9 destroyed 2  "
                         "widenings 11  snapshot_builds 17\n"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "peer_keys")) << r.out;
  EXPECT_TRUE(Has(r.out, "affinity_sessions 13\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "endpoints 6 (showing 0..5)")) << r.out;
  // Endpoint 1: in the aperture, connecting, 1 outstanding, 101 picks, 1 failure...
  EXPECT_TRUE(Has(r.out, "       1  10.0.1.1:443               1.000    0.5000   0.2500 *   "
                         "connecting             1        101        1 ok\n"))
      << r.out;
  // ...endpoint 2 draining, endpoint 3 widened and transient_failure,
  // endpoint 5 outside.
  EXPECT_TRUE(Has(r.out, "  draining 1 (removalGraceMs: never picked)\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "10.0.2.1:443               1.000    0.5000   0.2500 d   ready"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "10.0.3.1:443               1.000    0.5000   0.2500 w   transient_failure"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "        0 ejected\n")) << r.out;  // endpoint 3's failures, health
  EXPECT_TRUE(Has(r.out, "10.0.5.1:443               1.000    0.0000   0.0000     none"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "truncated"));
}

// The gray failures' bound (maxEjectionPercent, members out and the most
// that may be out) and the peers' failure share, in the table and the
// JSON.
TEST_F(AperturectlTest, TheEjectionBoundIsShown) {
  RegisteredInstance alpha("dns:///alpha.svc:443", 2);
  CtlRun r = Ctl("status " + addr_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "  members out 1  at most 2 (maxEjectionPercent 50)  peer_failure_share "
                         "25.00%\n"))
      << r.out;
  r = Ctl("status " + addr_ + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "\"max_ejection_percent\":50,\"members_out\":1,\"max_members_out\":2,"
                         "\"peer_failure_share\":0.25"))
      << r.out;
}

TEST_F(AperturectlTest, PeerDiscoveryIsShown) {
  RegisteredInstance alpha("dns:///alpha.svc:443", 2);
  alpha.SetPeers("dns:///clients.svc:80", "00000000c0ffee01", 3);
  CtlRun r = Ctl("status " + addr_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "coordinate 2/5 (peer_target)")) << r.out;
  EXPECT_TRUE(Has(r.out, "  peers dns:///clients.svc:80  count 5  fingerprint 00000000c0ffee01  "
                         "coordinate changes 3\n"))
      << r.out;
  r = Ctl("status " + addr_ + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "\"coordinate_source\":\"peer_target\",\"peer_target\":"
                         "\"dns:///clients.svc:80\",\"peer_fingerprint\":\"00000000c0ffee01\","
                         "\"coordinate_changes\":3"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "\"widenings\":11,\"snapshot_builds\":17,")) << r.out;
  EXPECT_TRUE(Has(r.out, ",\"peer_keys\":\"\",")) << r.out;
  alpha.SetPeerKeys("address");
  r = Ctl("status " + addr_ + " --json");
  EXPECT_TRUE(Has(r.out, "\"peer_keys\":\"address\"")) << r.out;
  r = Ctl("status " + addr_);
  EXPECT_TRUE(Has(r.out, "  stable peer_keys address\n")) << r.out;
  // Without peer discovery there is no peers line.
  RegisteredInstance beta("dns:///beta.svc:443", 1);
  r = Ctl("status " + addr_ + " --target beta");
  EXPECT_FALSE(Has(r.out, "  peers ")) << r.out;
}

// True when `s` is well-formed UTF-8 (decoded independently of the code
// under test: lead byte, continuation bytes, shortest form, range).
bool IsValidUtf8(const std::string &s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1f) : n == 3 ? (b & 0x0f) : (b & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const unsigned char c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 2) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

// A channel's strings may hold anything: terminal escape sequences (here:
// set the window title, clear the screen) and bytes that are not UTF-8.
// The server sends the latter as U+FFFD; the table shows the controls as
// \xNN, the JSON escapes them.
TEST_F(AperturectlTest, ServerStringsCannotReachTheTerminalRaw) {
  const std::string evil = "dns:///evil\x1b]0;owned\x07\x1b[2J\x9b\xc2\x9b.svc\xff\xfe:443";
  RegisteredInstance bad(evil, 2);
  CtlRun table = Ctl("status " + addr_);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(table.out.find('\x07'), std::string::npos);
  EXPECT_TRUE(IsValidUtf8(table.out));
  // The server sent each byte that is not UTF-8 as U+FFFD (what a raw one
  // looks like in aperturectl: HostileServerStringsAreEscapedInEveryOutput).
  EXPECT_TRUE(Has(table.out, "channel dns:///evil\\x1b]0;owned\\x07\\x1b[2J\xef\xbf\xbd\\xc2\\x9b.svc"
                             "\xef\xbf\xbd\xef\xbf\xbd:443\n"))
      << table.out;
  CtlRun json = Ctl("status " + addr_ + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.find('\x1b'), std::string::npos);
  EXPECT_TRUE(IsValidUtf8(json.out));
  EXPECT_TRUE(Has(json.out, "\"target\":\"dns:///evil\\u001b]0;owned\\u0007\\u001b[2J"
                            "\xef\xbf\xbd\\u009b.svc\xef\xbf\xbd\xef\xbf\xbd:443\""))
      << json.out;
}

TEST_F(AperturectlTest, FilterCapAndPaging) {
  RegisteredInstance alpha("dns:///alpha.svc:443", 2), big("dns:///big.svc:443", 1500);
  CtlRun only_big = Ctl("status " + addr_ + " --target big");
  ASSERT_EQ(only_big.exit_code, 0) << only_big.err;
  EXPECT_FALSE(Has(only_big.out, "alpha"));
  EXPECT_TRUE(Has(only_big.out, "endpoints 1500 (showing 0..999)")) << only_big.out;
  EXPECT_TRUE(Has(only_big.out, "truncated: more from --start 1000")) << only_big.out;

  CtlRun page = Ctl("status " + addr_ + " --target big --max-endpoints 10 --start 1495");
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_TRUE(Has(page.out, "endpoints 1500 (showing 1495..1499)")) << page.out;
  EXPECT_TRUE(Has(page.out, "10.5.219.1:443")) << page.out;  // endpoint 1499
  EXPECT_FALSE(Has(page.out, "truncated"));

  CtlRun none = Ctl("status " + addr_ + " --target nothing-matches");
  ASSERT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.out, "no aperture channels\n");
}

TEST_F(AperturectlTest, JsonIsValidAndComplete) {
  RegisteredInstance alpha("dns:///alpha.svc:443", 6), beta("dns:///\"quoted\".svc", 1200);
  CtlRun r = Ctl("status " + addr_ + " --json --max-endpoints 1100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.out, "\"address\":"), 6u + 1100u);
  EXPECT_TRUE(Has(r.out, "\"target\":\"dns:///\\\"quoted\\\".svc\"")) << r.out.substr(0, 400);
  EXPECT_TRUE(Has(r.out, "\"truncated\":true,\"next_start_index\":1100"));
  EXPECT_TRUE(Has(r.out, "\"connectivity\":\"transient_failure\""));
  EXPECT_TRUE(Has(r.out, "\"affinity_sessions\":13,"));
  // A JSON parser must accept it and see the same structure.
  const char *tmp = getenv("TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/status.json";
  std::ofstream(path) << r.out;
  std::string check =
      "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d[\"rings\"]; "
      "assert len(r)==2 and r[0][\"peer_count\"]==5 and len(r[1][\"endpoints\"])==1100 "
      "and r[0][\"endpoints\"][3][\"widened\"] is True and r[0][\"draining\"]==1 "
      "and r[0][\"endpoints\"][2][\"draining\"] is True "
      "and r[0][\"endpoints\"][3][\"draining\"] is False, r' " + path;
  EXPECT_EQ(system(check.c_str()), 0);
}

// The pick metric and, where the metric records them, each endpoint's
// reported utilization or latency average: in the table, the JSON and the
// Prometheus text. Without a load metric the table has no load columns.
TEST_F(AperturectlTest, PickMetricAndLoadAreShown) {
  RegisteredInstance orca("dns:///orca.svc:443", 6), ewma("dns:///ewma.svc:443", 6),
      plain("dns:///plain.svc:443", 2);
  orca.SetPickMetric("orca");
  ewma.SetPickMetric("peakEwma");
  plain.SetPickMetric("outstanding");
  CtlRun t = Ctl("status " + addr_ + " --target orca.svc");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_TRUE(Has(t.out, "  pick_metric orca\n")) << t.out;
  EXPECT_TRUE(Has(t.out, "FAILS   UTIL    LAT_MS HEALTH\n")) << t.out;
  // Endpoint 1 reports 0.25, endpoint 4 nothing.
  EXPECT_TRUE(Has(t.out, "        101        1  0.250         - ok\n")) << t.out;
  EXPECT_TRUE(Has(t.out, "        104        1      -         - ok\n")) << t.out;
  CtlRun e = Ctl("status " + addr_ + " --target ewma.svc");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(Has(e.out, "  pick_metric peakEwma\n")) << e.out;
  EXPECT_TRUE(Has(e.out, "        102        2      -     4.500 ok\n")) << e.out;
  CtlRun p = Ctl("status " + addr_ + " --target plain.svc");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(Has(p.out, "  pick_metric outstanding\n")) << p.out;
  EXPECT_FALSE(Has(p.out, "UTIL")) << p.out;

  CtlRun j = Ctl("status " + addr_ + " --json --target orca.svc");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_TRUE(Has(j.out, "\"pick_metric\":\"orca\"")) << j.out;
  EXPECT_TRUE(Has(j.out, "\"failures\":1,\"health\":\"ok\",\"ejections\":0,"
                         "\"ejection_reason\":\"none\",\"stuck_after_ms\":0,\"utilization\":0.25,"
                         "\"latency_ewma_ms\":-1}"))
      << j.out;

  CtlRun m = Ctl("metrics " + addr_);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_TRUE(Has(m.out, "pick_metric=\"orca\"")) << m.out;
  EXPECT_TRUE(Has(m.out, "# TYPE aperture_endpoint_utilization gauge\n")) << m.out;
  EXPECT_TRUE(Has(m.out, "aperture_endpoint_utilization{target=\"dns:///orca.svc:443\","
                         "address=\"10.0.2.1:443\"} 0.5\n"))
      << m.out;
  EXPECT_TRUE(Has(m.out, "aperture_endpoint_latency_ewma_seconds{target=\"dns:///ewma.svc:443\","
                         "address=\"10.0.0.1:443\"} 0.0015\n"))
      << m.out;
  // Endpoints without a sample have no sample line: 3 reporting endpoints
  // under orca, 4 under peakEwma.
  EXPECT_EQ(Count(m.out, "aperture_endpoint_utilization{"), 3u) << m.out;
  EXPECT_EQ(Count(m.out, "aperture_endpoint_latency_ewma_seconds{"), 4u) << m.out;
}

TEST_F(AperturectlTest, HealthCommand) {
  CtlRun ok = Ctl("health " + addr_);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "SERVING\n");
  CtlRun unknown = Ctl("health " + addr_ + " --service no.such.Service");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(Has(unknown.err, "NOT_FOUND")) << unknown.err;
}

TEST(AperturectlErrors, ConnectionRefusedExitsOne) {
  aperture_error err;
  aperture_status_server *s = nullptr;
  ASSERT_EQ(aperture_status_server_start(nullptr, &s, &err), APERTURE_OK);
  std::string addr = "127.0.0.1:" + std::to_string(aperture_status_server_port(s));
  aperture_status_server_stop(s);
  CtlRun r = Ctl("status " + addr);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "cannot reach " + addr)) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(AperturectlErrors, SilentPeerHitsTheDeadline) {
  // A listening socket that never speaks HTTP/2: the kernel completes the
  // TCP handshake, gRPC waits for settings, the call deadline ends it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa), 0);
  ASSERT_EQ(listen(fd, 8), 0);
  socklen_t len = sizeof sa;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len), 0);
  std::string addr = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  CtlRun r = Ctl("status " + addr + " --timeout-ms 300");
  close(fd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "did not answer within 300 ms (DEADLINE_EXCEEDED)")) << r.err;
}

TEST(AperturectlErrors, UsageErrorsExitTwo) {
  for (const std::string &args :
       {std::string(""), std::string("status"), std::string("frobnicate 127.0.0.1:1"),
        std::string("status 127.0.0.1:1 --max-endpoints abc"),
        std::string("status 127.0.0.1:1 --max-endpoints -3"),
        std::string("status 127.0.0.1:1 --bogus"), std::string("status 127.0.0.1:1 --target"),
        std::string("status 127.0.0.1:1 --timeout-ms 0")}) {
    CtlRun r = Ctl(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  CtlRun help = Ctl("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Has(help.out, "aperturectl status ADDRESS"));
}

// The client's limits (the response's size, the memory to decode it) let
// the largest answer an aperture server sends through: 20,000 endpoints.
TEST_F(AperturectlTest, TheLargestAnswerFitsTheClientLimits) {
  RegisteredInstance a("ring-a", 10000), b("ring-b", 10000), c("ring-c", 10000);
  CtlRun r = Ctl("status " + addr_ + " --target ring- --max-endpoints 10000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.out, "\"address\":"), 20000u);
}

// ---- a server that is not aperture's, or is broken ----

// True when `out` holds no byte a terminal acts on: no C0 control but the
// newline, no DEL, no C1 control (U+0080..U+009F), and is valid UTF-8.
bool TerminalSafe(const std::string &out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(out[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < out.size() && static_cast<unsigned char>(out[i + 1]) <= 0x9f &&
        static_cast<unsigned char>(out[i + 1]) >= 0x80)
      return false;
  }
  return IsValidUtf8(out);
}

std::string Packed(const Aperture__V1__GetRingStateResponse &r) {
  std::string bytes(aperture__v1__get_ring_state_response__get_packed_size(&r), '\0');
  aperture__v1__get_ring_state_response__pack(&r, reinterpret_cast<uint8_t *>(&bytes[0]));
  return bytes;
}

std::string WriteTemp(const std::string &name, const std::string &text) {
  const char *tmp = getenv("TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Every string field of a response (ring and endpoint) holds a window
// title sequence, a screen clear, CR, a raw C1 CSI, a C1 control in UTF-8,
// bytes that are not UTF-8, a backslash and a quote. Table, JSON and
// metrics show none of it raw: each output is valid UTF-8 a terminal does
// not act on, the JSON parses, and both Prometheus parsers accept the
// metrics.
TEST(AperturectlHostile, HostileServerStringsAreEscapedInEveryOutput) {
  const std::string evil_text = "x\x1b]0;owned\x07\x1b[2J\r\x9b\xc2\x9b\xff\xfe\\\"y";
  char *evil = const_cast<char *>(evil_text.c_str());
  Aperture__V1__EndpointState e = APERTURE__V1__ENDPOINT_STATE__INIT;
  e.address = evil;
  e.health = evil;
  e.ejection_reason = evil;
  e.utilization = 0.5;
  e.latency_ewma_ms = 2;
  Aperture__V1__EndpointState *endpoints[] = {&e};
  Aperture__V1__RingState rings[2];
  Aperture__V1__RingState *ring_ptrs[2];
  std::string targets[2] = {evil_text + "0", evil_text + "1"};  // one series each
  for (int i = 0; i < 2; ++i) {
    Aperture__V1__RingState &g = rings[i];
    aperture__v1__ring_state__init(&g);
    g.target = &targets[i][0];
    g.mode = g.coordinate_source_name = g.fingerprint = g.last_status = evil;
    g.peer_target = g.peer_fingerprint = g.peer_keys = evil;
    // The second ring under a load metric: the table's load columns too.
    g.pick_metric = i == 0 ? evil : const_cast<char *>("orca");
    g.peer_count = 3;
    g.endpoint_count = 1;
    g.n_endpoints = 1;
    g.endpoints = endpoints;
    ring_ptrs[i] = &g;
  }
  Aperture__V1__GetRingStateResponse response = APERTURE__V1__GET_RING_STATE_RESPONSE__INIT;
  response.n_rings = 2;
  response.rings = ring_ptrs;
  CannedServer server(Packed(response));
  ASSERT_TRUE(server.listening());

  CtlRun table = Ctl("status " + server.address());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(TerminalSafe(table.out)) << table.out;
  // Escaped, not dropped: the channel line and the HEALTH column.
  const std::string shown = "x\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x9b\\xc2\\x9b\\xff\\xfe\\\\\"y";
  EXPECT_TRUE(Has(table.out, "channel " + shown + "0\n")) << table.out;
  EXPECT_TRUE(Has(table.out, "\n       0  " + shown + "   0.000 ")) << table.out;  // ADDRESS
  EXPECT_TRUE(Has(table.out, "        0 " + shown + "\n")) << table.out;   // HEALTH
  EXPECT_TRUE(Has(table.out, " 0.500     2.000 " + shown + "\n")) << table.out;

  CtlRun json = Ctl("status " + server.address() + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(TerminalSafe(json.out)) << json.out;
  const std::string json_path = WriteTemp("hostile.json", json.out);
  const std::string check =
      "python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding=\"utf-8\")); "
      "t=d[\"rings\"][0][\"target\"]; "
      "assert t == \"x\\x1b]0;owned\\x07\\x1b[2J\\r\\ufffd\\x9b\\ufffd\\ufffd\\\\\\\"y0\", repr(t); "
      "assert d[\"rings\"][1][\"endpoints\"][0][\"health\"] == t[:-1]' " + json_path;
  EXPECT_EQ(system(check.c_str()), 0) << json.out;

  CtlRun metrics = Ctl("metrics " + server.address());
  ASSERT_EQ(metrics.exit_code, 0) << metrics.err;
  EXPECT_TRUE(TerminalSafe(metrics.out)) << metrics.out;
  const std::string metrics_path = WriteTemp("hostile.prom", metrics.out);
  const char *srcdir = getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr);
  const std::string parse = std::string("/usr/bin/python3 '") + srcdir +
                            "/aperture/tests/status/parse_metrics.py' '" + metrics_path +
                            "' > /dev/null";
  EXPECT_EQ(system(parse.c_str()), 0) << metrics.out;
}

// A response of empty endpoint messages: 3 bytes each on the wire, a
// struct of their own once decoded. Four MiB of them (1.4 million) would
// take some 400 MB to decode; aperturectl refuses them (exit 3) before
// decoding, and so does the health command with unknown fields.
TEST(AperturectlHostile, AResponseThatWouldCostGigabytesToDecodeIsRefused) {
  std::string ring;
  const std::string empty_endpoint("\xc2\x01\x00", 3);  // field 24, length 0
  while (ring.size() < (4u << 20) - 16) ring += empty_endpoint;
  std::string body = "\x0a";  // field 1 (rings), length-delimited
  for (size_t n = ring.size(); ; n >>= 7) {
    body += static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
    if (n < 0x80) break;
  }
  body += ring;
  CannedServer server(body);
  ASSERT_TRUE(server.listening());
  CtlRun r = Ctl("status " + server.address());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(Has(r.err, "more than 64 MiB to decode")) << r.err;
  EXPECT_EQ(r.out, "");
  // The health answer: a million 4-byte unknown fields.
  std::string unknown;
  while (unknown.size() < (4u << 20)) unknown += std::string("\x12\x02" "ab", 4);  // field 2
  CannedServer health(unknown);
  CtlRun h = Ctl("health " + health.address());
  EXPECT_EQ(h.exit_code, 3) << h.err;
  EXPECT_TRUE(Has(h.err, "more than 64 MiB to decode")) << h.err;
}

// A response larger than any status server sends (its answer budget plus a
// margin) is refused by the transport: the call fails (exit 1).
TEST(AperturectlHostile, AResponsePastTheLargestAnswerIsRefused) {
  std::string status(AP_STATUS_CLIENT_MAX_RESPONSE_BYTES + 1024, 'a');
  Aperture__V1__RingState g = APERTURE__V1__RING_STATE__INIT;
  g.last_status = &status[0];
  Aperture__V1__RingState *rings[] = {&g};
  Aperture__V1__GetRingStateResponse response = APERTURE__V1__GET_RING_STATE_RESPONSE__INIT;
  response.n_rings = 1;
  response.rings = rings;
  CannedServer server(Packed(response));
  ASSERT_TRUE(server.listening());
  CtlRun r = Ctl("status " + server.address());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Has(r.err, "RESOURCE_EXHAUSTED")) << r.err;
  EXPECT_EQ(r.out, "");
}

// The skew balance where it runs: its line and columns in the table, its
// fields in the JSON and its families in the metrics; none of it where it
// does not run.
TEST_F(AperturectlTest, SkewBalanceIsShownWhereItRuns) {
  RegisteredInstance heavy("dns:///heavy.svc:443", 6), quiet("dns:///quiet.svc:443", 2);
  heavy.SetPickMetric("orca");
  heavy.SetSkew("heavy");
  quiet.SetPickMetric("orca");
  CtlRun t = Ctl("status " + addr_ + " --target heavy.svc");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_TRUE(Has(t.out, "  skew heavy  own 800.0 calls/s  others 100.0  ratio 8.00  width x4\n"))
      << t.out;
  EXPECT_TRUE(Has(t.out, "FAILS   UTIL    LAT_MS FACTOR      RPS  OWN_RPS HEALTH\n")) << t.out;
  // Endpoint 1: factor 1.0, 100 calls/s reported, 200 its own.
  EXPECT_TRUE(Has(t.out, "  0.250         -  1.000    100.0    200.0 ok\n")) << t.out;
  // Endpoint 0: no report; endpoint 3: not measured.
  EXPECT_TRUE(Has(t.out, "  0.000         -  0.500        -    200.0 ok\n")) << t.out;
  EXPECT_TRUE(Has(t.out, "  2.000    300.0        - ejected\n")) << t.out;
  CtlRun q = Ctl("status " + addr_ + " --target quiet.svc");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_FALSE(Has(q.out, "skew")) << q.out;
  EXPECT_FALSE(Has(q.out, "FACTOR")) << q.out;

  CtlRun j = Ctl("status " + addr_ + " --json --target heavy.svc");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_TRUE(Has(j.out, "\"skew_reason\":\"heavy\",\"skew_own_rate\":800,"
                         "\"skew_others_rate\":100,\"skew_ratio\":8,\"skew_multiplier\":4"))
      << j.out;
  EXPECT_TRUE(Has(j.out, "\"weight_factor\":1,\"reported_rps\":100,\"own_rate\":200,"))
      << j.out;

  CtlRun m = Ctl("metrics " + addr_);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_TRUE(Has(m.out, "aperture_skew_others_rate{target=\"dns:///heavy.svc:443\"} 100\n"))
      << m.out;
  EXPECT_TRUE(Has(m.out, "aperture_skew_multiplier{target=\"dns:///heavy.svc:443\"} 4\n"))
      << m.out;
  EXPECT_FALSE(Has(m.out, "aperture_skew_multiplier{target=\"dns:///quiet.svc:443\"}")) << m.out;
  EXPECT_TRUE(Has(m.out, "aperture_endpoint_weight_factor{target=\"dns:///heavy.svc:443\","
                         "address=\"10.0.3.1:443\"} 2\n"))
      << m.out;
  EXPECT_TRUE(Has(m.out, "aperture_endpoint_reported_rps{target=\"dns:///heavy.svc:443\","
                         "address=\"10.0.2.1:443\"} 200\n"))
      << m.out;
  EXPECT_FALSE(Has(m.out, "aperture_endpoint_reported_rps{target=\"dns:///heavy.svc:443\","
                          "address=\"10.0.0.1:443\"}"))
      << m.out;
}

}  // namespace
