// The pick's random generator: one per thread, so picks on different
// threads share no state and take no lock.
#ifndef APERTURE_LB_PICKER_THREAD_RNG_H
#define APERTURE_LB_PICKER_THREAD_RNG_H

#include "policy/core/ap_rng.h"

namespace aperture_lb {

// This thread's generator, seeded on first use from the clock, a process
// counter and the thread's own address (distinct per thread and process).
ap_rng* ThreadRng();

}  // namespace aperture_lb

#endif  // APERTURE_LB_PICKER_THREAD_RNG_H
