#include "interop/common/unary_call.h"

#include <stdio.h>
#include <string.h>

#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "interop/common/pb_buf.h"

int io_unary_call(grpc_channel *ch, const char *method, const ProtobufCMessage *request,
               const ProtobufCMessageDescriptor *response_desc, const char *md_key,
               const char *md_value, int timeout_ms, unary_result *out) {
  if (ch == NULL || method == NULL || request == NULL || response_desc == NULL || out == NULL ||
      (md_key == NULL) != (md_value == NULL) || timeout_ms <= 0) {
    return -1;
  }
  memset(out, 0, sizeof(*out));
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
  gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                       gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
  grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                             grpc_slice_from_static_string(method), NULL,
                                             deadline, NULL);
  grpc_metadata md[1];
  grpc_metadata_array initial, trailing;
  grpc_metadata_array_init(&initial);
  grpc_metadata_array_init(&trailing);
  grpc_byte_buffer *req = io_pb_buf_pack(request);
  grpc_byte_buffer *resp = NULL;
  grpc_slice details = grpc_empty_slice();
  grpc_op ops[6];
  memset(ops, 0, sizeof(ops));
  size_t n = 0;
  ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
  if (md_key) {
    md[0].key = grpc_slice_from_static_string(md_key);
    md[0].value = grpc_slice_from_static_string(md_value);
    ops[n].data.send_initial_metadata.count = 1;
    ops[n].data.send_initial_metadata.metadata = md;
  }
  n++;
  ops[n].op = GRPC_OP_SEND_MESSAGE;
  ops[n++].data.send_message.send_message = req;
  ops[n++].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[n++].data.recv_initial_metadata.recv_initial_metadata = &initial;
  ops[n].op = GRPC_OP_RECV_MESSAGE;
  ops[n++].data.recv_message.recv_message = &resp;
  ops[n].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[n].data.recv_status_on_client.trailing_metadata = &trailing;
  ops[n].data.recv_status_on_client.status = &out->code;
  ops[n++].data.recv_status_on_client.status_details = &details;
  int rc = -1;
  static int tag;
  if (grpc_call_start_batch(call, ops, n, &tag, NULL) == GRPC_CALL_OK) {
    grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    rc = 0;
    snprintf(out->details, sizeof(out->details), "%.*s", (int)GRPC_SLICE_LENGTH(details),
             (const char *)GRPC_SLICE_START_PTR(details));
    for (size_t i = 0; i < initial.count; i++) {
      grpc_metadata *m = &initial.metadata[i];
      if (GRPC_SLICE_LENGTH(m->key) == 8 && memcmp(GRPC_SLICE_START_PTR(m->key), "hostname", 8) == 0) {
        snprintf(out->hostname_md, sizeof(out->hostname_md), "%.*s",
                 (int)GRPC_SLICE_LENGTH(m->value), (const char *)GRPC_SLICE_START_PTR(m->value));
      }
    }
    if (out->code == GRPC_STATUS_OK && resp) out->response = io_pb_buf_unpack(resp, response_desc);
  }
  grpc_call_unref(call);
  grpc_completion_queue_shutdown(cq);
  grpc_completion_queue_destroy(cq);
  grpc_byte_buffer_destroy(req);
  if (resp) grpc_byte_buffer_destroy(resp);
  grpc_slice_unref(details);
  grpc_metadata_array_destroy(&initial);
  grpc_metadata_array_destroy(&trailing);
  return rc;
}

void io_unary_result_free(unary_result *r) {
  if (r && r->response) {
    protobuf_c_message_free_unpacked(r->response, NULL);
    r->response = NULL;
  }
}

grpc_channel *io_unary_channel_create(const char *target, const char *service_config) {
  if (target == NULL) return NULL;
  grpc_arg args[2];
  size_t n = 0;
  args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                         .key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
                         .value.integer = 1};
  if (service_config) {
    args[n++] = (grpc_arg){.type = GRPC_ARG_STRING,
                           .key = GRPC_ARG_SERVICE_CONFIG,
                           .value.string = (char *)service_config};
  }
  grpc_channel_args chargs = {n, args};
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_channel *ch = grpc_channel_create(target, creds, &chargs);
  grpc_channel_credentials_release(creds);
  return ch;
}
