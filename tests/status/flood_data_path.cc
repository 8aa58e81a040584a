#include "tests/status/flood_data_path.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include <chrono>
#include <utility>

#include "policy/lb/affinity/affinity_router.h"
#include "policy/lb/affinity/affinity_settings.h"
#include "policy/lb/picker/endpoint_counters.h"
#include "policy/lb/picker/picker.h"
#include "policy/lb/state/published_state.h"
#include "policy/lb/state/state_publisher.h"
#include "policy/registry/ap_registry.h"
#include "tests/lb/lb_test_util.h"
#include "tests/lb/picker_fakes.h"

namespace aperture_test {
namespace {

constexpr char kHeader[] = "x-session-key";
constexpr int kBuckets = 1400;  // 10 ns x 1.02^1400: beyond an hour
const double kLogStep = log(1.02);

int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string Key(int i) { return "user-" + std::to_string(i); }

// The call's request headers as the picker sees them: the session key.
class KeyMetadata : public grpc_core::LoadBalancingPolicy::MetadataInterface {
 public:
  void Set(const std::string* key) { key_ = key; }
  void Add(absl::string_view, absl::string_view) override {}
  std::vector<std::pair<std::string, std::string>> TestOnlyCopyToVector() override { return {}; }
  absl::optional<absl::string_view> Lookup(absl::string_view key, std::string*) const override {
    if (key != kHeader || key_ == nullptr) return absl::nullopt;
    return absl::string_view(*key_);
  }

 private:
  const std::string* key_ = nullptr;
};

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBuckets, 0) {}

void LatencyHistogram::Add(int64_t ns) {
  int b = ns <= 10 ? 0 : static_cast<int>(log(static_cast<double>(ns) / 10.0) / kLogStep) + 1;
  if (b >= kBuckets) b = kBuckets - 1;
  buckets_[b]++;
  count_++;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int b = 0; b < kBuckets; ++b) buckets_[b] += other.buckets_[b];
  count_ += other.count_;
}

double LatencyHistogram::Quantile(double q) const {
  if (count_ == 0) return 0;
  const double want = q * static_cast<double>(count_);
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (static_cast<double>(seen) >= want) return 10.0 * exp(kLogStep * b);
  }
  return 10.0 * exp(kLogStep * (kBuckets - 1));
}

struct DataPath::Impl {
  DataPathOptions options;
  std::vector<std::unique_ptr<Backend>> backends;
  std::unique_ptr<TestChannel> channel;
  // The pick probe, as the policy holds its parts.
  aperture_lb::AffinityState affinity;
  std::unique_ptr<aperture_lb::AperturePicker> picker;
  std::unique_ptr<aperture_lb::StatePublisher> publisher;
  ap_registry_entry* entry = nullptr;
  std::vector<std::string> keys;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  // One set of phases per thread, written by that thread only.
  std::vector<std::vector<PhaseSamples>> samples;

  static int Snapshot(void* ctx, ap_ring_state* out) {
    return static_cast<aperture_lb::StatePublisher*>(ctx)->Snapshot(out);
  }
};

DataPath::DataPath(const DataPathOptions& options) : impl_(new Impl) {
  impl_->options = options;
  for (int i = 0; i < options.keys; ++i) impl_->keys.push_back(Key(i));
}

DataPath::~DataPath() {
  Stop();
  if (impl_->entry != nullptr) ap_registry_remove(impl_->entry);
}

bool DataPath::Start(std::string* error) {
  Impl& m = *impl_;
  const DataPathOptions& o = m.options;
  m.backends = StartBackends(o.backends);
  std::vector<std::string> addresses = Addresses(m.backends);
  const std::string sticky = "\"affinity\":\"sticky\",\"affinityHeader\":\"" + std::string(kHeader) +
                             "\",\"maxSessions\":" + std::to_string(o.max_sessions) +
                             ",\"sessionIdleMs\":" + std::to_string(o.session_idle_ms);
  m.channel = std::make_unique<TestChannel>(
      "flood-data-path",
      Config("{\"peerIndex\":0,\"peerCount\":1,\"minAperture\":" + std::to_string(o.backends) +
             ",\"eagerConnect\":true," + sticky + "}"),
      /*retries=*/false);
  m.channel->SetAddresses(addresses);
  if (!WaitAllMembersReady(m.channel->target(), addresses.size())) {
    *error = "the data path's channel never had every member READY";
    return false;
  }

  // The pick probe: the sticky router and picker the policy would build
  // over these members, its table published through the registry.
  aperture_lb::AffinitySettings settings = aperture_lb::DefaultAffinitySettings();
  std::string parse_error;
  if (!aperture_lb::ParseAffinityMode("sticky", &settings, &parse_error) ||
      !aperture_lb::ParseAffinityHeader(kHeader, &settings, &parse_error)) {
    *error = "affinity settings: " + parse_error;
    return false;
  }
  settings.max_sessions = static_cast<uint32_t>(o.max_sessions);
  settings.session_idle_ms = static_cast<uint64_t>(o.session_idle_ms);
  m.affinity.Configure(settings);
  std::vector<aperture_lb::AffinityMember> members;
  std::vector<aperture_lb::AperturePicker::Slot> slots;
  for (int i = 0; i < o.backends; ++i) {
    members.push_back({"10.9.0." + std::to_string(i) + ":443", 1.0, i});
    slots.push_back({grpc_core::MakeRefCounted<IdleSubchannel>(),
                     grpc_core::MakeRefCounted<aperture_lb::EndpointCounters>(), 1.0});
  }
  auto picker = aperture_lb::AperturePicker::Create(std::move(slots), 2,
                                                    m.affinity.MakeRouter(members));
  if (!picker.ok() || m.affinity.sessions() == nullptr) {
    *error = "pick probe: " + (picker.ok() ? std::string("no session table")
                                           : std::string(picker.status().message()));
    return false;
  }
  m.picker = std::move(*picker);
  m.publisher = std::make_unique<aperture_lb::StatePublisher>("flood-pick-probe");
  auto state = std::make_shared<aperture_lb::PublishedState>();
  state->mode = "smooth";
  state->sessions = m.affinity.sessions();
  m.publisher->Publish(state);
  if (ap_registry_add(&Impl::Snapshot, m.publisher.get(), &m.entry, nullptr) != AP_OK) {
    *error = "pick probe: cannot register";
    return false;
  }

  // Every sample slot exists before the run, so recording allocates
  // nothing the memory figures would count.
  m.samples.assign(static_cast<size_t>(o.callers + o.pick_threads),
                   std::vector<PhaseSamples>(static_cast<size_t>(o.phases)));
  for (int t = 0; t < o.callers; ++t) {
    m.threads.emplace_back([this, t] {
      Impl& m = *impl_;
      std::vector<PhaseSamples>& mine = m.samples[static_cast<size_t>(t)];
      size_t next = static_cast<size_t>(t) * 7919;
      while (!m.stop.load()) {
        const std::string& key = m.keys[next++ % m.keys.size()];
        grpc::Status status;
        const int64_t start = NowNs();
        const bool ok = !m.channel->CallServedBy(kHeader, key, &status, 5000).empty();
        const int64_t took = NowNs() - start;
        const int p = phase_.load();
        if (p < 0 || p >= static_cast<int>(mine.size())) continue;
        mine[static_cast<size_t>(p)].calls.Add(took);
        if (!ok && mine[static_cast<size_t>(p)].call_failures++ == 0) {
          mine[static_cast<size_t>(p)].first_failure = status.error_message();
        }
      }
    });
  }
  for (int t = 0; t < o.pick_threads; ++t) {
    m.threads.emplace_back([this, t] {
      Impl& m = *impl_;
      std::vector<PhaseSamples>& mine = m.samples[static_cast<size_t>(m.options.callers + t)];
      ScratchCallState call_state;
      KeyMetadata metadata;
      grpc_core::LoadBalancingPolicy::PickArgs args{"/flood.Probe/Pick", &metadata, &call_state};
      const int64_t interval = static_cast<int64_t>(m.options.pick_interval_us) * 1000;
      size_t next_key = static_cast<size_t>(t) * 104729;
      int64_t due = NowNs();
      while (!m.stop.load()) {
        if (NowNs() < due) {
          struct timespec at = {static_cast<time_t>(due / 1000000000), static_cast<long>(due % 1000000000)};
          clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
          continue;
        }
        metadata.Set(&m.keys[next_key++ % m.keys.size()]);
        auto result = m.picker->Pick(args);
        auto* complete =
            absl::get_if<grpc_core::LoadBalancingPolicy::PickResult::Complete>(&result.result);
        if (complete != nullptr && complete->subchannel_call_tracker != nullptr) {
          complete->subchannel_call_tracker->Start();
          complete->subchannel_call_tracker->Finish({absl::OkStatus(), nullptr, nullptr});
        }
        const int64_t done = NowNs();
        const int p = phase_.load();
        if (p >= 0 && p < static_cast<int>(mine.size())) {
          mine[static_cast<size_t>(p)].picks.Add(done - due);
        }
        due += interval;
      }
    });
  }
  // Threads that keep every core busy: the probes and callers sleep
  // between their picks and calls, as a service's threads do.
  for (int t = 0; t < o.burners; ++t) {
    m.threads.emplace_back([this] {
      volatile uint64_t spin = 0;
      while (!impl_->stop.load()) spin = spin + 1;
    });
  }
  return true;
}

void DataPath::Stop() {
  impl_->stop.store(true);
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

PhaseSamples DataPath::Collect(int phase) const {
  PhaseSamples out;
  for (const auto& thread : impl_->samples) {
    if (phase < 0 || phase >= static_cast<int>(thread.size())) continue;
    const PhaseSamples& s = thread[static_cast<size_t>(phase)];
    out.calls.Merge(s.calls);
    out.picks.Merge(s.picks);
    out.call_failures += s.call_failures;
    if (out.first_failure.empty()) out.first_failure = s.first_failure;
  }
  return out;
}

}  // namespace aperture_test
