// A C++ program on libgrpc++ that knows nothing of aperture: it selects
// the LB policy only through its service config (grpc::ChannelArguments)
// and calls grpc.testing.TestService/EmptyCall `calls` times through a
// generic stub. Under LD_PRELOAD=libaperture.so the config's "aperture"
// resolves to the preloaded policy.
//
//   cpp_client TARGET SERVICE_CONFIG_JSON CALLS [--wait-ready]
// With --wait-ready it first waits for READY with
// grpc::Channel::WaitForConnected (5 s), the usual start-up idiom, and
// prints `ready_ms=X` (from the channel's creation) or `ready=timeout`.
// Prints `calls ok=N failed=M peers HOST=COUNT ...` (HOST from the
// server's `hostname` initial metadata); exits 0 when no call failed (and
// READY was reached when waited for).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

int main(int argc, char **argv) {
  const bool wait_ready = argc == 5 && std::string(argv[4]) == "--wait-ready";
  if ((argc != 4 && !wait_ready) || atoi(argv[3]) <= 0) {
    fprintf(stderr, "usage: cpp_client TARGET SERVICE_CONFIG_JSON CALLS [--wait-ready]\n");
    return 2;
  }
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(argv[2]);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(argv[1], grpc::InsecureChannelCredentials(), args);
  bool ready = true;
  if (wait_ready) {
    ready = channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5));
    if (ready) {
      const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
      printf("ready_ms=%.3f\n", took.count());
    } else {
      printf("ready=timeout\n");
    }
  }
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  std::map<std::string, long> peers;
  long ok = 0, failed = 0;
  for (int i = 0, calls = atoi(argv[3]); i < calls; i++) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1), response;
    grpc::Status status;
    auto call = stub.PrepareUnaryCall(&context, "/grpc.testing.TestService/EmptyCall", request, &cq);
    call->StartCall();
    call->Finish(&response, &status, reinterpret_cast<void *>(1));
    void *tag = nullptr;
    bool done = false;
    if (!cq.Next(&tag, &done) || !status.ok()) {
      failed++;
      fprintf(stderr, "call failed: %s\n", status.error_message().c_str());
      continue;
    }
    ok++;
    const auto &md = context.GetServerInitialMetadata();
    auto it = md.find("hostname");
    peers[it == md.end() ? "?" : std::string(it->second.data(), it->second.size())]++;
  }
  printf("calls ok=%ld failed=%ld peers", ok, failed);
  for (const auto &p : peers) printf(" %s=%ld", p.first.c_str(), p.second);
  printf("\n");
  cq.Shutdown();
  void *tag;
  bool done;
  while (cq.Next(&tag, &done)) {
  }
  return failed == 0 && ready ? 0 : 1;
}
