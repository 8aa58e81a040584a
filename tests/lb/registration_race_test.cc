// Registration racing the first channel: threads call aperture_register()
// while other threads create the process's first channels (which makes gRPC
// build its configuration). Whatever the order, the process must not abort
// and aperture_register()'s answer must match gRPC's built configuration.
// gRPC builds its configuration once per process, so every trial is a fresh
// process: the test re-executes itself with --trial=N.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <gtest/gtest.h>

#include "aperture.h"
#include "src/core/lib/config/core_configuration.h"
#include "src/core/lib/load_balancing/lb_policy_registry.h"

extern char** environ;

namespace {

// Trial exit codes.
constexpr int kIncluded = 0;     // register said OK; the policy is in
constexpr int kLate = 1;         // register said too late; the policy is out
constexpr int kLiedOk = 2;       // register said OK; the policy is out
constexpr int kLiedLate = 3;     // register said too late; the policy is in
constexpr int kMixed = 4;        // the registering threads disagreed
constexpr int kIsRegistered = 5; // aperture_is_registered() disagreed

constexpr int kThreads = 8;  // half register, half create channels
constexpr int kChannelsPerThread = 3;

// Busy work that shifts one side of the race by a trial-dependent amount
// (no clock involved: the spread, not its size, matters).
void Spin(int rounds) {
  volatile unsigned sink = 0;
  for (int i = 0; i < rounds * 2000; ++i) sink += i;
}

int RunTrial(int trial) {
  grpc_init();
  std::atomic<int> arrived{0};
  std::atomic<bool> go{false};
  std::atomic<int> said_ok{0}, said_late{0};
  std::vector<grpc_channel*> channels(kThreads * kChannelsPerThread, nullptr);
  std::vector<std::thread> threads;
  // Even trials delay the registering threads, odd ones the channel makers.
  const int delay = (trial / 2) % 40;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      arrived.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      const bool registers = t % 2 == 0;
      if (registers == (trial % 2 == 0)) Spin(delay);
      if (registers) {
        aperture_error err;
        int rc = aperture_register(&err);
        (rc == APERTURE_OK ? said_ok : said_late).fetch_add(1);
        if (rc != APERTURE_OK && rc != APERTURE_ESTATE) said_late.fetch_add(100);
      } else {
        for (int c = 0; c < kChannelsPerThread; ++c) {
          grpc_channel_credentials* creds = grpc_insecure_credentials_create();
          channels[t * kChannelsPerThread + c] =
              grpc_channel_create("127.0.0.1:1", creds, nullptr);
          grpc_channel_credentials_release(creds);
        }
      }
    });
  }
  while (arrived.load() < kThreads) {
  }
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  // Every channel is created, so the configuration is built; ask it.
  const bool in = grpc_core::CoreConfiguration::Get()
                      .lb_policy_registry()
                      .LoadBalancingPolicyExists("aperture", nullptr);
  const bool is_registered = aperture_is_registered() == 1;
  for (grpc_channel* c : channels)
    if (c != nullptr) grpc_channel_destroy(c);
  grpc_shutdown();
  const int ok = said_ok.load(), late = said_late.load();
  printf("trial %d: %d ok, %d late, policy %s\n", trial, ok, late,
         in ? "in" : "out");
  if (ok > 0 && late > 0) return kMixed;
  if (ok > 0 && !in) return kLiedOk;
  if (late > 0 && in) return kLiedLate;
  if (is_registered != in) return kIsRegistered;
  return in ? kIncluded : kLate;
}

// Runs one trial in a fresh process; returns its exit code, or -signal.
int SpawnTrial(int trial, bool autoregister) {
  std::string arg = "--trial=" + std::to_string(trial);
  char* argv[] = {const_cast<char*>("/proc/self/exe"),
                  const_cast<char*>(arg.c_str()), nullptr};
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (strncmp(*e, "APERTURE_NO_AUTOREGISTER=", 25) != 0)
      env_strings.push_back(*e);
  }
  env_strings.push_back(std::string("APERTURE_NO_AUTOREGISTER=") +
                        (autoregister ? "0" : "1"));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(const_cast<char*>(s.c_str()));
  envp.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv,
                  envp.data()) != 0) {
    return -1000;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1001;
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

// Explicit registration (automatic registration off) racing the first
// channels: 60 fresh processes with shifted timings.
TEST(RegistrationRace, ExplicitRegisterNeverAbortsAndTellsTheTruth) {
  int included = 0, late = 0;
  for (int trial = 0; trial < 60; ++trial) {
    int rc = SpawnTrial(trial, /*autoregister=*/false);
    ASSERT_TRUE(rc == kIncluded || rc == kLate)
        << "trial " << trial << " ended with "
        << (rc < 0 ? "signal " + std::to_string(-rc)
                   : "code " + std::to_string(rc));
    (rc == kIncluded ? included : late)++;
  }
  printf("%d trials registered in time, %d too late\n", included, late);
}

// Automatic registration (the default): the policy is in, whichever thread
// creates the first channel.
TEST(RegistrationRace, AutomaticRegistrationAlwaysIncludesThePolicy) {
  for (int trial = 0; trial < 10; ++trial) {
    EXPECT_EQ(SpawnTrial(trial, /*autoregister=*/true), kIncluded)
        << "trial " << trial;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strncmp(argv[1], "--trial=", 8) == 0) {
    return RunTrial(atoi(argv[1] + 8));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
