// Real interop processes for tests: servers and clients started from the
// Bazel runfiles, each in its own process group, always stopped by the
// destructor (also when an assertion fails).
#ifndef APERTURE_TESTS_INTEROP_FLEET_HELPER_H
#define APERTURE_TESTS_INTEROP_FLEET_HELPER_H

#include <memory>
#include <string>
#include <vector>

#include "interop/common/json_read.h"
#include "interop/common/proc.h"

struct JsonDeleter {
  void operator()(json_value *v) const { io_json_free(v); }
};
using Json = std::unique_ptr<json_value, JsonDeleter>;

// Parses a file; empty pointer when missing or malformed.
Json ReadJson(const std::string &path);

// The first element of the JSON array `rows` whose string `field` equals
// `value`; nullptr when none does (or rows is not an array).
const json_value *FindRow(const json_value *rows, const char *field,
                          const std::string &value);

// The run of a fleet report ("runs") with this scenario and mode; nullptr
// when there is none.
const json_value *FindRun(const json_value *report, const std::string &scenario,
                          const std::string &mode);

// The number at v.a, or at v.a.b when b is given; -1 when missing.
double Num(const json_value *v, const char *a, const char *b = nullptr);

// A started process; stopped (SIGTERM, then SIGKILL) when destroyed.
class Child {
 public:
  Child(const std::string &binary, const std::vector<std::string> &args,
        const std::string &stderr_path);
  ~Child();
  Child(const Child &) = delete;
  Child &operator=(const Child &) = delete;
  bool started() const { return p_ != nullptr; }
  // Rest of the first stdout line starting with prefix; "" on timeout.
  std::string WaitLine(const std::string &prefix, int timeout_ms = 10000);
  // SIGTERM + wait; returns the wait status, or -1 on timeout.
  int Terminate(int timeout_ms = 10000);
  // Waits for a normal exit; returns the wait status, or -1 on timeout.
  int Wait(int timeout_ms);
  void Kill9();

 private:
  proc *p_ = nullptr;
};

// Why the fleet's DNS scenarios cannot run here (no dnsmasq binary: they
// use Debian's dnsmasq, interop/fleet/fleet_dnsmasq.h); "" when they can.
// For GTEST_SKIP.
std::string NoDnsmasq();

// Path of an interop binary ("server", "client", "fleet") in the runfiles.
std::string InteropBinary(const std::string &name);

// A fresh directory under TEST_TMPDIR.
std::string TempDir(const std::string &tag);

// For a failed fleet run: the end of every .log file under `dir` (the
// runner's, the servers', the clients'), at most `bytes` of each and 16 KiB
// in all, each headed by its path.
std::string LogTails(const std::string &dir, size_t bytes = 600);

// N interop servers on 127.0.0.1 (ephemeral ports), hostnames s0..sN-1,
// stats files in dir.
class ServerSet {
 public:
  ServerSet(int n, const std::vector<std::string> &extra_args = {},
            const std::string &tag = "servers");
  ~ServerSet() = default;
  int size() const { return static_cast<int>(servers_.size()); }
  int port(int i) const { return ports_[i]; }
  std::string hostname(int i) const { return "s" + std::to_string(i); }
  // ipv4:127.0.0.1:p0,127.0.0.1:p1,...
  std::string Target() const;
  std::string Address(int i) const;
  // Server i's latest stats file (rewritten every 50 ms while it runs).
  Json Snapshot(int i) const;
  // SIGTERMs server i, checks it exited 0, returns its final stats.
  Json Stop(int i);
  // Final stats of every server (stops them all).
  std::vector<Json> StopAll();
  std::string dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<std::unique_ptr<Child>> servers_;
  std::vector<int> ports_;
};

// Runs the interop client to completion with `args` (summary to a file in
// dir); returns the summary, empty on failure.
Json RunClient(const std::vector<std::string> &args, const std::string &dir,
               int timeout_ms = 60000);

#endif
