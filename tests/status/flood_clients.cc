#include "tests/status/flood_clients.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "tests/status/h2_nonreader.h"
}

namespace aperture_test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kGetRingState[] = "/aperture.v1.ApertureStatus/GetRingState";

std::string Request(uint32_t page) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  req.max_endpoints = page;
  std::string bytes(aperture__v1__get_ring_state_request__get_packed_size(&req), '\0');
  aperture__v1__get_ring_state_request__pack(&req, reinterpret_cast<uint8_t*>(&bytes[0]));
  return bytes;
}

// One GetRingState on `stub`; its status code.
grpc::StatusCode Query(grpc::GenericStub* stub, const std::string& request) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Slice slice(request);
  grpc::ByteBuffer req(&slice, 1), resp;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  stub->UnaryCall(&context, kGetRingState, grpc::StubOptions(), &req, &resp,
                  [&](grpc::Status s) {
                    std::lock_guard<std::mutex> lock(mu);
                    status = std::move(s);
                    done = true;
                    cv.notify_one();
                  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return status.error_code();
}

}  // namespace

FloodReport RunFlood(const FloodOptions& o) {
  FloodReport report;
  const auto end = Clock::now() + std::chrono::milliseconds(o.duration_ms);
  const std::string target = "127.0.0.1:" + std::to_string(o.port);
  std::atomic<long> answered{0}, refused{0}, failed{0};
  std::atomic<int> connected{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < o.readers; ++i) {
    readers.emplace_back([&] {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
      args.SetMaxReceiveMessageSize(-1);
      auto channel =
          grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
      grpc::GenericStub stub(channel);
      const std::string request = Request(o.reader_page);
      bool counted = false;
      while (Clock::now() < end) {
        grpc::StatusCode code = Query(&stub, request);
        if (code == grpc::StatusCode::OK) {
          answered++;
        } else if (code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          refused++;
        } else {
          failed++;
        }
        if (!counted && code != grpc::StatusCode::UNAVAILABLE) {
          counted = true;
          connected++;
        }
        if (code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        } else if (code != grpc::StatusCode::OK) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
    });
  }
  // The non-readers come once the readers hold their connections (or
  // after a second), so that the cap leaves the readers theirs.
  const auto readers_wait = Clock::now() + std::chrono::seconds(1);
  while (connected.load() < o.readers && Clock::now() < readers_wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const std::string request = Request(o.nonreader_page);
  std::vector<uint8_t> burst(static_cast<size_t>(o.streams) * (request.size() + 256) + 256);
  const size_t n = h2_nonreader_burst(kGetRingState, reinterpret_cast<const uint8_t*>(request.data()),
                                      request.size(), static_cast<unsigned>(o.streams),
                                      burst.data(), burst.size());
  std::vector<int> fds;
  for (int i = 0; i < o.nonreaders && n > 0 && Clock::now() < end; ++i) {
    int fd = h2_nonreader_connect(o.port, burst.data(), n);
    if (fd >= 0) fds.push_back(fd);
  }
  while (Clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int fd : fds) {
    if (h2_nonreader_closed_by_server(fd)) {
      report.nonreaders_closed++;
    } else {
      report.nonreaders_open++;
    }
    close(fd);
  }
  report.nonreaders_closed += o.nonreaders - static_cast<long>(fds.size());
  for (auto& t : readers) t.join();
  report.answered = answered.load();
  report.refused = refused.load();
  report.failed = failed.load();
  return report;
}

}  // namespace aperture_test
