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
                               ap_pick_metric metric)
    : slots_(std::move(slots)),
      table_(std::move(table)),
      choice_count_(choice_count),
      affinity_(std::move(affinity)),
      metric_(static_cast<unsigned>(metric) < AP_PICK_METRIC_COUNT
                  ? metric
                  : AP_PICK_OUTSTANDING) {}

absl::StatusOr<std::unique_ptr<AperturePicker>> AperturePicker::Create(
    std::vector<Slot> slots, uint32_t choice_count,
    std::unique_ptr<AffinityRouter> affinity, ap_pick_metric metric) {
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
                                          metric);
}

size_t AperturePicker::ChooseBalanced() const {
  if (metric_ != AP_PICK_OUTSTANDING) return ChooseByMetric();
  ap_rng* rng = ThreadRng();
  size_t best = 0;
  if (slots_.size() > 1) {
    // Independent weighted draws (the same slot twice is a pick without a
    // comparison) and the fair comparison: with distinct draws, or with
    // load / weight, partly covered members would get more than their
    // share (see ap_p2c_choose_fair).
    best = ap_pick1(table_.get(), rng);
    ap_candidate a = Candidate(best);
    for (uint32_t draw = 1; draw < choice_count_; ++draw) {
      const size_t c = ap_pick1(table_.get(), rng);
      if (c == best) continue;
      const ap_candidate cand = Candidate(c);
      if (ap_p2c_choose_fair(&a, &cand, rng) == 1) {
        best = c;
        a = cand;
      }
    }
  }
  return best;
}

size_t AperturePicker::ChooseByMetric() const {
  ap_rng* rng = ThreadRng();
  size_t best = 0;
  if (slots_.size() > 1) {
    // Only the staleness of ORCA reports needs the time (the coarse clock,
    // as the reports are stamped with).
    const int64_t now = metric_ == AP_PICK_ORCA ? ap_load_coarse_now_ns() : 0;
    best = ap_pick1(table_.get(), rng);
    for (uint32_t draw = 1; draw < choice_count_; ++draw) {
      const size_t c = ap_pick1(table_.get(), rng);
      if (c == best) continue;
      if (ap_load_choose(&slots_[best].counters->load, slots_[best].weight,
                         &slots_[c].counters->load, slots_[c].weight, metric_,
                         now, rng) == 1) {
        best = c;
      }
    }
  }
  return best;
}

ap_candidate AperturePicker::Candidate(size_t slot) const {
  return ap_candidate{
      static_cast<double>(slots_[slot].counters->Outstanding()),
      slots_[slot].weight, 1};
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
  slot.counters->picks.fetch_add(1, std::memory_order_relaxed);
  void* memory = args.call_state->Alloc(sizeof(CallTracker));
  auto* tracker = new (memory) CallTracker(slot.counters, metric_);
  return LoadBalancingPolicy::PickResult::Complete(
      slot.subchannel,
      std::unique_ptr<LoadBalancingPolicy::SubchannelCallTrackerInterface>(
          tracker));
}

}  // namespace aperture_lb
