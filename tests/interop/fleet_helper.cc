#include "tests/interop/fleet_helper.h"

#include "interop/fleet/fleet_dnsmasq.h"

#include <signal.h>
#include <stdlib.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>

Json ReadJson(const std::string &path) {
  char err[200];
  return Json(io_json_parse_file(path.c_str(), err, sizeof(err)));
}

const json_value *FindRow(const json_value *rows, const char *field,
                          const std::string &value) {
  for (size_t i = 0; i < io_json_size(rows); i++) {
    const json_value *row = io_json_at(rows, i);
    if (value == io_json_string(io_json_get(row, field))) return row;
  }
  return nullptr;
}

const json_value *FindRun(const json_value *report, const std::string &scenario,
                          const std::string &mode) {
  const json_value *runs = io_json_get(report, "runs");
  for (size_t i = 0; i < io_json_size(runs); i++) {
    const json_value *r = io_json_at(runs, i);
    if (scenario == io_json_string(io_json_get(r, "scenario")) &&
        mode == io_json_string(io_json_get(r, "mode"))) {
      return r;
    }
  }
  return nullptr;
}

double Num(const json_value *v, const char *a, const char *b) {
  return b ? io_json_get_number(io_json_get(v, a), b, -1) : io_json_get_number(v, a, -1);
}

Child::Child(const std::string &binary, const std::vector<std::string> &args,
             const std::string &stderr_path) {
  std::vector<char *> argv;
  argv.push_back(const_cast<char *>(binary.c_str()));
  for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  p_ = io_proc_start(argv.data(), stderr_path.empty() ? nullptr : stderr_path.c_str());
}

Child::~Child() {
  if (p_) io_proc_stop(p_, 5000);
}

std::string Child::WaitLine(const std::string &prefix, int timeout_ms) {
  char buf[512];
  if (p_ == nullptr || io_proc_wait_line(p_, prefix.c_str(), timeout_ms, buf, sizeof(buf)) != 0) {
    return "";
  }
  return buf;
}

int Child::Terminate(int timeout_ms) {
  if (p_ == nullptr) return -1;
  io_proc_signal(p_, SIGTERM);
  return Wait(timeout_ms);
}

int Child::Wait(int timeout_ms) {
  int status = 0;
  if (p_ == nullptr || io_proc_wait(p_, timeout_ms, &status) != 0) return -1;
  return status;
}

void Child::Kill9() {
  if (p_) io_proc_signal(p_, SIGKILL);
}

std::string NoDnsmasq() {
  char path[4096];
  if (io_fleet_dnsmasq_find(path, sizeof(path)) == 0) return "";
  return "no dnsmasq here (Debian's dnsmasq-base; bazel/setup.sh installs it): the fleet's DNS "
         "scenarios need it";
}

std::string InteropBinary(const std::string &name) {
  // The binaries live in interop's sub-packages.
  const std::string rel = name == "fleet" ? "fleet/fleet" : "testing/" + name;
  char path[4096];
  if (io_proc_find_binary(nullptr, rel.c_str(), path, sizeof(path)) != 0) return "";
  return path;
}

std::string TempDir(const std::string &tag) {
  static std::atomic<int> counter{0};
  const char *base = getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/" + tag + "." +
                    std::to_string(getpid()) + "." + std::to_string(counter++);
  mkdir(dir.c_str(), 0755);
  return dir;
}

namespace {
std::string *g_tails;
size_t g_tail_bytes;
int AppendTail(const char *path, const struct stat *st, int type, struct FTW *) {
  const size_t n = strlen(path);
  if (type != FTW_F || n < 4 || strcmp(path + n - 4, ".log") != 0) return 0;
  if (g_tails->size() > 16384) return 1;
  FILE *f = fopen(path, "r");
  if (f == nullptr) return 0;
  const long size = st->st_size;
  const long from = size > (long)g_tail_bytes ? size - (long)g_tail_bytes : 0;
  fseek(f, from, SEEK_SET);
  std::string text(static_cast<size_t>(size - from), '\0');
  text.resize(fread(&text[0], 1, text.size(), f));
  fclose(f);
  *g_tails += std::string("--- ") + path + "\n" + text + "\n";
  return 0;
}
}  // namespace

std::string LogTails(const std::string &dir, size_t bytes) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::string out;
  g_tails = &out;
  g_tail_bytes = bytes;
  nftw(dir.c_str(), AppendTail, 8, FTW_PHYS);
  g_tails = nullptr;
  return out;
}

ServerSet::ServerSet(int n, const std::vector<std::string> &extra_args, const std::string &tag)
    : dir_(TempDir(tag)) {
  std::string bin = InteropBinary("server");
  for (int i = 0; i < n; i++) {
    std::vector<std::string> args = {"--port", "0", "--hostname", hostname(i),
                                     "--server-id", "id" + std::to_string(i),
                                     "--stats-file", dir_ + "/server" + std::to_string(i) + ".json",
                                     "--stats-interval-ms", "50"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    servers_.push_back(std::make_unique<Child>(bin, args, dir_ + "/server" + std::to_string(i) + ".log"));
    std::string line = servers_.back()->WaitLine("listening ");
    size_t colon = line.rfind(':');
    ports_.push_back(colon == std::string::npos ? -1 : atoi(line.c_str() + colon + 1));
  }
}

std::string ServerSet::Address(int i) const { return "127.0.0.1:" + std::to_string(ports_[i]); }

std::string ServerSet::Target() const {
  std::string t = "ipv4:";
  for (int i = 0; i < size(); i++) t += (i ? "," : "") + Address(i);
  return t;
}

Json ServerSet::Snapshot(int i) const {
  return ReadJson(dir_ + "/server" + std::to_string(i) + ".json");
}

Json ServerSet::Stop(int i) {
  int status = servers_[i]->Terminate();
  if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return Json();
  return ReadJson(dir_ + "/server" + std::to_string(i) + ".json");
}

std::vector<Json> ServerSet::StopAll() {
  std::vector<Json> out;
  for (int i = 0; i < size(); i++) out.push_back(Stop(i));
  return out;
}

Json RunClient(const std::vector<std::string> &args, const std::string &dir, int timeout_ms) {
  static std::atomic<int> counter{0};
  std::string summary = dir + "/client" + std::to_string(counter++) + ".json";
  std::vector<std::string> all = args;
  all.push_back("--summary-file");
  all.push_back(summary);
  Child c(InteropBinary("client"), all, dir + "/client.log");
  int status = c.Wait(timeout_ms);
  if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return Json();
  return ReadJson(summary);
}
