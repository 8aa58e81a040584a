// Even load when the clients are not alike (pickMetric orca with
// clientSkewBalance, the default): every AP_SKEW_TICK_NS the policy hands
// Tick() its ring and the aperture in use; Tick() gathers, per member, the
// calls this client picked for it, the rate and the utilization its server
// reports (ORCA, sampled by the call trackers), feeds them to the core's
// controller (ap_skew.h) and returns its decision: the logical aperture to
// build the ring with (wider for a client heavier than the others) and
// whether the members' weight factors (kept in each Endpoint, applied by
// the census to the next picker) moved. No ring math here: the core
// computes the geometry, the rates, the width and the factors.
#ifndef APERTURE_LB_SKEW_SKEW_BALANCE_H
#define APERTURE_LB_SKEW_SKEW_BALANCE_H

#include <stdint.h>

#include <vector>

#include "policy/core/skew/ap_skew.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/lb/config/config.h"
#include "policy/lb/endpoints/endpoint.h"
#include "policy/lb/ring/ring_snapshot.h"

namespace aperture_lb {

class SkewBalance {
 public:
  SkewBalance() { Reset(); }

  // Whether `settings` turn it on: pickMetric orca and clientSkewBalance.
  static bool Enabled(const ApertureSettings& settings) {
    return settings.pick_metric == AP_PICK_ORCA && settings.client_skew_balance;
  }

  // Forgets everything: base width, no estimate (reason "off").
  void Reset();

  // The minAperture to build the ring with: 0 for the configured one (the
  // controller asks for nothing else), else the logical aperture it asked
  // for.
  uint32_t logical() const { return logical_; }

  // One tick at now_ns (ap_load_coarse_now_ns()'s clock, which the reports
  // are stamped with) over `current`, the aperture in use on `ring`, whose
  // base width is the configured minAperture `min_aperture`. Updates the
  // endpoints' skew state (Endpoint::skew()) and logical(). A core error
  // (none expected) is logged and leaves everything as it was.
  ap_skew_decision Tick(const RingSnapshot& ring, const ap_aperture* current,
                        uint32_t min_aperture, EndpointMap& endpoints,
                        int64_t now_ns);

  // The last decision, for the status.
  const ap_skew_decision& last() const { return last_; }

 private:
  // The geometry of `current` (the base aperture computed by the core when
  // the ring was built wider); false on a core error.
  bool Measure(const RingSnapshot& ring, const ap_aperture* current,
               uint32_t min_aperture);

  ap_skew skew_;
  ap_skew_decision last_;
  uint32_t logical_ = 0;
  ap_skew_geometry geometry_;
  std::vector<double> others_;
  std::vector<ap_skew_member> members_;
};

}  // namespace aperture_lb

#endif  // APERTURE_LB_SKEW_SKEW_BALANCE_H
