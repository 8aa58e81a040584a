// Request affinity in the aperture picker: a call that carries the
// configured header is routed by its key instead of (sticky: before) the
// normal P2C pick.
//
//   sticky - the per-channel session table (policy/affinity/
//            ap_session_table.h) maps the key to an endpoint address; a known
//            key whose endpoint is READY in this picker goes there, otherwise
//            the key is placed by the normal pick and remembered. One short
//            shard lock per call with a key (the default path takes none).
//   hash   - the key's owner on a consistent-hash ring with `hashVnodes`
//            points per unit of endpoint weight over the aperture's members;
//            members that are not READY are skipped clockwise. Lock-free.
//
// AffinityState lives in the policy (work serializer); each picker gets an
// immutable AffinityRouter from it.
#ifndef APERTURE_LB_AFFINITY_AFFINITY_ROUTER_H
#define APERTURE_LB_AFFINITY_AFFINITY_ROUTER_H

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "policy/affinity/ap_affinity.h"
#include "policy/affinity/ap_session_table.h"
#include "policy/affinity/ap_hash_ring.h"
#include "policy/lb/affinity/affinity_settings.h"
#include "src/core/lib/gprpp/ref_counted.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"
#include "src/core/lib/load_balancing/lb_policy.h"

namespace aperture_lb {

// The session table of one policy instance, shared with its pickers and
// its published state (which may outlive the policy).
class SessionStore : public grpc_core::RefCounted<SessionStore> {
 public:
  SessionStore(ap_session_table* table, uint32_t max_sessions,
               uint64_t idle_ms)
      : table_(table), max_sessions_(max_sessions), idle_ms_(idle_ms) {}
  ~SessionStore() override { ap_session_table_destroy(table_); }

  ap_session_table* table() const { return table_; }
  uint32_t max_sessions() const { return max_sessions_; }
  uint64_t idle_ms() const { return idle_ms_; }
  // Entries held, idle ones the data path has not reclaimed yet included:
  // a lock-free read, so the status service never takes a shard lock
  // (expiry is the calls' work, ap_session_table.h).
  uint64_t Held() const { return ap_session_table_size(table_); }

 private:
  ap_session_table* const table_;  // owned
  const uint32_t max_sessions_;
  const uint64_t idle_ms_;
};

// An immutable consistent-hash ring over a member list, shared by the
// pickers built while the members stay the same. ring() is null when the
// core refused these members (hash affinity off until they change).
class SharedHashRing : public grpc_core::RefCounted<SharedHashRing> {
 public:
  SharedHashRing(ap_hash_ring* ring, std::vector<std::string> names,
                 std::vector<double> weights, uint32_t vnodes)
      : ring_(ring),
        names_(std::move(names)),
        weights_(std::move(weights)),
        vnodes_(vnodes) {}
  ~SharedHashRing() override { ap_hash_ring_destroy(ring_); }
  const ap_hash_ring* ring() const { return ring_; }  // may be null
  // True when the ring was built from exactly these inputs.
  bool BuiltFrom(const std::vector<std::string>& names,
                 const std::vector<double>& weights, uint32_t vnodes) const {
    return vnodes == vnodes_ && names == names_ && weights == weights_;
  }

 private:
  ap_hash_ring* const ring_;  // owned; null: refused
  const std::vector<std::string> names_;
  const std::vector<double> weights_;
  const uint32_t vnodes_;
};

// One aperture member as the picker sees it.
struct AffinityMember {
  std::string address;
  double weight;  // configured endpoint weight (> 0)
  int slot;       // index of its READY slot in the picker, -1 when not READY
};

// Per-picker router. Thread-safe (immutable apart from the session table).
class AffinityRouter {
 public:
  // The normal pick: returns a slot index of the picker.
  using BalanceFn = size_t (*)(void* ctx);

  // Routes a call: true with *slot set when the call carries a usable key
  // and affinity chose the slot; false when the call must be balanced as
  // usual (no header, empty or over-long key, or nothing usable).
  bool Route(const grpc_core::LoadBalancingPolicy::PickArgs& args,
             BalanceFn balance, void* balance_ctx, size_t* slot) const;

 private:
  friend class AffinityState;
  struct StickyCtx;
  static int StickyUsable(void* ctx, const char* address);
  static const char* StickyPlace(void* ctx);
  // Slot of a READY address, or -1.
  int SlotOf(const char* address) const;

  ap_affinity_mode mode_ = AP_AFFINITY_NONE;
  std::string header_;
  grpc_core::RefCountedPtr<SessionStore> sessions_;  // sticky
  grpc_core::RefCountedPtr<SharedHashRing> ring_;    // hash
  std::vector<uint8_t> usable_;      // hash: per ring member, READY or not
  std::vector<int> member_slot_;     // hash: ring member -> slot or -1
  std::vector<std::string> slot_address_;                // slot -> address
  std::vector<std::pair<std::string, size_t>> by_address_;  // sorted
};

// Affinity configuration and long-lived parts of one policy instance. Used
// only from the policy's work serializer.
class AffinityState {
 public:
  // Applies new settings: keeps the session table when the sticky limits
  // are unchanged, otherwise starts a new one (sessions are dropped).
  void Configure(const AffinitySettings& settings);

  // A router for a picker over `members` (the aperture's members in ring
  // order); null when affinity is off or could not be set up (the calls
  // are then balanced as usual and the reason is logged).
  std::unique_ptr<AffinityRouter> MakeRouter(
      const std::vector<AffinityMember>& members);

  ap_affinity_mode mode() const { return settings_.mode; }
  // The session table (sticky mode), null otherwise.
  const grpc_core::RefCountedPtr<SessionStore>& sessions() const {
    return sessions_;
  }

 private:
  static grpc_core::RefCountedPtr<SharedHashRing> BuildRing(
      std::vector<std::string> names, std::vector<double> weights,
      uint32_t vnodes);

  AffinitySettings settings_ = DefaultAffinitySettings();
  grpc_core::RefCountedPtr<SessionStore> sessions_;
  grpc_core::RefCountedPtr<SharedHashRing> ring_;  // cache for hash mode
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_AFFINITY_AFFINITY_ROUTER_H
