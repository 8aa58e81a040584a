// The status flood itself, run in a process of its own (so that the
// measured process's memory and descriptors are the server's alone):
//
//   readers:     threads with a gRPC channel each (a connection of their
//                own) calling GetRingState back to back and reading every
//                answer; after RESOURCE_EXHAUSTED they retry 10 ms later,
//                as the message asks, and after any other failure 50 ms;
//   non-readers: connections that start `streams` GetRingState calls for
//                the largest page each, over raw HTTP/2, and never read
//                (h2_nonreader.h), opened once the readers are connected.
//
// Bounded: it returns after `duration_ms`, having closed every connection
// and joined every thread.
#ifndef APERTURE_TESTS_STATUS_FLOOD_CLIENTS_H
#define APERTURE_TESTS_STATUS_FLOOD_CLIENTS_H

#include <stdint.h>

namespace aperture_test {

struct FloodOptions {
  int port = 0;
  int duration_ms = 4000;
  int readers = 2;
  uint32_t reader_page = 1000;
  int nonreaders = 200;
  int streams = 16;  // the admin server's most per connection
  uint32_t nonreader_page = 5000;  // answers of 300 KB held fill the budget
};

struct FloodReport {
  long answered = 0;       // readers' calls answered OK
  long refused = 0;        // answered RESOURCE_EXHAUSTED
  long failed = 0;         // other failures (e.g. a connection past the cap)
  long nonreaders_open = 0;    // non-reading connections the server kept
  long nonreaders_closed = 0;  // closed by the server (at its cap)
};

FloodReport RunFlood(const FloodOptions& options);

}  // namespace aperture_test

#endif  // APERTURE_TESTS_STATUS_FLOOD_CLIENTS_H
