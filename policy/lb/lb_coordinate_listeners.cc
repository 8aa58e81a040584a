#include "policy/lb/lb_coordinate_listeners.h"

#include <map>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"

#include "src/core/lib/iomgr/exec_ctx.h"

namespace aperture_lb {
namespace {

absl::Mutex g_mu;
uint64_t g_next_id ABSL_GUARDED_BY(g_mu) = 0;
std::map<uint64_t, std::shared_ptr<std::function<void()>>>* g_listeners
    ABSL_GUARDED_BY(g_mu) = nullptr;

}  // namespace

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

void NotifyCoordinateListeners() {
  std::vector<std::shared_ptr<std::function<void()>>> listeners;
  {
    absl::MutexLock lock(&g_mu);
    if (g_listeners == nullptr || g_listeners->empty()) return;
    for (auto& kv : *g_listeners) listeners.push_back(kv.second);
  }
  // The listeners run policy work serializers, which need an ExecCtx; the
  // C API caller's thread has none.
  grpc_core::ExecCtx exec_ctx;
  for (auto& fn : listeners) (*fn)();
}

}  // namespace aperture_lb
