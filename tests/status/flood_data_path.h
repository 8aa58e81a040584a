// The data path the status flood measures, in the process that serves the
// status: sticky affinity under load on real parts.
//
//   calls: a real channel with the aperture policy ("affinity": "sticky")
//          over backends on 127.0.0.1, callers each making one call after
//          another, every call with a session key (more keys than
//          maxSessions, sessions idling out: the table evicts, places and
//          reclaims all the time); each call's latency;
//   picks: a picker built as the policy builds its own (the sticky router
//          over a session table, shared with a state publisher registered
//          with the status registry as the policy registers its own, so
//          every status query reads that table as it reads a channel's),
//          driven open loop by threads that also keep the CPU busy: a pick
//          is due every `pick_interval_us`, and its latency runs from when
//          it was due, so a pick that waits (for a lock, for the CPU) and
//          the picks due meanwhile all count.
//
// Samples go to the phase set with SetPhase(); they are read after Stop().
#ifndef APERTURE_TESTS_STATUS_FLOOD_DATA_PATH_H
#define APERTURE_TESTS_STATUS_FLOOD_DATA_PATH_H

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace aperture_test {

struct DataPathOptions {
  int backends = 12;
  int callers = 8;
  int pick_threads = 2;
  int pick_interval_us = 500;
  int burners = 2;  // threads that only spin, keeping the CPU saturated
  int keys = 20000;
  int max_sessions = 10000;
  int session_idle_ms = 1000;
  int phases = 16;  // SetPhase() takes 0..phases-1
};

// Latencies, log-spaced buckets 2% wide from 10 ns to about an hour.
class LatencyHistogram {
 public:
  LatencyHistogram();
  void Add(int64_t ns);
  void Merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  // The `q` quantile (0..1) in ns, to the bucket's upper edge; 0 when empty.
  double Quantile(double q) const;

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
};

struct PhaseSamples {
  LatencyHistogram calls;
  LatencyHistogram picks;
  uint64_t call_failures = 0;
  std::string first_failure;
};

class DataPath {
 public:
  explicit DataPath(const DataPathOptions& options);
  ~DataPath();
  DataPath(const DataPath&) = delete;
  DataPath& operator=(const DataPath&) = delete;

  // Starts the backends, the channel (until every member is READY), the
  // pick probe and every thread; false with *error when something failed.
  bool Start(std::string* error);
  // Samples from now go to `phase` (-1: dropped).
  void SetPhase(int phase) { phase_.store(phase); }
  // Stops and joins every thread (idempotent).
  void Stop();
  // What phase `phase` recorded, over every thread (after Stop()).
  PhaseSamples Collect(int phase) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<int> phase_{-1};
};

}  // namespace aperture_test

#endif  // APERTURE_TESTS_STATUS_FLOOD_DATA_PATH_H
