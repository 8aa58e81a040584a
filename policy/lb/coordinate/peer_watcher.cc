#include "policy/lb/coordinate/peer_watcher.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

#include "policy/core/ap_error.h"
#include "policy/core/ring/ap_order.h"
#include "policy/lb/grpc_seam/grpc_seam.h"
#include "policy/lb/test_hooks.h"
#include "src/core/lib/gprpp/debug_location.h"
#include "src/core/lib/gprpp/orphanable.h"
#include "src/core/lib/gprpp/work_serializer.h"
#include "src/core/lib/resolver/server_address.h"

namespace aperture_lb {

class PeerWatcher : public std::enable_shared_from_this<PeerWatcher> {
 public:
  PeerWatcher(std::string target, uint64_t refresh_ms)
      : target_(std::move(target)),
        refresh_ms_(refresh_ms),
        latest_(std::make_shared<PeerList>()),
        serializer_(std::make_shared<grpc_core::WorkSerializer>()) {}

  void Start() {
    auto self = shared_from_this();
    serializer_->Run([self]() { self->StartLocked(); }, DEBUG_LOCATION);
  }
  void Shutdown() {
    auto self = shared_from_this();
    serializer_->Run([self]() { self->ShutdownLocked(); }, DEBUG_LOCATION);
  }

  uint64_t AddSubscriber(uint64_t refresh_ms, std::function<void()> fn) {
    absl::MutexLock lock(&mu_);
    if (refresh_ms < refresh_ms_) refresh_ms_ = refresh_ms;
    uint64_t id = ++next_id_;
    subscribers_[id] = std::make_shared<std::function<void()>>(std::move(fn));
    return id;
  }
  // Returns the number of subscribers left.
  size_t RemoveSubscriber(uint64_t id) {
    absl::MutexLock lock(&mu_);
    subscribers_.erase(id);
    return subscribers_.size();
  }
  std::shared_ptr<const PeerList> Latest() {
    absl::MutexLock lock(&mu_);
    return latest_;
  }

 private:
  uint64_t RefreshMs() {
    absl::MutexLock lock(&mu_);
    return refresh_ms_;
  }

  void StartLocked() {
    // The resolver's callback holds this watcher until the resolver goes.
    auto self = shared_from_this();
    resolver_ = TargetResolver::Create(
        target_, RefreshMs(), serializer_,
        [self](absl::StatusOr<grpc_core::ServerAddressList> addresses,
               const std::string& note) {
          self->OnResultLocked(std::move(addresses), note);
        });
    if (resolver_ == nullptr) {
      Store(absl::InvalidArgumentError(absl::StrCat(
                "no gRPC resolver accepts the peer target \"", target_, "\"")),
            {});
      return;
    }
    resolver_->StartLocked();
    ScheduleRefreshLocked();
  }

  void ShutdownLocked() {
    shutdown_ = true;
    timer_.reset();
    resolver_.reset();  // its callback's reference to this goes with it
  }

  void ScheduleRefreshLocked() {
    std::weak_ptr<PeerWatcher> weak = shared_from_this();
    timer_ = grpc_core::MakeOrphanable<SerializedTimer>(
        serializer_, MonotonicNowMs() + RefreshMs(), [weak]() {
          auto self = weak.lock();
          if (self == nullptr || self->shutdown_) return;
          if (self->resolver_ != nullptr) {
            self->resolver_->RequestReresolutionLocked();
          }
          self->ScheduleRefreshLocked();
        });
  }

  void OnResultLocked(absl::StatusOr<grpc_core::ServerAddressList> addresses,
                      const std::string& note) {
    if (shutdown_) return;
    if (!addresses.ok()) {
      Store(addresses.status(), {});
      return;
    }
    std::set<std::string> seen;
    std::vector<std::string> names;
    for (const grpc_core::ServerAddress& address : *addresses) {
      auto text = AddressText(address);
      if (!text.ok() || !seen.insert(*text).second) continue;
      names.push_back(std::move(*text));
    }
    if (names.empty()) {
      std::string msg = "the peer target resolved to no address";
      if (!note.empty()) absl::StrAppend(&msg, " (", note, ")");
      Store(absl::UnavailableError(msg), {});
      return;
    }
    Store(absl::OkStatus(), std::move(names));
  }

  // Publishes a new answer; tells the subscribers when it differs.
  void Store(absl::Status status, std::vector<std::string> names) {
    auto list = std::make_shared<PeerList>();
    list->answered = true;
    list->status = std::move(status);
    if (list->status.ok()) {
      std::vector<const char*> pointers;
      for (const auto& n : names) pointers.push_back(n.c_str());
      std::vector<size_t> order(names.size());
      ap_error err;
      if (ap_order_endpoints(pointers.data(), names.size(), order.data(),
                             &err) != AP_OK) {
        list->status = absl::InvalidArgumentError(
            absl::StrCat("cannot order the peer list: ", err.message));
      } else {
        for (size_t k = 0; k < names.size(); ++k) {
          list->ordered.push_back(names[order[k]]);
        }
        list->fingerprint =
            ap_order_fingerprint(pointers.data(), order.data(), names.size());
      }
    }
    std::vector<std::shared_ptr<std::function<void()>>> notify;
    {
      absl::MutexLock lock(&mu_);
      list->answers = latest_->answers + 1;
      bool changed = !latest_->answered ||
                     latest_->status != list->status ||
                     latest_->ordered != list->ordered;
      latest_ = list;
      if (changed) {
        for (auto& kv : subscribers_) notify.push_back(kv.second);
      }
    }
    for (auto& fn : notify) (*fn)();
  }

  const std::string target_;
  absl::Mutex mu_;
  uint64_t refresh_ms_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::shared_ptr<std::function<void()>>> subscribers_
      ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<const PeerList> latest_ ABSL_GUARDED_BY(mu_);
  // Only touched in the serializer.
  std::shared_ptr<grpc_core::WorkSerializer> serializer_;
  std::unique_ptr<TargetResolver> resolver_;
  grpc_core::OrphanablePtr<SerializedTimer> timer_;
  bool shutdown_ = false;
};

namespace {

// The live watchers, by target.
absl::Mutex g_mu;
std::map<std::string, std::shared_ptr<PeerWatcher>>* g_watchers
    ABSL_GUARDED_BY(g_mu) = nullptr;

}  // namespace

std::unique_ptr<PeerSubscription> SubscribePeers(
    const std::string& target, uint64_t refresh_ms,
    std::function<void()> on_change) {
  std::shared_ptr<PeerWatcher> watcher;
  bool created = false;
  uint64_t id = 0;
  {
    absl::MutexLock lock(&g_mu);
    if (g_watchers == nullptr) {
      g_watchers = new std::map<std::string, std::shared_ptr<PeerWatcher>>();
    }
    auto it = g_watchers->find(target);
    if (it == g_watchers->end()) {
      watcher = std::make_shared<PeerWatcher>(target, refresh_ms);
      (*g_watchers)[target] = watcher;
      created = true;
    } else {
      watcher = it->second;
    }
    id = watcher->AddSubscriber(refresh_ms, std::move(on_change));
  }
  // Its serializer may run the start, resolver and all, on this thread.
  if (created) RunInGrpcContext([&watcher]() { watcher->Start(); });
  return std::unique_ptr<PeerSubscription>(
      new PeerSubscription(std::move(watcher), target, id));
}

PeerSubscription::~PeerSubscription() {
  bool last = false;
  {
    absl::MutexLock lock(&g_mu);
    if (watcher_->RemoveSubscriber(id_) == 0) {
      auto it = g_watchers->find(target_);
      if (it != g_watchers->end() && it->second == watcher_) {
        g_watchers->erase(it);
      }
      last = true;
    }
  }
  if (last) RunInGrpcContext([this]() { watcher_->Shutdown(); });
}

std::shared_ptr<const PeerList> PeerSubscription::Latest() const {
  return watcher_->Latest();
}

size_t LivePeerWatchers() {
  absl::MutexLock lock(&g_mu);
  return g_watchers == nullptr ? 0 : g_watchers->size();
}

}  // namespace aperture_lb
