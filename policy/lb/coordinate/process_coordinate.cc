#include "policy/lb/coordinate/process_coordinate.h"

#include <atomic>
#include <map>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"

#include "policy/core/subset/ap_aperture.h"
#include "policy/lb/grpc_seam/grpc_seam.h"

namespace aperture_lb {
namespace {

// count << 32 | index; 0 means unset (a count is never 0).
std::atomic<uint64_t> g_api_coordinate{0};

absl::Mutex g_mu;
uint64_t g_next_id ABSL_GUARDED_BY(g_mu) = 0;
std::map<uint64_t, std::shared_ptr<std::function<void()>>>* g_listeners
    ABSL_GUARDED_BY(g_mu) = nullptr;

void NotifyCoordinateListeners() {
  std::vector<std::shared_ptr<std::function<void()>>> listeners;
  {
    absl::MutexLock lock(&g_mu);
    if (g_listeners == nullptr || g_listeners->empty()) return;
    for (auto& kv : *g_listeners) listeners.push_back(kv.second);
  }
  // The listeners run policy work serializers, which need gRPC's thread
  // context; the C API caller's thread has none.
  RunInGrpcContext([&listeners]() {
    for (auto& fn : listeners) (*fn)();
  });
}

}  // namespace

int SetApiCoordinate(uint32_t peer_index, uint32_t peer_count, ap_error* err) {
  if (peer_count == 0 || peer_count > AP_MAX_PEERS) {
    return ap_error_set(err, AP_ERANGE,
                        "peer_count must be in [1, %u], got %u",
                        AP_MAX_PEERS, peer_count);
  }
  if (peer_index >= peer_count) {
    return ap_error_set(err, AP_EINVAL,
                        "peer_index must be less than peer_count (%u), got %u",
                        peer_count, peer_index);
  }
  g_api_coordinate.store((static_cast<uint64_t>(peer_count) << 32) | peer_index,
                         std::memory_order_release);
  NotifyCoordinateListeners();  // live channels re-coordinate now
  ap_error_clear(err);
  return AP_OK;
}

void ClearApiCoordinate() {
  g_api_coordinate.store(0, std::memory_order_release);
  NotifyCoordinateListeners();
}

bool ApiCoordinate(uint32_t* peer_index, uint32_t* peer_count) {
  const uint64_t api = g_api_coordinate.load(std::memory_order_acquire);
  if (api == 0) return false;
  *peer_index = static_cast<uint32_t>(api & 0xffffffffu);
  *peer_count = static_cast<uint32_t>(api >> 32);
  return true;
}

uint64_t AddCoordinateListener(std::function<void()> fn) {
  absl::MutexLock lock(&g_mu);
  if (g_listeners == nullptr) {
    g_listeners =
        new std::map<uint64_t, std::shared_ptr<std::function<void()>>>();
  }
  uint64_t id = ++g_next_id;
  (*g_listeners)[id] = std::make_shared<std::function<void()>>(std::move(fn));
  return id;
}

void RemoveCoordinateListener(uint64_t id) {
  absl::MutexLock lock(&g_mu);
  if (g_listeners != nullptr) g_listeners->erase(id);
}

}  // namespace aperture_lb
