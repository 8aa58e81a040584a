#include "tests/status/process_gauge.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>

namespace aperture_test {

size_t ResidentKib() {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  size_t kib = 0;
  while (fgets(line, sizeof line, f) != nullptr) {
    if (strncmp(line, "VmRSS:", 6) == 0) {
      kib = strtoull(line + 6, nullptr, 10);
      break;
    }
  }
  fclose(f);
  return kib;
}

size_t OpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return 0;
  size_t n = 0;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') n++;
  }
  closedir(d);
  return n > 0 ? n - 1 : 0;  // the directory's own descriptor
}

ProcessGauge::ProcessGauge(int period_ms) : period_ms_(period_ms) {
  Reset();
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      Sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
    }
  });
}

ProcessGauge::~ProcessGauge() {
  stop_.store(true);
  thread_.join();
}

void ProcessGauge::Reset() {
  max_rss_kib_.store(ResidentKib());
  max_fds_.store(OpenFds());
}

void ProcessGauge::Sample() {
  const size_t rss = ResidentKib(), fds = OpenFds();
  size_t seen = max_rss_kib_.load();
  while (rss > seen && !max_rss_kib_.compare_exchange_weak(seen, rss)) {
  }
  seen = max_fds_.load();
  while (fds > seen && !max_fds_.compare_exchange_weak(seen, fds)) {
  }
}

}  // namespace aperture_test
