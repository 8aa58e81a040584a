// Cost of one GetRingState request (registry snapshot + response packing),
// without the transport: rings of 100 / 10,000 endpoints, default cap and
// the hard cap. Run: bazel run -c opt //tests/status:status_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "policy/status/ap_status_handler.h"
}
#include "tests/status/fake_instance.h"

namespace {

void BM_GetRingState(benchmark::State &state) {
  RegisteredInstance ring("bench", static_cast<size_t>(state.range(0)));
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  req.max_endpoints = static_cast<uint32_t>(state.range(1));
  uint8_t bytes[32];
  size_t len = aperture__v1__get_ring_state_request__pack(&req, bytes);
  size_t body = 0;
  for (auto _ : state) {
    ap_status_reply reply;
    ap_status_handle_get_ring_state(bytes, len, &reply);
    body = reply.body_len;
    ap_status_reply_clear(&reply);
  }
  state.counters["response_bytes"] = static_cast<double>(body);
}

BENCHMARK(BM_GetRingState)
    ->Args({100, 0})
    ->Args({10000, 0})
    ->Args({10000, 10000})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
