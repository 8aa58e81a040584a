// Process-wide listeners for coordinate changes that do not come through a
// channel (aperture_set_coordinate / aperture_clear_coordinate), so that
// live channels re-coordinate at once instead of at their next update.
#ifndef APERTURE_LB_COORDINATE_LISTENERS_H
#define APERTURE_LB_COORDINATE_LISTENERS_H

#include <stdint.h>

#include <functional>

namespace aperture_lb {

// Adds a listener; returns its id for RemoveCoordinateListener. The
// listener runs on the thread that changed the coordinate, without locks
// held, and must only hop to its owner's serializer. Thread-safe.
uint64_t AddCoordinateListener(std::function<void()> fn);

// Removes a listener; a call already under way may still finish.
void RemoveCoordinateListener(uint64_t id);

// Calls every listener (inside a gRPC ExecCtx).
void NotifyCoordinateListeners();

}  // namespace aperture_lb

#endif  // APERTURE_LB_COORDINATE_LISTENERS_H
