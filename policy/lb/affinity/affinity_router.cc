#include "policy/lb/affinity/affinity_router.h"

#include <string.h>
#include <time.h>

#include <algorithm>

#include <grpc/support/log.h>

#include "absl/types/optional.h"

namespace aperture_lb {
namespace {

// Milliseconds of a monotonic clock; the coarse clock is cheap (no syscall)
// and its few milliseconds of resolution are plenty for idle expiry.
uint64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000u +
         static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

}  // namespace

// What the session table's callbacks need during one sticky pick.
struct AffinityRouter::StickyCtx {
  const AffinityRouter* router;
  BalanceFn balance;
  void* balance_ctx;
  size_t slot;
};

int AffinityRouter::SlotOf(const char* address) const {
  auto it = std::lower_bound(
      by_address_.begin(), by_address_.end(), address,
      [](const std::pair<std::string, size_t>& entry, const char* a) {
        return strcmp(entry.first.c_str(), a) < 0;
      });
  if (it == by_address_.end() || strcmp(it->first.c_str(), address) != 0) {
    return -1;
  }
  return static_cast<int>(it->second);
}

// The remembered endpoint may serve the key while it is READY in this
// picker (a READY slot means: in the aperture and connected).
int AffinityRouter::StickyUsable(void* ctx, const char* address) {
  auto* c = static_cast<StickyCtx*>(ctx);
  int slot = c->router->SlotOf(address);
  if (slot < 0) return 0;
  c->slot = static_cast<size_t>(slot);
  return 1;
}

// A new (or re-placed) key goes where the normal pick sends it.
const char* AffinityRouter::StickyPlace(void* ctx) {
  auto* c = static_cast<StickyCtx*>(ctx);
  c->slot = c->balance(c->balance_ctx);
  return c->router->slot_address_[c->slot].c_str();
}

bool AffinityRouter::Route(
    const grpc_core::LoadBalancingPolicy::PickArgs& args, BalanceFn balance,
    void* balance_ctx, size_t* slot) const {
  if (args.initial_metadata == nullptr || slot_address_.empty()) return false;
  std::string buffer;  // only filled when the header is repeated
  absl::optional<absl::string_view> key =
      args.initial_metadata->Lookup(header_, &buffer);
  if (!key.has_value() || key->empty()) return false;
  if (mode_ == AP_AFFINITY_HASH) {
    size_t member = 0;
    if (ap_affinity_hash_choose(ring_->ring(), key->data(), key->size(),
                                usable_.data(), &member, nullptr) != AP_OK) {
      return false;
    }
    *slot = static_cast<size_t>(member_slot_[member]);
    return true;
  }
  if (key->size() > AP_SESSION_MAX_KEY_LEN) return false;
  StickyCtx ctx = {this, balance, balance_ctx, 0};
  ap_session_chooser chooser = {&AffinityRouter::StickyUsable,
                                &AffinityRouter::StickyPlace, &ctx};
  if (ap_session_table_route(sessions_->table(), key->data(), key->size(),
                             NowMs(), &chooser, nullptr, nullptr) != AP_OK) {
    return false;
  }
  *slot = ctx.slot;
  return true;
}

void AffinityState::Configure(const AffinitySettings& settings) {
  settings_ = settings;
  if (settings.mode != AP_AFFINITY_HASH) ring_.reset();
  if (settings.mode != AP_AFFINITY_STICKY) {
    sessions_.reset();
    return;
  }
  if (sessions_ != nullptr &&
      sessions_->max_sessions() == settings.max_sessions &&
      sessions_->idle_ms() == settings.session_idle_ms) {
    return;  // same limits: every session survives the update
  }
  ap_session_table* table = nullptr;
  ap_error err;
  if (ap_session_table_create(settings.max_sessions, settings.session_idle_ms,
                              &table, &err) != AP_OK) {
    gpr_log(GPR_ERROR,
            "aperture: sticky affinity disabled, no session table: %s",
            err.message);
    sessions_.reset();
    return;
  }
  sessions_ = grpc_core::MakeRefCounted<SessionStore>(
      table, settings.max_sessions, settings.session_idle_ms);
}

// The ring over these members. When the members' weights x hashVnodes
// would exceed the point cap (members the config gives no weight count 1
// each, so a large aperture can get there at run time), it is built with
// the largest vnodes per weight that fits, and that is logged once per
// member set. A ring the core still refuses is cached empty, logged once.
grpc_core::RefCountedPtr<SharedHashRing> AffinityState::BuildRing(
    std::vector<std::string> names, std::vector<double> weights,
    uint32_t vnodes) {
  std::vector<const char*> pointers;
  for (const std::string& n : names) pointers.push_back(n.c_str());
  ap_hash_ring* ring = nullptr;
  ap_error err;
  uint32_t fitted = 0;
  int rc = ap_hash_ring_fit_vnodes(weights.data(), weights.size(), vnodes,
                                   &fitted, &err);
  if (rc == AP_OK && fitted < vnodes) {
    gpr_log(GPR_INFO,
            "aperture: hashVnodes %u would put more than %zu points on the "
            "hash ring of these %zu members; using %u points per unit weight",
            vnodes, static_cast<size_t>(AP_HASH_RING_MAX_POINTS), names.size(),
            fitted);
  }
  if (rc == AP_OK) {
    rc = ap_hash_ring_create(pointers.data(), weights.data(), pointers.size(),
                             fitted, &ring, &err);
  }
  if (rc != AP_OK) {
    gpr_log(GPR_ERROR,
            "aperture: hash affinity off for these %zu members (calls are "
            "balanced as usual) until they change: %s",
            names.size(), err.message);
    ring = nullptr;
  }
  return grpc_core::MakeRefCounted<SharedHashRing>(ring, std::move(names),
                                                   std::move(weights), vnodes);
}

std::unique_ptr<AffinityRouter> AffinityState::MakeRouter(
    const std::vector<AffinityMember>& members) {
  if (settings_.mode == AP_AFFINITY_NONE || members.empty()) return nullptr;
  if (settings_.mode == AP_AFFINITY_STICKY && sessions_ == nullptr) {
    return nullptr;
  }
  auto router = std::make_unique<AffinityRouter>();
  router->mode_ = settings_.mode;
  router->header_ = settings_.header;
  size_t slots = 0;
  for (const AffinityMember& m : members) {
    if (m.slot >= 0) slots = std::max(slots, static_cast<size_t>(m.slot) + 1);
  }
  router->slot_address_.resize(slots);
  for (const AffinityMember& m : members) {
    if (m.slot < 0) continue;
    router->slot_address_[m.slot] = m.address;
    router->by_address_.emplace_back(m.address, static_cast<size_t>(m.slot));
  }
  std::sort(router->by_address_.begin(), router->by_address_.end());
  if (settings_.mode == AP_AFFINITY_STICKY) {
    router->sessions_ = sessions_;
    return router;
  }
  // Hash: the ring depends on the members and their weights only, so READY
  // changes reuse it and only the usable flags change.
  std::vector<std::string> names;
  std::vector<double> weights;
  for (const AffinityMember& m : members) {
    names.push_back(m.address);
    weights.push_back(m.weight);
  }
  if (ring_ == nullptr ||
      !ring_->BuiltFrom(names, weights, settings_.hash_vnodes)) {
    ring_ = BuildRing(std::move(names), std::move(weights),
                      settings_.hash_vnodes);
  }
  // A refused ring stays cached (and was logged once) until the members
  // change: the calls are balanced as usual meanwhile.
  if (ring_->ring() == nullptr) return nullptr;
  router->ring_ = ring_;
  for (const AffinityMember& m : members) {
    router->usable_.push_back(m.slot >= 0 ? 1 : 0);
    router->member_slot_.push_back(m.slot);
  }
  return router;
}

}  // namespace aperture_lb
