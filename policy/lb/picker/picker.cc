#include "policy/lb/picker/picker.h"

#include <new>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "policy/lb/picker/call_tracker.h"
#include "policy/lb/picker/thread_rng.h"

namespace aperture_lb {

using grpc_core::LoadBalancingPolicy;

AperturePicker::AperturePicker(std::vector<Slot> slots, PickTablePtr table,
                               uint32_t choice_count,
                               std::unique_ptr<AffinityRouter> affinity,
                               const ap_health_config& health,
                               ap_pick_metric metric, bool sample_rates,
                               ap_health_group* health_group)
    : slots_(std::move(slots)),
      table_(std::move(table)),
      choice_count_(choice_count),
      affinity_(std::move(affinity)),
      health_(health),
      health_on_(ap_health_config_active(&health) != 0),
      metric_(static_cast<unsigned>(metric) < AP_PICK_METRIC_COUNT
                  ? metric
                  : AP_PICK_OUTSTANDING),
      sample_rates_(sample_rates && metric_ == AP_PICK_ORCA),
      health_group_(ShareHealthGroup(health_group)) {}

absl::StatusOr<std::unique_ptr<AperturePicker>> AperturePicker::Create(
    std::vector<Slot> slots, uint32_t choice_count,
    std::unique_ptr<AffinityRouter> affinity, const ap_health_config& health,
    ap_pick_metric metric, bool sample_rates, ap_health_group* health_group) {
  std::vector<double> weights;
  weights.reserve(slots.size());
  for (const Slot& slot : slots) weights.push_back(slot.weight);
  ap_pick_table* table = nullptr;
  ap_error err;
  if (ap_pick_table_create(weights.data(), weights.size(), &table, &err) !=
      AP_OK) {
    return absl::InternalError(
        absl::StrCat("aperture: cannot build the pick table: ", err.message));
  }
  return std::make_unique<AperturePicker>(std::move(slots), PickTablePtr(table),
                                          choice_count, std::move(affinity),
                                          health, metric, sample_rates,
                                          health_group);
}

size_t AperturePicker::ChooseBalanced() const {
  ap_rng* rng = ThreadRng();
  size_t best = 0;
  if (slots_.size() > 1) {
    int64_t now = -1;  // read at most once, when a member's health needs it
    // One look at the group (a word every pick reads): with every member
    // in, idle candidates need no look at their own health.
    const bool all_in = ap_health_group_all_in(health_group_.get()) != 0;
    // Only the staleness of ORCA reports needs the load clock (the coarse
    // one, as the reports are stamped with).
    const int64_t load_now =
        metric_ == AP_PICK_ORCA ? ap_load_coarse_now_ns() : 0;
    // Independent weighted draws (the same slot twice is a pick without a
    // comparison) and the fair comparison: with distinct draws, or with
    // load / weight, partly covered members would get more than their
    // share (see ap_p2c_choose_fair).
    best = ap_pick1(table_.get(), rng);
    ap_candidate a = Candidate(best, &now, all_in);
    bool saw_unusable = !a.healthy;
    for (uint32_t draw = 1; draw < choice_count_; ++draw) {
      const size_t c = ap_pick1(table_.get(), rng);
      if (c == best) continue;
      const ap_candidate cand = Candidate(c, &now, all_in);
      saw_unusable = saw_unusable || !cand.healthy;
      int choice = 0;
      if (metric_ == AP_PICK_OUTSTANDING) {
        choice = ap_p2c_choose_fair(&a, &cand, rng);
      } else {
        // Both multipliers in one unit, the counts thinned by weight
        // before they are scaled.
        double scale_a = 1, scale_b = 1;
        ap_load_pair_scale(&slots_[best].counters->load,
                           &slots_[c].counters->load, metric_, load_now,
                           &scale_a, &scale_b);
        choice = ap_p2c_choose_fair_scaled(&a, scale_a, &cand, scale_b, rng);
      }
      if (choice == 1) {
        best = c;
        a = cand;
      }
    }
    // A draw that landed on an unusable member is no comparison: the other
    // would win on health alone, whatever its load (in a partition, the
    // next member to fail would take every such call until it is found
    // stuck). Redraw among the usable ones instead, by load as usual.
    if (saw_unusable) best = FindUsable(best, &now, all_in, rng);
  }
  return best;
}

size_t AperturePicker::FindUsable(size_t fallback, int64_t* now_ms, bool all_in,
                                  ap_rng* rng) const {
  // Redraws, and the less loaded of the first two usable ones (P2C, fair
  // as the normal pick): taking the first usable one would send a member
  // its full share whatever its load, and a member that is about to be
  // found stuck (a second one failing, as in a partition) would take calls
  // at that rate until it is.
  constexpr int kRedraws = 6;
  size_t found = 0;
  ap_candidate first{};
  bool have_first = false;
  for (int k = 0; k < kRedraws; ++k) {
    const size_t c = ap_pick1(table_.get(), rng);
    const ap_candidate cand = Candidate(c, now_ms, all_in);
    if (!cand.healthy) continue;
    if (!have_first) {
      found = c;
      first = cand;
      have_first = true;
      continue;
    }
    if (c == found) return found;
    return ap_p2c_choose_fair(&first, &cand, rng) == 1 ? c : found;
  }
  if (have_first) return found;
  const size_t n = slots_.size();
  const size_t start = ap_pick1(table_.get(), rng);
  for (size_t k = 1; k < n; ++k) {
    const size_t c = (start + k) % n;
    if (Candidate(c, now_ms, all_in).healthy) return c;
  }
  return fallback;  // nothing usable: still send the call
}

ap_candidate AperturePicker::Candidate(size_t slot, int64_t* now_ms,
                                      bool all_in) const {
  const EndpointCounters& counters = *slots_[slot].counters;
  const int64_t outstanding = counters.Outstanding();
  // Health switched off, or an idle member while every member is in (not
  // ejected, not on probation; idle: not stuck): usable as it is.
  if (!health_on_ || (all_in && outstanding <= 0)) {
    return ap_candidate{static_cast<double>(outstanding), slots_[slot].weight, 1};
  }
  const ap_health_state state =
      ap_health_check_lazy(counters.health, outstanding, &health_, now_ms);
  return ap_candidate{static_cast<double>(outstanding), slots_[slot].weight,
                      ap_health_usable(state, outstanding)};
}

LoadBalancingPolicy::PickResult AperturePicker::Pick(
    LoadBalancingPolicy::PickArgs args) {
  size_t best = 0;
  if (affinity_ == nullptr ||
      !affinity_->Route(args, &AperturePicker::ChooseBalancedThunk, this,
                        &best)) {
    best = ChooseBalanced();
  }
  const Slot& slot = slots_[best];
  // The tracker's Start() and Finish() read the member's health: ask for
  // its line now, while the tracker is placed.
  if (health_on_) __builtin_prefetch(slot.counters->health);
  void* memory = args.call_state->Alloc(sizeof(CallTracker));
  // The tracker counts the pick and the call in flight in one atomic add;
  // that call in flight keeps the counters alive, no reference needed.
  auto* tracker =
      new (memory) CallTracker(slot.counters.get(), health_, metric_,
                               sample_rates_);
  return LoadBalancingPolicy::PickResult::Complete(
      slot.subchannel,
      std::unique_ptr<LoadBalancingPolicy::SubchannelCallTrackerInterface>(
          tracker));
}

}  // namespace aperture_lb
