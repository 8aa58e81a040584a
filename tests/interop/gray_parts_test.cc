// The parts of the gray scenario as real processes on 127.0.0.1: the
// server's --slow-latency-ms switched by SIGUSR1/SIGUSR2, the no_answer
// listener (TCP without HTTP/2), and the client's --call-log naming the
// connection of a call that timed out on a frozen (SIGSTOPped) server.
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <grpc/grpc.h>
#include <gtest/gtest.h>

#include "grpc/testing/messages.pb-c.h"
#include "interop/common/proc.h"
#include "interop/common/unary_call.h"
#include "tests/interop/fleet_helper.h"

namespace {

class GrayPartsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { grpc_init(); }
  static void TearDownTestSuite() { grpc_shutdown(); }
};

// A process of the test: stopped (after SIGCONT: never left stopped) when
// destroyed, also when an assertion fails.
struct Proc {
  proc *p = nullptr;
  int port = -1;
  Proc(const std::vector<std::string> &args, const std::string &log) {
    std::vector<char *> argv;
    for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    p = io_proc_start(argv.data(), log.c_str());
    char line[128] = "";
    if (p != nullptr && io_proc_wait_line(p, "listening ", 10000, line, sizeof(line)) == 0) {
      const char *colon = strrchr(line, ':');
      port = colon ? atoi(colon + 1) : -1;
    }
  }
  ~Proc() {
    if (p == nullptr) return;
    io_proc_signal(p, SIGCONT);
    io_proc_stop(p, 5000);
  }
  int Stop() {  // SIGTERM; the wait status
    int status = io_proc_stop(p, 5000);
    p = nullptr;
    return status;
  }
};

std::string ReadFile(const std::string &path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Waits up to 5 s for `text` in the file.
bool WaitForText(const std::string &path, const std::string &text) {
  for (int i = 0; i < 250; i++) {
    if (ReadFile(path).find(text) != std::string::npos) return true;
    usleep(20000);
  }
  return false;
}

grpc_status_code Call(const std::string &target, int timeout_ms) {
  grpc_channel *ch = io_unary_channel_create(target.c_str(), nullptr);
  Grpc__Testing__SimpleRequest req = GRPC__TESTING__SIMPLE_REQUEST__INIT;
  unary_result r;
  EXPECT_EQ(0, io_unary_call(ch, "/grpc.testing.TestService/UnaryCall", &req.base,
                             &grpc__testing__simple_response__descriptor, nullptr, nullptr,
                             timeout_ms, &r));
  grpc_status_code code = r.code;
  io_unary_result_free(&r);
  grpc_channel_destroy(ch);
  return code;
}

TEST_F(GrayPartsTest, SlowLatencyIsSwitchedOnBySigusr1AndOffBySigusr2) {
  std::string dir = TempDir("gray_slow");
  Proc server({InteropBinary("server"), "--port", "0", "--hostname", "s0", "--slow-latency-ms",
               "3000"},
              dir + "/server.log");
  ASSERT_GT(server.port, 0);
  std::string target = "ipv4:127.0.0.1:" + std::to_string(server.port);
  EXPECT_EQ(GRPC_STATUS_OK, Call(target, 2000));  // not slow until told
  ASSERT_EQ(0, io_proc_signal(server.p, SIGUSR1));
  ASSERT_TRUE(WaitForText(dir + "/server.log", "slow latency 3000 ms"));
  EXPECT_EQ(GRPC_STATUS_DEADLINE_EXCEEDED, Call(target, 300));  // held 3 s
  ASSERT_EQ(0, io_proc_signal(server.p, SIGUSR2));
  ASSERT_TRUE(WaitForText(dir + "/server.log", "slow latency 0 ms"));
  EXPECT_EQ(GRPC_STATUS_OK, Call(target, 2000));
  int status = server.Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(GrayPartsTest, NoAnswerAcceptsConnectionsAndNeverAnswers) {
  std::string dir = TempDir("gray_no_answer");
  Proc listener({InteropBinary("no_answer"), "--port", "0"}, dir + "/no_answer.log");
  ASSERT_GT(listener.port, 0);
  EXPECT_EQ(GRPC_STATUS_DEADLINE_EXCEEDED,
            Call("ipv4:127.0.0.1:" + std::to_string(listener.port), 500));
  int status = listener.Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::string log = ReadFile(dir + "/no_answer.log");
  EXPECT_NE(std::string::npos, log.find("accepted 1 connections")) << log;
}

TEST_F(GrayPartsTest, NoAnswerRefusesBadFlags) {
  std::string dir = TempDir("gray_no_answer_flags");
  for (std::vector<std::string> args :
       {std::vector<std::string>{}, {"--port", "x"}, {"--port", "0", "--host", "nowhere"},
        {"--bogus"}}) {
    args.insert(args.begin(), InteropBinary("no_answer"));
    Proc p(args, dir + "/log");
    EXPECT_EQ(-1, p.port);
    int status = p.Stop();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << args.back();
  }
}

// Two servers under round_robin, s1 frozen while the client runs: the calls
// sent to it time out, and the call log names s1's address for them (not
// the channel's target, which is what gRPC reports as their peer once they
// are cancelled).
TEST_F(GrayPartsTest, CallLogNamesTheFrozenServerOfTimedOutCalls) {
  std::string dir = TempDir("gray_call_log");
  std::string stats1 = dir + "/s1.json";
  Proc s0({InteropBinary("server"), "--port", "0", "--hostname", "s0"}, dir + "/s0.log");
  Proc s1({InteropBinary("server"), "--port", "0", "--hostname", "s1", "--stats-file", stats1,
           "--stats-interval-ms", "20"},
          dir + "/s1.log");
  ASSERT_GT(s0.port, 0);
  ASSERT_GT(s1.port, 0);
  std::string a1 = "127.0.0.1:" + std::to_string(s1.port);
  std::string target = "ipv4:127.0.0.1:" + std::to_string(s0.port) + "," + a1;
  std::string log = dir + "/calls.txt";
  // 300 calls at 100/s (3 s); s1 is stopped once it has answered calls,
  // so that the client's connection to it is up.
  Child client(InteropBinary("client"),
               {"--target", target, "--lb", "round_robin", "--calls", "300", "--rate", "100",
                "--concurrency", "4", "--timeout-ms", "300", "--call-log", log},
               dir + "/client.log");
  ASSERT_TRUE(client.started());
  bool answered = false;
  for (int i = 0; i < 250 && !answered; i++) {
    Json st = ReadJson(stats1);
    answered = st && Num(st.get(), "calls") > 0;
    if (!answered) usleep(20000);
  }
  ASSERT_TRUE(answered) << "s1 answered no call";
  ASSERT_EQ(0, io_proc_signal(s1.p, SIGSTOP));
  usleep(1000000);
  ASSERT_EQ(0, io_proc_signal(s1.p, SIGCONT));
  int status = client.Wait(30000);
  ASSERT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::istringstream lines(ReadFile(log));
  std::string line;
  int n = 0, ok = 0, timed_out_on_s1 = 0;
  while (std::getline(lines, line)) {
    long long start, latency;
    int code;
    char server[256];
    ASSERT_EQ(4, sscanf(line.c_str(), "%lld %lld %d %255s", &start, &latency, &code, server))
        << line;
    EXPECT_GT(start, 0);
    EXPECT_GE(latency, 0);
    n++;
    if (code == 0) {
      EXPECT_TRUE(std::string(server) == "s0" || std::string(server) == "s1") << line;
      ok++;
    } else {
      // every failed call is named by the connection it was on
      EXPECT_EQ(GRPC_STATUS_DEADLINE_EXCEEDED, code) << line;
      EXPECT_EQ("ipv4:" + a1, std::string(server)) << line;
      timed_out_on_s1++;
    }
  }
  EXPECT_EQ(300, n);
  EXPECT_GT(ok, 0);
  EXPECT_GT(timed_out_on_s1, 0);
}

}  // namespace
