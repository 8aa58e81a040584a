// The process coordinate set through the C API (aperture_set_coordinate /
// aperture_clear_coordinate), and the listeners that let live channels
// re-coordinate at once when it changes instead of at their next update.
#ifndef APERTURE_LB_COORDINATE_PROCESS_COORDINATE_H
#define APERTURE_LB_COORDINATE_PROCESS_COORDINATE_H

#include <stdint.h>

#include <functional>

#include "policy/core/ap_error.h"

namespace aperture_lb {

// Sets the process coordinate and tells every listener. AP_ERANGE when
// peer_count is 0 or above AP_MAX_PEERS, AP_EINVAL when peer_index >=
// peer_count. Thread-safe.
int SetApiCoordinate(uint32_t peer_index, uint32_t peer_count, ap_error* err);

// Clears it and tells every listener. Thread-safe.
void ClearApiCoordinate();

// The process coordinate: true with *index and *count set, false when none
// is set. Thread-safe, lock-free.
bool ApiCoordinate(uint32_t* peer_index, uint32_t* peer_count);

// Adds a listener; returns its id for RemoveCoordinateListener. The
// listener runs on the thread that changed the coordinate, inside gRPC's
// thread context (RunInGrpcContext), without locks held, and must only hop
// to its owner's serializer. Thread-safe.
uint64_t AddCoordinateListener(std::function<void()> fn);

// Removes a listener; a call already under way may still finish.
void RemoveCoordinateListener(uint64_t id);

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_PROCESS_COORDINATE_H
