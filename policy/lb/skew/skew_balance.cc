#include "policy/lb/skew/skew_balance.h"

#include <string.h>

#include <algorithm>

#include "policy/core/pick/ap_load.h"
#include "policy/core/skew/ap_orca.h"
#include "policy/lb/core_ptr.h"
#include <grpc/support/log.h>

namespace aperture_lb {

void SkewBalance::Reset() {
  ap_skew_init(&skew_);
  memset(&last_, 0, sizeof(last_));
  last_.reason = AP_SKEW_OFF;
  last_.others_rate = -1;
  last_.ratio = -1;
  last_.multiplier = 1;
  logical_ = 0;
}

bool SkewBalance::Measure(const RingSnapshot& ring, const ap_aperture* current,
                          uint32_t min_aperture) {
  const ap_aperture* built = ring.aperture();
  const Coordinate& coordinate = ring.coordinate();
  ap_error err;
  AperturePtr base_owned;
  const ap_aperture* base = built;
  const uint32_t configured =
      std::min<uint32_t>(min_aperture, static_cast<uint32_t>(ring.size()));
  if (ap_aperture_logical(built) != configured) {
    // Built wider than the configuration: the base window is the one the
    // configured minAperture gives (window modes only widen, so no plan).
    ap_subset_params params;
    ap_aperture* raw = nullptr;
    if (ap_subset_params_for_client(
            ap_aperture_mode(built), coordinate.known ? coordinate.peer_index : 0,
            coordinate.known ? coordinate.peer_count : 0, min_aperture, 0,
            &params, &err) != AP_OK ||
        ap_aperture_compute(ring.ring(), &params, &raw, &err) != AP_OK) {
      gpr_log(GPR_ERROR, "aperture: skew balance: base aperture: %s",
              err.message);
      return false;
    }
    base_owned.reset(raw);
    base = raw;
  }
  others_.assign(ap_aperture_count(current), 0.0);
  if (ap_skew_geometry_compute(ring.ring(), base,
                               coordinate.known ? coordinate.peer_count : 0,
                               current, others_.data(), &geometry_,
                               &err) != AP_OK) {
    gpr_log(GPR_ERROR, "aperture: skew balance: %s", err.message);
    return false;
  }
  return true;
}

ap_skew_decision SkewBalance::Tick(const RingSnapshot& ring,
                                   const ap_aperture* current,
                                   uint32_t min_aperture, EndpointMap& endpoints,
                                   int64_t now_ns) {
  if (current == nullptr || !Measure(ring, current, min_aperture)) return last_;
  members_.clear();
  for (size_t k = 0; k < ap_aperture_count(current); ++k) {
    const ap_member* m = ap_aperture_member(current, k);
    if (ring.draining(m->index)) continue;
    auto it = endpoints.find(ring.address(m->index));
    if (it == endpoints.end()) continue;
    Endpoint& e = *it->second;
    const EndpointCounters& c = *e.counters();
    ap_skew_member in;
    in.state = e.skew();
    in.calls = static_cast<double>(c.Picks());
    ap_orca_sample_rps(&c.orca, now_ns, &in.rps);
    ap_load_utilization(&c.load, now_ns, &in.utilization);
    in.others = others_[k];
    in.pick_weight = m->pick_weight;
    members_.push_back(in);
  }
  ap_skew_decision d;
  ap_error err;
  if (ap_skew_tick(&skew_, &geometry_, members_.data(), members_.size(), now_ns,
                   &d, &err) != AP_OK) {
    gpr_log(GPR_ERROR, "aperture: skew balance: %s", err.message);
    return last_;
  }
  last_ = d;
  logical_ = d.logical == geometry_.min_aperture ? 0 : d.logical;
  return d;
}

}  // namespace aperture_lb
