#include "tests/interop/orca_probe.h"

#include <limits.h>

#include <mutex>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

#include "src/core/ext/filters/client_channel/backend_metric.h"
#include "src/core/lib/channel/channel_stack_builder.h"
#include "src/core/lib/channel/promise_based_filter.h"
#include "src/core/lib/config/core_configuration.h"
#include "src/core/lib/promise/map.h"
#include "src/core/lib/surface/channel_stack_type.h"
#include "src/core/lib/transport/metadata_batch.h"

namespace {

std::mutex g_mu;
long g_count = 0;
std::string g_last;

// Storage for gRPC's own parser of the report (what the LB policy sees).
class Allocator : public grpc_core::BackendMetricAllocatorInterface {
 public:
  grpc_core::BackendMetricData *AllocateBackendMetricData() override { return &data_; }
  char *AllocateString(size_t size) override {
    strings_.emplace_back(size, '\0');
    return &strings_.back()[0];
  }

 private:
  grpc_core::BackendMetricData data_;
  std::vector<std::string> strings_;
};

class OrcaProbeFilter : public grpc_core::ChannelFilter {
 public:
  static const grpc_channel_filter kFilter;

  static absl::StatusOr<OrcaProbeFilter> Create(const grpc_core::ChannelArgs &,
                                                ChannelFilter::Args) {
    return OrcaProbeFilter();
  }

  grpc_core::ArenaPromise<grpc_core::ServerMetadataHandle> MakeCallPromise(
      grpc_core::CallArgs call_args, grpc_core::NextPromiseFactory next) override {
    return grpc_core::Map(next(std::move(call_args)), [](grpc_core::ServerMetadataHandle md) {
      if (const auto *v = md->get_pointer(grpc_core::EndpointLoadMetricsBinMetadata())) {
        std::lock_guard<std::mutex> lock(g_mu);
        g_count++;
        g_last = std::string(v->as_string_view());
      }
      return md;
    });
  }
};

const grpc_channel_filter OrcaProbeFilter::kFilter =
    grpc_core::MakePromiseBasedFilter<OrcaProbeFilter, grpc_core::FilterEndpoint::kClient>(
        "orca_probe");

bool AddProbe(grpc_core::ChannelStackBuilder *builder) {
  builder->PrependFilter(&OrcaProbeFilter::kFilter);
  return true;
}

}  // namespace

void OrcaProbeInstall() {
  grpc_core::CoreConfiguration::RegisterBuilder([](grpc_core::CoreConfiguration::Builder *b) {
    b->channel_init()->RegisterStage(GRPC_CLIENT_SUBCHANNEL, INT_MAX, AddProbe);
  });
}

int OrcaProbeGrpcParse(const std::string &bytes, double *cpu_utilization) {
  Allocator allocator;
  const grpc_core::BackendMetricData *d =
      grpc_core::ParseBackendMetricData(bytes, &allocator);
  if (d == nullptr) return -1;
  *cpu_utilization = d->cpu_utilization;
  return 0;
}

long OrcaProbeCount() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_count;
}

std::string OrcaProbeLast() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_last;
}
