// A gRPC server on 127.0.0.1 that answers every call, whatever its method,
// with the same response bytes and status OK: a stand-in for a hostile or
// broken status server, so that clients can be given bytes no aperture
// server sends (strings that are not UTF-8, messages that cost gigabytes
// to decode). Plain C-core API on a thread of its own.
#ifndef APERTURE_TESTS_STATUS_CANNED_SERVER_H
#define APERTURE_TESTS_STATUS_CANNED_SERVER_H

#include <string.h>

#include <string>
#include <thread>

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

class CannedServer {
 public:
  explicit CannedServer(const std::string& body) : body_(body) {
    grpc_init();
    server_ = grpc_server_create(nullptr, nullptr);
    cq_ = grpc_completion_queue_create_for_next(nullptr);
    grpc_server_register_completion_queue(server_, cq_, nullptr);
    grpc_server_credentials* creds = grpc_insecure_server_credentials_create();
    port_ = grpc_server_add_http2_port(server_, "127.0.0.1:0", creds);
    grpc_server_credentials_release(creds);
    grpc_server_start(server_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedServer() {
    grpc_server_shutdown_and_notify(server_, cq_, &shutdown_tag_);
    grpc_server_cancel_all_calls(server_);
    thread_.join();
    grpc_server_destroy(server_);
    grpc_completion_queue_destroy(cq_);
    grpc_shutdown();
  }
  CannedServer(const CannedServer&) = delete;
  CannedServer& operator=(const CannedServer&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool listening() const { return port_ > 0; }

 private:
  // One call at a time: accept, answer in one batch, wait for it.
  void Serve() {
    for (;;) {
      grpc_call* call = nullptr;
      grpc_call_details details;
      grpc_metadata_array md;
      grpc_call_details_init(&details);
      grpc_metadata_array_init(&md);
      int new_call_tag = 0;
      bool answered = false;
      if (grpc_server_request_call(server_, &call, &details, &md, cq_, cq_, &new_call_tag) ==
          GRPC_CALL_OK) {
        grpc_event ev = grpc_completion_queue_next(cq_, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
        if (ev.tag == &shutdown_tag_) {
          // The pending request completes (not ok) after the shutdown.
          grpc_completion_queue_next(cq_, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
        } else if (ev.success && call != nullptr) {
          Answer(call);
          answered = true;
        }
      }
      if (call != nullptr) grpc_call_unref(call);
      grpc_call_details_destroy(&details);
      grpc_metadata_array_destroy(&md);
      if (!answered) break;
    }
    grpc_completion_queue_shutdown(cq_);
    while (grpc_completion_queue_next(cq_, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
  }

  void Answer(grpc_call* call) {
    grpc_slice slice = grpc_slice_from_copied_buffer(body_.data(), body_.size());
    grpc_byte_buffer* response = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    grpc_byte_buffer* request = nullptr;
    int cancelled = 0;
    grpc_op ops[5];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_RECV_MESSAGE;
    ops[1].data.recv_message.recv_message = &request;
    ops[2].op = GRPC_OP_SEND_MESSAGE;
    ops[2].data.send_message.send_message = response;
    ops[3].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[3].data.send_status_from_server.status = GRPC_STATUS_OK;
    ops[4].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[4].data.recv_close_on_server.cancelled = &cancelled;
    int tag = 0;
    if (grpc_call_start_batch(call, ops, 5, &tag, nullptr) == GRPC_CALL_OK) {
      for (;;) {
        grpc_event ev = grpc_completion_queue_next(cq_, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
        if (ev.tag == &tag) break;
        // The shutdown tag may arrive first: cancel_all_calls ends the batch.
      }
    }
    if (request != nullptr) grpc_byte_buffer_destroy(request);
    grpc_byte_buffer_destroy(response);
  }

  const std::string body_;
  grpc_server* server_ = nullptr;
  grpc_completion_queue* cq_ = nullptr;
  int port_ = 0;
  int shutdown_tag_ = 0;
  std::thread thread_;
};

#endif  // APERTURE_TESTS_STATUS_CANNED_SERVER_H
