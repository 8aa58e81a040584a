// The "aperture" trace flag: GRPC_TRACE=aperture (or "all") makes the policy
// log its decisions (coordinate, aperture, widening, pickers) at INFO level.
#ifndef APERTURE_LB_TRACE_H
#define APERTURE_LB_TRACE_H

#include <grpc/support/log.h>

#include "src/core/lib/debug/trace.h"

namespace aperture_lb {

// Registered with gRPC's tracer list when the library is loaded, so
// grpc_init() applies GRPC_TRACE to it like to any built-in flag.
extern grpc_core::TraceFlag g_aperture_trace;

// Applies GRPC_TRACE to the flag again: needed when the library was loaded
// after grpc_init() already parsed the variable.
void ApplyTraceEnvironment();

}  // namespace aperture_lb

#define APERTURE_TRACE(...)                               \
  do {                                                    \
    if (GRPC_TRACE_FLAG_ENABLED(aperture_lb::g_aperture_trace)) { \
      gpr_log(GPR_INFO, __VA_ARGS__);                     \
    }                                                     \
  } while (0)

#endif  // APERTURE_LB_TRACE_H
