// The status flood's view of its own process: resident memory (VmRSS of
// /proc/self/status) and open file descriptors (/proc/self/fd), sampled on
// a thread of its own, with the largest values seen since the last reset.
#ifndef APERTURE_TESTS_STATUS_PROCESS_GAUGE_H
#define APERTURE_TESTS_STATUS_PROCESS_GAUGE_H

#include <stddef.h>

#include <atomic>
#include <thread>

namespace aperture_test {

// VmRSS in KiB now; 0 when /proc cannot be read.
size_t ResidentKib();
// Open descriptors now (the one used to count them not included).
size_t OpenFds();

class ProcessGauge {
 public:
  // Samples every `period_ms` until destroyed.
  explicit ProcessGauge(int period_ms);
  ~ProcessGauge();
  ProcessGauge(const ProcessGauge&) = delete;
  ProcessGauge& operator=(const ProcessGauge&) = delete;

  // Starts a new maximum from the values now.
  void Reset();
  size_t MaxRssKib() const { return max_rss_kib_.load(); }
  size_t MaxFds() const { return max_fds_.load(); }

 private:
  void Sample();

  const int period_ms_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> max_rss_kib_{0};
  std::atomic<size_t> max_fds_{0};
  std::thread thread_;
};

}  // namespace aperture_test

#endif  // APERTURE_TESTS_STATUS_PROCESS_GAUGE_H
