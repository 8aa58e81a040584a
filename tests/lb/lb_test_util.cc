#include "tests/lb/lb_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <regex>
#include <thread>
#include <utility>

#include <grpc/grpc.h>
#include <grpc/support/alloc.h>
#include <grpcpp/alarm.h>

#include "interop/testing/latency_tail.h"
#include "policy/core/pick/ap_health.h"
#include "policy/registry/ap_registry.h"
#include "src/core/lib/address_utils/parse_address.h"
#include "src/core/lib/config/core_configuration.h"
#include "src/core/lib/json/json.h"
#include "src/core/lib/load_balancing/lb_policy_registry.h"
#include "src/core/lib/iomgr/exec_ctx.h"
#include "src/core/lib/resolver/server_address.h"
#include "src/core/lib/service_config/service_config_impl.h"

namespace aperture_test {

// ---------------------------------------------------------------- Backend

class Backend::Service : public grpc::CallbackGenericService {
 public:
  Service(std::atomic<uint64_t>* calls, int delay_ms, std::string address,
          const Trailers* trailers)
      : calls_(calls),
        delay_ms_(delay_ms),
        address_(std::move(address)),
        trailers_(trailers) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* ctx) override {
    for (const auto& kv : *trailers_) ctx->AddTrailingMetadata(kv.first, kv.second);
    return new Reactor(this);
  }

  // While frozen, calls are read and held unanswered (their connection
  // stays up, as with a hung process); thawing answers every held call.
  void SetFrozen(bool frozen) {
    std::vector<Reactor*> release;
    {
      std::lock_guard<std::mutex> lock(mu_);
      frozen_ = frozen;
      if (!frozen) release.swap(held_);
    }
    for (Reactor* r : release) r->Reply();
  }
  size_t held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_.size();
  }
  void SetTail(double share, int delay_ms, uint64_t seed) {
    latency_tail* tail = share > 0 ? io_latency_tail_create(share, delay_ms, seed) : nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    io_latency_tail_destroy(tail_);
    tail_ = tail;
  }
  ~Service() { io_latency_tail_destroy(tail_); }

 private:
  // Reads the request, answers with the backend's address, finishes.
  class Reactor : public grpc::ServerGenericBidiReactor {
   public:
    explicit Reactor(Service* service) : service_(service) { StartRead(&request_); }
    void OnReadDone(bool ok) override {
      if (!ok) {
        Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"));
        return;
      }
      service_->calls_->fetch_add(1);
      long delay_ms = service_->delay_ms_;
      {
        std::lock_guard<std::mutex> lock(service_->mu_);
        if (service_->frozen_) {
          service_->held_.push_back(this);
          return;
        }
        delay_ms += io_latency_tail_next_ms(service_->tail_);
      }
      if (delay_ms > 0) {
        alarm_.Set(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(delay_ms),
                   [this](bool) { Reply(); });
      } else {
        Reply();
      }
    }
    void OnDone() override { delete this; }
    void Reply() {
      grpc::Slice slice(service_->address_);
      response_ = grpc::ByteBuffer(&slice, 1);
      StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
    }

   private:
    Service* const service_;
    grpc::ByteBuffer request_, response_;
    grpc::Alarm alarm_;
  };

  std::atomic<uint64_t>* calls_;
  const int delay_ms_;
  const std::string address_;
  const Trailers* trailers_;  // the Backend's
  std::mutex mu_;
  bool frozen_ = false;
  std::vector<Reactor*> held_;
  latency_tail* tail_ = nullptr;  // SetTail; null: none
};

namespace {

// A port the kernel just handed out. Binding it explicitly (instead of port
// 0) gives the server's channelz listen socket a name with the port.
int PickFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    perror("PickFreePort");
    abort();
  }
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

Backend::Backend(int delay_ms, Trailers trailers)
    : delay_ms_(delay_ms), trailers_(std::move(trailers)) {
  const int port = PickFreePort();
  if (!Listen(port)) {
    fprintf(stderr, "backend: cannot listen on port %d\n", port);
    abort();
  }
}

Backend::~Backend() { Stop(); }

std::string Backend::address() const {
  return "127.0.0.1:" + std::to_string(port_);
}

bool Backend::Listen(int port) {
  const std::string address = "127.0.0.1:" + std::to_string(port);
  service_ = std::make_unique<Service>(&calls_, delay_ms_, address, &trailers_);
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound);
  builder.RegisterCallbackGenericService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ != nullptr && bound == port) {
    port_ = port;
    return true;
  }
  server_.reset();
  service_.reset();
  return false;
}

void Backend::Freeze(bool frozen) {
  if (service_ != nullptr) service_->SetFrozen(frozen);
}

size_t Backend::held() const {
  return service_ != nullptr ? service_->held() : 0;
}

void Backend::SetTail(double share, int delay_ms, uint64_t seed) {
  if (service_ != nullptr) service_->SetTail(share, delay_ms, seed);
}

void Backend::Stop() {
  if (server_ == nullptr) return;
  service_->SetFrozen(false);  // a held call would stall the shutdown
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  server_.reset();
  service_.reset();
}

void Backend::Restart() {
  if (server_ != nullptr) return;
  // The port was just released; retry briefly in case it lingers.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (Listen(port_)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  fprintf(stderr, "backend: cannot restart on port %d\n", port_);
  abort();
}

// ---------------------------------------------------------------- channelz

namespace {

std::string TakeString(char* json) {
  std::string s = json != nullptr ? json : "";
  gpr_free(json);
  return s;
}

std::vector<int64_t> AllIds(const std::string& json, const char* key) {
  std::vector<int64_t> ids;
  std::regex re(std::string("\"") + key + "\":\"([0-9]+)\"");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), re);
       it != std::sregex_iterator(); ++it) {
    ids.push_back(std::stoll((*it)[1].str()));
  }
  return ids;
}

}  // namespace

int ServerConnectionCount(int port) {
  std::string servers = TakeString(grpc_channelz_get_servers(0));
  const std::string listener =
      "\"chttp2 listener ipv4:127.0.0.1:" + std::to_string(port) + "\"";
  for (int64_t server_id : AllIds(servers, "serverId")) {
    std::string server = TakeString(grpc_channelz_get_server(server_id));
    if (server.find(listener) == std::string::npos) continue;
    std::string sockets =
        TakeString(grpc_channelz_get_server_sockets(server_id, 0, 10000));
    return static_cast<int>(AllIds(sockets, "socketId").size());
  }
  return -1;
}

// ---------------------------------------------------------------- channel

TestChannel::TestChannel(const std::string& name,
                         const std::string& service_config, bool retries,
                         const std::vector<std::pair<std::string, int>>& int_args)
    : target_("fake:///" + name),
      generator_(
          grpc_core::MakeRefCounted<grpc_core::FakeResolverResponseGenerator>()) {
  grpc::ChannelArguments args;
  args.SetPointerWithVtable(
      GRPC_ARG_FAKE_RESOLVER_RESPONSE_GENERATOR, generator_.get(),
      &grpc_core::FakeResolverResponseGenerator::kChannelArgPointerVtable);
  if (!service_config.empty()) args.SetServiceConfigJSON(service_config);
  // Each channel its own subchannels, so connection counts are per channel.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!retries) args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  for (const auto& kv : int_args) args.SetInt(kv.first, kv.second);
  channel_ = grpc::CreateCustomChannel(
      target_, grpc::InsecureChannelCredentials(), args);
  stub_ = std::make_unique<grpc::GenericStub>(channel_);
  // A channel starts its resolver (and so the policy) only when it leaves
  // IDLE.
  channel_->GetState(/*try_to_connect=*/true);
}

namespace {

grpc_core::Resolver::Result ResultOf(
    const std::vector<std::pair<std::string, uint32_t>>& addresses,
    const std::string& service_config) {
  grpc_core::ServerAddressList list;
  for (const auto& a : addresses) {
    auto sockaddr = grpc_core::StringToSockaddr(a.first);
    if (!sockaddr.ok()) abort();
    std::map<const char*,
             std::unique_ptr<grpc_core::ServerAddress::AttributeInterface>>
        attributes;
    if (a.second != 0) {
      attributes[grpc_core::ServerAddressWeightAttribute::
                     kServerAddressWeightAttributeKey] =
          std::make_unique<grpc_core::ServerAddressWeightAttribute>(a.second);
    }
    list.emplace_back(*sockaddr, grpc_core::ChannelArgs(),
                      std::move(attributes));
  }
  grpc_core::Resolver::Result result;
  result.addresses = std::move(list);
  if (!service_config.empty()) {
    result.service_config = grpc_core::ServiceConfigImpl::Create(
        grpc_core::ChannelArgs(), service_config);
  }
  return result;
}

grpc_core::Resolver::Result ResultOf(const std::vector<std::string>& addresses,
                                     const std::string& service_config) {
  std::vector<std::pair<std::string, uint32_t>> unweighted;
  for (const std::string& a : addresses) unweighted.emplace_back(a, 0);
  return ResultOf(unweighted, service_config);
}

}  // namespace

void TestChannel::SetAddresses(const std::vector<std::string>& addresses,
                               const std::string& service_config) {
  grpc_core::ExecCtx exec_ctx;
  generator_->SetResponse(ResultOf(addresses, service_config));
}

void TestChannel::SetWeightedAddresses(
    const std::vector<std::pair<std::string, uint32_t>>& addresses) {
  grpc_core::ExecCtx exec_ctx;
  generator_->SetResponse(ResultOf(addresses, ""));
}

void TestChannel::SetReresolutionAddresses(
    const std::vector<std::string>& addresses) {
  grpc_core::ExecCtx exec_ctx;
  generator_->SetReresolutionResponse(ResultOf(addresses, ""));
}

void TestChannel::SetResolverError(const std::string& message) {
  grpc_core::ExecCtx exec_ctx;
  grpc_core::Resolver::Result result;
  result.addresses = absl::UnavailableError(message);
  generator_->SetResponse(std::move(result));
}

grpc::Status TestChannel::Call(int timeout_ms) {
  return Unary("", "", timeout_ms, nullptr);
}

std::string TestChannel::CallServedBy(const std::string& header,
                                      const std::string& value,
                                      grpc::Status* status, int timeout_ms) {
  std::string served_by;
  grpc::Status result = Unary(header, value, timeout_ms, &served_by);
  if (status != nullptr) *status = result;
  return result.ok() ? served_by : "";
}

grpc::Status TestChannel::Unary(const std::string& header,
                                const std::string& value, int timeout_ms,
                                std::string* reply) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(timeout_ms));
  if (!value.empty()) context.AddMetadata(header, value);
  grpc::Slice slice(std::string("ping"));
  grpc::ByteBuffer request(&slice, 1), response;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  stub_->UnaryCall(&context, "/aperture.test.Echo/Ping", grpc::StubOptions(),
                   &request, &response, [&](grpc::Status s) {
                     std::lock_guard<std::mutex> lock(mu);
                     status = std::move(s);
                     done = true;
                     cv.notify_one();
                   });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  if (reply != nullptr && status.ok()) {
    std::vector<grpc::Slice> slices;
    if (!response.Dump(&slices).ok()) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "unreadable response");
    }
    reply->clear();
    for (const auto& s : slices) {
      reply->append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  return status;
}

int TestChannel::RunLoad(int count, int concurrency,
                         std::map<int, int>* failures_by_code,
                         std::string* first_error, int call_timeout_ms) {
  std::atomic<int> next{0}, failures{0};
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t) {
    threads.emplace_back([&] {
      while (next.fetch_add(1) < count) {
        grpc::Status s = Call(call_timeout_ms);
        if (!s.ok()) {
          failures.fetch_add(1);
          std::lock_guard<std::mutex> lock(mu);
          if (failures_by_code != nullptr) ++(*failures_by_code)[s.error_code()];
          if (first_error != nullptr && first_error->empty()) {
            *first_error = s.error_message();
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  return failures.load();
}

// ---------------------------------------------------------------- registry

const EndpointView* StateView::Find(const std::string& address) const {
  for (const auto& e : endpoints) {
    if (e.address == address) return &e;
  }
  return nullptr;
}

std::vector<std::string> StateView::Members() const {
  std::vector<std::string> out;
  for (const auto& e : endpoints) {
    if (e.in_aperture) out.push_back(e.address);
  }
  return out;
}

bool StateView::IsMember(const std::string& address) const {
  const EndpointView* e = Find(address);
  return e != nullptr && e->in_aperture;
}

bool StateView::MemberReady(const std::string& address) const {
  const EndpointView* e = Find(address);
  return e != nullptr && e->in_aperture && e->connectivity == AP_CONN_READY;
}

bool Snapshot(const std::string& filter, StateView* out) {
  ap_ring_state* states = nullptr;
  size_t count = 0;
  ap_snapshot_query all = {filter.c_str(), 0, SIZE_MAX};
  if (ap_registry_snapshot(&all, SIZE_MAX, &states, &count, nullptr) != AP_OK) {
    return false;
  }
  bool ok = count == 1;
  if (ok) {
    const ap_ring_state& s = states[0];
    out->target = s.target;
    out->mode = s.mode;
    out->coordinate_source = ap_coordinate_source_name(s.coordinate_source);
    out->last_status = s.last_status;
    out->peer_target = s.peer_target != nullptr ? s.peer_target : "";
    out->peer_fingerprint = s.peer_fingerprint;
    out->coordinate_changes = s.coordinate_changes;
    out->fingerprint = s.fingerprint;
    out->pick_metric = s.pick_metric;
    out->peer_index = s.peer_index;
    out->peer_count = s.peer_count;
    out->logical_aperture = s.logical_aperture;
    out->physical_aperture = s.physical_aperture;
    out->widened = s.widened;
    out->draining = s.draining;
    out->resolver_updates = s.resolver_updates;
    out->rebuilds = s.rebuilds;
    out->snapshot_builds = s.snapshot_builds;
    out->peer_keys = s.peer_keys;
    out->subchannels_created = s.subchannels_created;
    out->subchannels_destroyed = s.subchannels_destroyed;
    out->widenings = s.widenings;
    out->affinity_sessions = s.affinity_sessions;
    out->config_warnings.assign(s.config_warnings,
                                s.config_warnings + s.config_warning_count);
    out->skew_reason = s.skew_reason;
    out->skew_own_rate = s.skew_own_rate;
    out->skew_others_rate = s.skew_others_rate;
    out->skew_ratio = s.skew_ratio;
    out->skew_multiplier = s.skew_multiplier;
    out->max_ejection_percent = s.max_ejection_percent;
    out->members_out = s.members_out;
    out->max_members_out = s.max_members_out;
    out->peer_failure_share = s.peer_failure_share;
    out->endpoints.clear();
    for (size_t i = 0; i < s.copied_endpoints; ++i) {
      const ap_endpoint_state& e = s.endpoints[i];
      out->endpoints.push_back({e.address, e.ring_index, e.intersection,
                                e.pick_weight, e.in_aperture != 0,
                                e.widened != 0, e.connectivity, e.outstanding,
                                e.picks, e.failures, e.draining != 0,
                                ap_health_state_name(static_cast<ap_health_state>(e.health)),
                                e.ejections, e.utilization, e.latency_ewma_ms,
                                e.ejection_reason ? e.ejection_reason : "none",
                                e.stuck_after_ms, e.endpoint_weight, e.weight_factor,
                                e.reported_rps, e.own_rate});
    }
  }
  ap_ring_states_free(states, count);
  return ok;
}

bool WaitFor(const std::function<bool()>& condition, int timeout_ms) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

bool WaitForState(const std::string& filter,
                  const std::function<bool(const StateView&)>& condition,
                  int timeout_ms) {
  return WaitFor(
      [&] {
        StateView s;
        return Snapshot(filter, &s) && condition(s);
      },
      timeout_ms);
}

std::map<std::string, double> ExpectedMembers(
    const std::vector<std::string>& addresses, oracle::Mode mode,
    uint32_t peer_index, uint32_t peer_count, uint32_t min_aperture,
    const std::vector<double>* weights) {
  std::map<std::string, double> by_address;
  if (weights != nullptr) {
    for (size_t k = 0; k < addresses.size() && k < weights->size(); ++k) {
      by_address[addresses[k]] = (*weights)[k];
    }
  }
  return oracle::ExpectedByAddress(mode, addresses, peer_index, peer_count,
                                   min_aperture, by_address);
}

std::vector<std::unique_ptr<Backend>> StartBackends(int n) {
  std::vector<std::unique_ptr<Backend>> out;
  for (int i = 0; i < n; ++i) out.push_back(std::make_unique<Backend>());
  return out;
}

std::vector<std::string> Addresses(
    const std::vector<std::unique_ptr<Backend>>& backends) {
  std::vector<std::string> out;
  for (const auto& b : backends) out.push_back(b->address());
  return out;
}

Backend* FindBackend(const std::vector<std::unique_ptr<Backend>>& backends,
                     const std::string& address) {
  for (const auto& b : backends) {
    if (b->address() == address) return b.get();
  }
  return nullptr;
}

std::string Config(const std::string& aperture_json) {
  return "{\"loadBalancingConfig\":[{\"aperture\":" + aperture_json + "}]}";
}

bool WaitAllMembersReady(const std::string& target, size_t members) {
  return WaitForState(target, [&](const StateView& s) {
    size_t ready = 0, in = 0;
    for (const auto& e : s.endpoints) {
      if (!e.in_aperture) continue;
      ++in;
      if (e.connectivity == AP_CONN_READY) ++ready;
    }
    return in == members && ready == members;
  });
}

absl::Status ParseThroughRegistry(const std::string& aperture_json) {
  auto json = grpc_core::Json::Parse("[{\"aperture\":" + aperture_json + "}]");
  if (!json.ok()) return json.status();
  return grpc_core::CoreConfiguration::Get()
      .lb_policy_registry()
      .ParseLoadBalancingConfig(*json)
      .status();
}

}  // namespace aperture_test
