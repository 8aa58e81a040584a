// The aperture picker: an immutable snapshot of the READY members of the
// aperture. Pick() draws candidates with the core's pick table, keeps the
// least loaded (P2C, fair to fractional pick weights) of those that are not
// ejected or stuck (ap_health.h: gray failures keep a subchannel READY) and
// attaches a call
// tracker allocated from the call's arena (call_tracker.h). A balanced pick
// takes no lock and allocates nothing; a call that carries a sticky-affinity
// key takes one short shard lock of the session table (affinity_router.h).
#ifndef APERTURE_LB_PICKER_PICKER_H
#define APERTURE_LB_PICKER_PICKER_H

#include <stdint.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"

#include "policy/core/pick/ap_health.h"
#include "policy/core/pick/ap_load.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/lb/affinity/affinity_router.h"
#include "policy/lb/core_ptr.h"
#include "policy/lb/picker/endpoint_counters.h"
#include "src/core/lib/gprpp/ref_counted.h"
#include "src/core/lib/gprpp/ref_counted_ptr.h"
#include "src/core/lib/load_balancing/lb_policy.h"
#include "src/core/lib/load_balancing/subchannel_interface.h"

namespace aperture_lb {

class AperturePicker : public grpc_core::LoadBalancingPolicy::SubchannelPicker {
 public:
  struct Slot {
    grpc_core::RefCountedPtr<grpc_core::SubchannelInterface> subchannel;
    grpc_core::RefCountedPtr<EndpointCounters> counters;
    double weight;  // the member's pick weight, > 0
  };

  // `table` has one slot per entry of `slots`, same order. `affinity` (may
  // be null) routes calls that carry an affinity key. `health` says when a
  // member is ejected or stuck (ap_health.h). `metric` is what P2C
  // compares (ap_load.h; an unknown value counts as outstanding).
  // `sample_rates`: the call trackers sample the rate ORCA reports
  // (call_tracker.h).
  // `health_group` (may be null) is the members' group (ap_health_group.h):
  // while none of them is ejected or on probation, an idle member is
  // usable without a look at its health.
  AperturePicker(std::vector<Slot> slots, PickTablePtr table,
                 uint32_t choice_count,
                 std::unique_ptr<AffinityRouter> affinity = nullptr,
                 const ap_health_config& health = DefaultHealth(),
                 ap_pick_metric metric = AP_PICK_OUTSTANDING,
                 bool sample_rates = false,
                 ap_health_group* health_group = nullptr);

  // Builds the pick table from the slots' weights; an error names why the
  // table could not be built.
  static absl::StatusOr<std::unique_ptr<AperturePicker>> Create(
      std::vector<Slot> slots, uint32_t choice_count,
      std::unique_ptr<AffinityRouter> affinity,
      const ap_health_config& health = DefaultHealth(),
      ap_pick_metric metric = AP_PICK_OUTSTANDING, bool sample_rates = false,
      ap_health_group* health_group = nullptr);

  ap_pick_metric metric() const { return metric_; }

  static ap_health_config DefaultHealth() {
    ap_health_config c;
    ap_health_config_init(&c);
    return c;
  }

  grpc_core::LoadBalancingPolicy::PickResult Pick(
      grpc_core::LoadBalancingPolicy::PickArgs args) override;

 private:
  // The normal pick: choiceCount independent weighted draws, the least
  // loaded wins by ap_p2c_choose_fair (P2C), usable members first. Under
  // peakEwma or orca each comparison takes both metric multipliers in one
  // unit (ap_load_pair_scale; orca reads the coarse clock once per pick)
  // and compares (outstanding + 1) * multiplier after thinning the
  // outstanding counts by weight (ap_p2c_choose_fair_scaled), so weights
  // keep their meaning. When
  // a draw lands on a member that is ejected or stuck, a few more draws
  // (P2C among the usable ones) and then a scan look for a usable one: the
  // draws are independent (fair to fractional weights), so with A members
  // all of them hit one frozen member for about 1 call in A^2, and a
  // usable draw beside an unusable one would otherwise win on health alone
  // whatever its load. With every member usable the pick is unchanged.
  size_t ChooseBalanced() const;
  // A usable slot other than by the draws: a few more draws (the less
  // loaded of the first two usable ones), then the first usable slot from a
  // random start; `fallback` when none is usable.
  size_t FindUsable(size_t fallback, int64_t* now_ms, bool all_in, ap_rng* rng) const;
  // The slot's outstanding calls, weight and usability (*now_ms: the clock,
  // -1 until read; see ap_health_check_lazy), as the
  // core compares them. `all_in`: no member is ejected or on probation
  // (ap_health_group_all_in), so an idle one is usable as it is.
  ap_candidate Candidate(size_t slot, int64_t* now_ms, bool all_in) const;
  static size_t ChooseBalancedThunk(void* self) {
    return static_cast<const AperturePicker*>(self)->ChooseBalanced();
  }

  const std::vector<Slot> slots_;
  const PickTablePtr table_;
  const uint32_t choice_count_;
  const std::unique_ptr<AffinityRouter> affinity_;
  const ap_health_config health_;
  const bool health_on_;  // ap_health_config_active(health_)
  const ap_pick_metric metric_;
  const bool sample_rates_;
  const HealthGroupPtr health_group_;  // a reference; null: none
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_PICKER_PICKER_H
