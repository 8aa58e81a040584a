#include "tests/affinity/channel_util.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include <grpc/grpc.h>

#include "policy/registry/ap_registry.h"
#include "src/core/lib/address_utils/parse_address.h"
#include "src/core/lib/iomgr/exec_ctx.h"
#include "src/core/lib/resolver/server_address.h"
#include "src/core/lib/service_config/service_config_impl.h"

namespace affinity_test {

class Backend::Service : public grpc::CallbackGenericService {
 public:
  Service(const std::string* address, std::atomic<uint64_t>* calls)
      : address_(address), calls_(calls) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext*) override {
    return new Reactor(*address_, calls_);
  }

 private:
  // Reads the request, answers with the address, finishes.
  class Reactor : public grpc::ServerGenericBidiReactor {
   public:
    Reactor(const std::string& address, std::atomic<uint64_t>* calls)
        : address_(address), calls_(calls) {
      StartRead(&request_);
    }
    void OnReadDone(bool ok) override {
      if (!ok) {
        Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"));
        return;
      }
      calls_->fetch_add(1);
      grpc::Slice slice(address_);
      response_ = grpc::ByteBuffer(&slice, 1);
      StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
    }
    void OnDone() override { delete this; }

   private:
    const std::string address_;
    std::atomic<uint64_t>* calls_;
    grpc::ByteBuffer request_, response_;
  };

  const std::string* address_;
  std::atomic<uint64_t>* calls_;
};

Backend::Backend() {
  service_ = std::make_unique<Service>(&address_, &calls_);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterCallbackGenericService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) abort();
  address_ = "127.0.0.1:" + std::to_string(port);
}

Backend::~Backend() { Stop(); }

void Backend::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(500));
  server_->Wait();
  server_.reset();
}

std::vector<std::string> Addresses(
    const std::vector<std::unique_ptr<Backend>>& backends) {
  std::vector<std::string> out;
  for (const auto& b : backends) out.push_back(b->address());
  return out;
}

std::string ServiceConfig(const std::string& aperture_json) {
  return "{\"loadBalancingConfig\":[{\"aperture\":" + aperture_json + "}]}";
}

TestChannel::TestChannel(const std::string& name,
                         const std::string& service_config)
    : target_("fake:///" + name),
      generator_(grpc_core::MakeRefCounted<
                 grpc_core::FakeResolverResponseGenerator>()) {
  grpc::ChannelArguments args;
  args.SetPointerWithVtable(
      GRPC_ARG_FAKE_RESOLVER_RESPONSE_GENERATOR, generator_.get(),
      &grpc_core::FakeResolverResponseGenerator::kChannelArgPointerVtable);
  if (!service_config.empty()) args.SetServiceConfigJSON(service_config);
  // Fresh connections per channel so tests do not share subchannels.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  channel_ = grpc::CreateCustomChannel(
      target_, grpc::InsecureChannelCredentials(), args);
  stub_ = std::make_unique<grpc::GenericStub>(channel_);
}

void TestChannel::SetAddresses(const std::vector<std::string>& addresses) {
  SetAddressesAndConfig(addresses, "");
}

void TestChannel::SetAddressesAndConfig(
    const std::vector<std::string>& addresses,
    const std::string& service_config) {
  grpc_core::ExecCtx exec_ctx;
  grpc_core::ServerAddressList list;
  for (const std::string& a : addresses) {
    auto parsed = grpc_core::StringToSockaddr(a);
    if (!parsed.ok()) abort();
    list.emplace_back(*parsed, grpc_core::ChannelArgs());
  }
  grpc_core::Resolver::Result result;
  result.addresses = std::move(list);
  if (!service_config.empty()) {
    result.service_config = grpc_core::ServiceConfigImpl::Create(
        grpc_core::ChannelArgs(), service_config);
  }
  generator_->SetResponse(std::move(result));
  // Leave IDLE so the resolver result reaches the policy without a call.
  channel_->GetState(/*try_to_connect=*/true);
}

std::string TestChannel::Call(const std::string& header,
                              const std::string& key, grpc::Status* status,
                              int timeout_ms) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(timeout_ms));
  if (!key.empty()) ctx.AddMetadata(header, key);
  grpc::Slice slice(std::string("ping"));
  grpc::ByteBuffer request(&slice, 1), response;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status result;
  stub_->UnaryCall(&ctx, "/affinity.test/Echo", grpc::StubOptions(), &request,
                   &response, [&](grpc::Status s) {
                     std::lock_guard<std::mutex> lock(mu);
                     result = std::move(s);
                     done = true;
                     cv.notify_one();
                   });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  if (status != nullptr) *status = result;
  if (!result.ok()) return "";
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return "";
  std::string body;
  for (const auto& s : slices) {
    body.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return body;
}

bool PolicyView::Ready(const std::string& address) const {
  auto it = connectivity.find(address);
  return it != connectivity.end() && it->second == AP_CONN_READY;
}

size_t PolicyView::ReadyCount() const {
  size_t n = 0;
  for (const auto& kv : connectivity) n += kv.second == AP_CONN_READY;
  return n;
}

bool Snapshot(const std::string& target, PolicyView* out) {
  ap_ring_state* states = nullptr;
  size_t count = 0;
  if (ap_registry_snapshot(target.c_str(), &states, &count, nullptr) !=
      AP_OK) {
    return false;
  }
  bool ok = count == 1;
  if (ok) {
    *out = PolicyView();
    out->affinity_sessions = states[0].affinity_sessions;
    for (size_t i = 0; i < states[0].endpoint_count; ++i) {
      const ap_endpoint_state& e = states[0].endpoints[i];
      if (e.in_aperture) out->connectivity[e.address] = e.connectivity;
    }
  }
  ap_ring_states_free(states, count);
  return ok;
}

bool WaitFor(const std::function<bool()>& condition, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

}  // namespace affinity_test
