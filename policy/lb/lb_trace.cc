#include "policy/lb/lb_trace.h"

#include <stdlib.h>
#include <string.h>

#include <string>

#include <grpc/grpc.h>

namespace aperture_lb {

grpc_core::TraceFlag g_aperture_trace(false, "aperture");

void ApplyTraceEnvironment() {
  const char* env = getenv("GRPC_TRACE");
  if (env == nullptr) return;
  // Same grammar as gRPC: comma-separated names, "-name" disables.
  std::string list(env);
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    if (name == "aperture" || name == "all") {
      grpc_tracer_set_enabled("aperture", 1);
    } else if (name == "-aperture" || name == "-all") {
      grpc_tracer_set_enabled("aperture", 0);
    }
    start = end + 1;
  }
}

}  // namespace aperture_lb
