#include "policy/lb/endpoints/aperture_census.h"

#include "policy/lb/test_hooks.h"

namespace aperture_lb {

void UsableMask::Reset(const RingSnapshot& ring) {
  usable_.assign(ring.size(), 1);
  for (size_t i = 0; i < ring.size(); ++i) {
    if (ring.draining(i)) usable_[i] = 0;  // the widening covers it
  }
  cleared_.clear();
  writes_ += ring.size();
}

const uint8_t* UsableMask::Mark(const RingSnapshot& ring,
                                const EndpointMap& endpoints) {
  for (uint32_t i : cleared_) usable_[i] = ring.draining(i) ? 0 : 1;
  writes_ += cleared_.size();
  cleared_.clear();
  for (const auto& kv : endpoints) {
    uint32_t index = 0;
    if (!kv.second->failed() || !ring.IndexOf(kv.first, &index)) continue;
    usable_[index] = 0;
    cleared_.push_back(index);
  }
  writes_ += cleared_.size();
  return usable_.data();
}

ApertureCensus TakeCensus(const RingSnapshot& ring, const ap_aperture* members,
                          const EndpointMap& endpoints) {
  ApertureCensus c;
  for (size_t k = 0; k < ap_aperture_count(members); ++k) {
    const ap_member* m = ap_aperture_member(members, k);
    if (ring.draining(m->index)) continue;  // keeps its subchannel, unpicked
    auto it = endpoints.find(ring.address(m->index));
    if (it == endpoints.end()) continue;
    const Endpoint* e = it->second.get();
    const bool ready = e->state() == GRPC_CHANNEL_READY;
    ++c.total;
    c.affinity.push_back({e->address(), ap_ring_weight(ring.ring(), m->index),
                          ready ? static_cast<int>(c.ready.size()) : -1});
    if (ready) {
      // The skew balance's factor (1 unless it moved it: ap_skew.h).
      c.ready.push_back({e->subchannel_ref(), e->counters(),
                         m->pick_weight * ap_skew_member_factor(e->skew())});
    }
    if (e->failed()) {
      c.last_failed = e;
    } else {
      ++c.not_failed;
      if (e->state() == GRPC_CHANNEL_IDLE) ++c.idle;
    }
  }
  return c;
}

uint64_t UsableMaskWrites(const UsableMask& mask) { return mask.writes_; }

}  // namespace aperture_lb
