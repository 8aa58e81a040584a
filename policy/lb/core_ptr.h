// Owning pointers to the C core's objects: each one frees itself with the
// core's own destroy function, so the shim has no hand-written clear paths.
#ifndef APERTURE_LB_CORE_PTR_H
#define APERTURE_LB_CORE_PTR_H

#include <memory>

#include "policy/affinity/ap_session_table.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/affinity/ap_hash_ring.h"
#include "policy/core/membership/ap_membership.h"
#include "policy/core/pick/ap_health_group.h"
#include "policy/core/pick/ap_pick.h"
#include "policy/core/ring/ap_ring.h"

namespace aperture_lb {

struct CoreDeleter {
  void operator()(ap_ring* p) const { ap_ring_destroy(p); }
  void operator()(ap_aperture* p) const { ap_aperture_destroy(p); }
  void operator()(ap_pick_table* p) const { ap_pick_table_destroy(p); }
  void operator()(ap_membership* p) const { ap_membership_destroy(p); }
  void operator()(ap_hash_ring* p) const { ap_hash_ring_destroy(p); }
  void operator()(ap_session_table* p) const { ap_session_table_destroy(p); }
  // Reference-counted: drops the holder's reference.
  void operator()(ap_health_group* p) const { ap_health_group_unref(p); }
};

using RingPtr = std::unique_ptr<ap_ring, CoreDeleter>;
using AperturePtr = std::unique_ptr<ap_aperture, CoreDeleter>;
using PickTablePtr = std::unique_ptr<ap_pick_table, CoreDeleter>;
using MembershipPtr = std::unique_ptr<ap_membership, CoreDeleter>;
using HashRingPtr = std::unique_ptr<ap_hash_ring, CoreDeleter>;
using SessionTablePtr = std::unique_ptr<ap_session_table, CoreDeleter>;
using HealthGroupPtr = std::unique_ptr<ap_health_group, CoreDeleter>;

// Another holder's reference to `group` (may be null).
inline HealthGroupPtr ShareHealthGroup(ap_health_group* group) {
  ap_health_group_ref(group);
  return HealthGroupPtr(group);
}

}  // namespace aperture_lb

#endif  // APERTURE_LB_CORE_PTR_H
