// What the next picker and the widening see of the aperture's endpoints:
// the census of its members (READY slots, failures, idle ones) and the
// usable mask ap_aperture_widen() takes.
#ifndef APERTURE_LB_ENDPOINTS_APERTURE_CENSUS_H
#define APERTURE_LB_ENDPOINTS_APERTURE_CENSUS_H

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "policy/core/subset/ap_aperture.h"
#include "policy/lb/affinity/affinity_router.h"
#include "policy/lb/endpoints/endpoint.h"
#include "policy/lb/picker/picker.h"
#include "policy/lb/ring/ring_snapshot.h"

namespace aperture_lb {

// The aperture's endpoints as the next picker sees them. Members without a
// subchannel and draining members are left out; a READY slot's weight is
// the member's pick weight times its skew factor (Endpoint::skew()).
struct ApertureCensus {
  std::vector<AperturePicker::Slot> ready;  // READY members, aperture order
  std::vector<AffinityMember> affinity;     // every counted member
  size_t total = 0;                         // counted members
  size_t not_failed = 0;                    // of those, not failed
  size_t idle = 0;                          // of those, IDLE
  const Endpoint* last_failed = nullptr;    // the last failed one, if any
};

// The ready[] array ap_aperture_widen() takes: one byte per ring endpoint,
// 0 for a draining member or a failed endpoint. Reset() fills it once per
// rebuild (O(N)); Mark() then only touches the endpoints with a subchannel
// (O(aperture)), so a member's connectivity change costs no O(N) pass.
class UsableMask {
 public:
  // Every member of `ring` usable but the draining ones.
  void Reset(const RingSnapshot& ring);
  // Restores the endpoints the last Mark() cleared, clears the failed ones
  // of `endpoints` (members of the ring Reset() saw) and returns the array
  // (ring.size() bytes, valid until the next call).
  const uint8_t* Mark(const RingSnapshot& ring, const EndpointMap& endpoints);
 private:
  friend uint64_t UsableMaskWrites(const UsableMask& mask);  // test_hooks.h

  std::vector<uint8_t> usable_;
  std::vector<uint32_t> cleared_;  // failed endpoints cleared by Mark()
  uint64_t writes_ = 0;
};

// Counts the endpoints of `members` (an aperture over `ring`).
ApertureCensus TakeCensus(const RingSnapshot& ring, const ap_aperture* members,
                          const EndpointMap& endpoints);

}  // namespace aperture_lb

#endif  // APERTURE_LB_ENDPOINTS_APERTURE_CENSUS_H
