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

#include <grpc/grpc.h>
#include <grpc/support/alloc.h>
#include <grpcpp/alarm.h>

#include "policy/core/ap_order.h"
#include "policy/core/ap_ring.h"
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
  Service(std::atomic<uint64_t>* calls, int delay_ms)
      : calls_(calls), delay_ms_(delay_ms) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext*) override {
    return new Echo(calls_, delay_ms_);
  }

 private:
  class Echo : public grpc::ServerGenericBidiReactor {
   public:
    Echo(std::atomic<uint64_t>* calls, int delay_ms)
        : calls_(calls), delay_ms_(delay_ms) {
      StartRead(&buffer_);
    }
    void OnReadDone(bool ok) override {
      if (!ok) {
        Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"));
        return;
      }
      calls_->fetch_add(1);
      if (delay_ms_ > 0) {
        alarm_.Set(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(delay_ms_),
                   [this](bool) { Reply(); });
      } else {
        Reply();
      }
    }
    void OnDone() override { delete this; }

   private:
    void Reply() {
      StartWriteAndFinish(&buffer_, grpc::WriteOptions(), grpc::Status::OK);
    }
    std::atomic<uint64_t>* calls_;
    const int delay_ms_;
    grpc::ByteBuffer buffer_;
    grpc::Alarm alarm_;
  };

  std::atomic<uint64_t>* calls_;
  const int delay_ms_;
};

Backend::Backend(int delay_ms) : delay_ms_(delay_ms) { Start(0); }

Backend::~Backend() { Stop(); }

std::string Backend::address() const {
  return "127.0.0.1:" + std::to_string(port_);
}

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

void Backend::Start(int port) {
  if (port == 0) port = PickFreePort();
  service_ = std::make_unique<Service>(&calls_, delay_ms_);
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port),
                           grpc::InsecureServerCredentials(), &bound);
  builder.RegisterCallbackGenericService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || bound == 0) {
    fprintf(stderr, "backend: cannot listen on port %d\n", port);
    abort();
  }
  port_ = bound;
}

void Backend::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  server_.reset();
  service_.reset();
}

void Backend::Restart() {
  if (server_ != nullptr) return;
  // The port was just released; retry briefly in case it lingers.
  for (int attempt = 0; attempt < 50; ++attempt) {
    service_ = std::make_unique<Service>(&calls_, delay_ms_);
    grpc::ServerBuilder builder;
    int bound = 0;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(port_),
                             grpc::InsecureServerCredentials(), &bound);
    builder.RegisterCallbackGenericService(service_.get());
    server_ = builder.BuildAndStart();
    if (server_ != nullptr && bound == port_) return;
    server_.reset();
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
                         const std::string& service_config)
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
  channel_ = grpc::CreateCustomChannel(
      target_, grpc::InsecureChannelCredentials(), args);
  stub_ = std::make_unique<grpc::GenericStub>(channel_);
  // A channel starts its resolver (and so the policy) only when it leaves
  // IDLE.
  channel_->GetState(/*try_to_connect=*/true);
}

namespace {

grpc_core::Resolver::Result ResultOf(const std::vector<std::string>& addresses,
                                     const std::string& service_config) {
  grpc_core::ServerAddressList list;
  for (const std::string& a : addresses) {
    auto sockaddr = grpc_core::StringToSockaddr(a);
    if (!sockaddr.ok()) abort();
    list.emplace_back(*sockaddr, grpc_core::ChannelArgs());
  }
  grpc_core::Resolver::Result result;
  result.addresses = std::move(list);
  if (!service_config.empty()) {
    result.service_config = grpc_core::ServiceConfigImpl::Create(
        grpc_core::ChannelArgs(), service_config);
  }
  return result;
}

}  // namespace

void TestChannel::SetAddresses(const std::vector<std::string>& addresses,
                               const std::string& service_config) {
  grpc_core::ExecCtx exec_ctx;
  generator_->SetResponse(ResultOf(addresses, service_config));
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
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(timeout_ms));
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

bool Snapshot(const std::string& filter, StateView* out) {
  ap_ring_state* states = nullptr;
  size_t count = 0;
  if (ap_registry_snapshot(filter.c_str(), &states, &count, nullptr) != AP_OK) {
    return false;
  }
  bool ok = count == 1;
  if (ok) {
    const ap_ring_state& s = states[0];
    out->target = s.target;
    out->mode = s.mode;
    out->coordinate_source = s.coordinate_source;
    out->last_status = s.last_status;
    out->fingerprint = s.fingerprint;
    out->peer_index = s.peer_index;
    out->peer_count = s.peer_count;
    out->logical_aperture = s.logical_aperture;
    out->physical_aperture = s.physical_aperture;
    out->widened = s.widened;
    out->draining = s.draining;
    out->resolver_updates = s.resolver_updates;
    out->rebuilds = s.rebuilds;
    out->subchannels_created = s.subchannels_created;
    out->subchannels_destroyed = s.subchannels_destroyed;
    out->widenings = s.widenings;
    out->endpoints.clear();
    for (size_t i = 0; i < s.endpoint_count; ++i) {
      const ap_endpoint_state& e = s.endpoints[i];
      out->endpoints.push_back({e.address, e.ring_index, e.intersection,
                                e.pick_weight, e.in_aperture != 0,
                                e.widened != 0, e.connectivity, e.outstanding,
                                e.picks, e.failures, e.draining != 0});
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

std::map<std::string, double> ExpectedMembers(
    const std::vector<std::string>& addresses, const ap_subset_params& params,
    const std::vector<double>* weights) {
  std::map<std::string, double> out;
  size_t n = addresses.size();
  std::vector<const char*> ptrs(n);
  for (size_t i = 0; i < n; ++i) ptrs[i] = addresses[i].c_str();
  std::vector<size_t> order(n);
  if (ap_order_endpoints(ptrs.data(), n, order.data(), nullptr) != AP_OK) {
    return out;
  }
  std::vector<double> ring_weights(n, 1.0);
  if (weights != nullptr) {
    for (size_t k = 0; k < n; ++k) ring_weights[k] = (*weights)[order[k]];
  }
  ap_ring* ring = nullptr;
  ap_aperture* aperture = nullptr;
  if (ap_ring_create(ring_weights.data(), n, &ring, nullptr) != AP_OK) {
    return out;
  }
  if (ap_aperture_compute(ring, &params, &aperture, nullptr) == AP_OK) {
    for (size_t k = 0; k < ap_aperture_count(aperture); ++k) {
      const ap_member* m = ap_aperture_member(aperture, k);
      out[addresses[order[m->index]]] = m->pick_weight;
    }
  }
  ap_aperture_destroy(aperture);
  ap_ring_destroy(ring);
  return out;
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

std::string Config(const std::string& aperture_json) {
  return "{\"loadBalancingConfig\":[{\"aperture\":" + aperture_json + "}]}";
}

bool WaitAllMembersReady(const std::string& target, size_t members) {
  return WaitFor([&] {
    StateView s;
    if (!Snapshot(target, &s)) return false;
    size_t ready = 0, in = 0;
    for (const auto& e : s.endpoints) {
      if (!e.in_aperture) continue;
      ++in;
      if (e.connectivity == 2) ++ready;
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
