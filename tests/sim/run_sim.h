// Runs the real simulator (//interop:sim, a data dependency of the test) as
// a child process; stdout and stderr go to files so neither pipe can fill
// up and block the child.
#ifndef APERTURE_TESTS_SIM_RUN_SIM_H
#define APERTURE_TESTS_SIM_RUN_SIM_H

#include <fcntl.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace run_sim {

struct Result {
  int exit_code = -1;
  std::string out, err;
};

inline std::string SimPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (srcdir && ws) return std::string(srcdir) + "/" + ws + "/interop/sim/sim";
  return "interop/sim/sim";
}

inline std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/" + name + "." + std::to_string(getpid());
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How the child process differs from the test's own (for checks that the
// output depends on nothing but the arguments).
struct Env {
  bool replace_env = false;      // run with exactly `env` as its environment
  std::vector<std::string> env;  // "NAME=value" entries
  std::string cwd;               // working directory ("" = the test's)
  bool one_cpu = false;          // pinned to the first CPU it may use
  bool no_aslr = false;          // address space randomisation off
};

// Runs the simulator with `args` (argv[1..]) in `how` and waits for it.
inline Result RunSim(const std::vector<std::string>& args, const Env& how) {
  std::string out_path = TempPath("out"), err_path = TempPath("err");
  std::string bin = SimPath();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(bin.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : how.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  Result r;
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0) _exit(127);
    dup2(out, 1);
    dup2(err, 2);
    if (!how.cwd.empty() && chdir(how.cwd.c_str()) != 0) _exit(126);
    if (how.one_cpu) {
      cpu_set_t set;
      if (sched_getaffinity(0, sizeof set, &set) != 0) _exit(126);
      int first = 0;
      while (first < CPU_SETSIZE && !CPU_ISSET(first, &set)) first++;
      CPU_ZERO(&set);
      CPU_SET(first, &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(126);
    }
    if (how.no_aslr && personality(ADDR_NO_RANDOMIZE) == -1) _exit(126);
    if (how.replace_env) {
      execve(bin.c_str(), argv.data(), envp.data());
    } else {
      execv(bin.c_str(), argv.data());
    }
    _exit(127);
  }
  if (pid < 0) return r;
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return r;
}

// Runs the simulator with `args` as the test runs and waits for it.
inline Result RunSim(const std::vector<std::string>& args) { return RunSim(args, Env()); }

}  // namespace run_sim

#endif  // APERTURE_TESTS_SIM_RUN_SIM_H
