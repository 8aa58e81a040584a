/* ap_status_client: a unary call with one batch on a private queue. */
#define _GNU_SOURCE

#include "policy/status/ap_status_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "policy/status/ap_status_limits.h"

/* No more than a status server sends (the largest answer and a margin):
 * a hostile server cannot make the client buffer more. */
#define CLIENT_MAX_RECEIVE_BYTES ((int)AP_STATUS_CLIENT_MAX_RESPONSE_BYTES)

void ap_status_call_result_clear(ap_status_call_result *result) {
  if (result == NULL) return;
  free(result->body);
  memset(result, 0, sizeof *result);
}

static int fail(ap_status_call_result *result, const char *msg) {
  result->status = GRPC_STATUS_INTERNAL;
  snprintf(result->details, sizeof result->details, "%s", msg);
  return -1;
}

int ap_status_call(const char *address, const char *method, const uint8_t *req,
                   size_t len, int timeout_ms, ap_status_call_result *result) {
  if (result == NULL) return -1;
  memset(result, 0, sizeof *result);
  if (address == NULL || address[0] == '\0') return fail(result, "address is empty");
  if (method == NULL || method[0] != '/') return fail(result, "method must start with '/'");
  if (req == NULL && len > 0) return fail(result, "request bytes missing");
  if (timeout_ms <= 0) return fail(result, "timeout must be positive");

  grpc_init();
  grpc_arg arg;
  arg.type = GRPC_ARG_INTEGER;
  arg.key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  arg.value.integer = CLIENT_MAX_RECEIVE_BYTES;
  grpc_channel_args args = {1, &arg};
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_channel *channel = grpc_channel_create(address, creds, &args);
  grpc_channel_credentials_release(creds);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
  gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                       gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
  grpc_slice method_slice = grpc_slice_from_copied_string(method);
  grpc_call *call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                             method_slice, NULL, deadline, NULL);
  grpc_slice_unref(method_slice);

  int rc = 0;
  grpc_metadata_array initial_md, trailing_md;
  grpc_metadata_array_init(&initial_md);
  grpc_metadata_array_init(&trailing_md);
  grpc_byte_buffer *response = NULL;
  grpc_status_code status = GRPC_STATUS_UNKNOWN;
  grpc_slice details = grpc_empty_slice();
  grpc_slice body = grpc_slice_from_copied_buffer((const char *)req, len);
  grpc_byte_buffer *request = grpc_raw_byte_buffer_create(&body, 1);
  grpc_slice_unref(body);

  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = request;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial_md;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &response;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &trailing_md;
  ops[5].data.recv_status_on_client.status = &status;
  ops[5].data.recv_status_on_client.status_details = &details;
  int tag = 1;
  if (call == NULL || grpc_call_start_batch(call, ops, 6, &tag, NULL) != GRPC_CALL_OK) {
    rc = fail(result, "gRPC refused to start the call");
  } else {
    /* The deadline ends the batch; the slack only guards a hang in gRPC. */
    gpr_timespec wait = gpr_time_add(deadline, gpr_time_from_seconds(5, GPR_TIMESPAN));
    grpc_event ev = grpc_completion_queue_next(cq, wait, NULL);
    if (ev.type != GRPC_OP_COMPLETE) {
      grpc_call_cancel(call, NULL);
      ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    }
    result->status = (int)status;
    char *text = grpc_slice_to_c_string(details);
    snprintf(result->details, sizeof result->details, "%s", text);
    gpr_free(text);
    if (response != NULL) {
      grpc_byte_buffer_reader reader;
      if (grpc_byte_buffer_reader_init(&reader, response)) {
        grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
        grpc_byte_buffer_reader_destroy(&reader);
        result->body_len = GRPC_SLICE_LENGTH(all);
        result->body = malloc(result->body_len > 0 ? result->body_len : 1);
        if (result->body != NULL) {
          memcpy(result->body, GRPC_SLICE_START_PTR(all), result->body_len);
        } else {
          result->body_len = 0;
          rc = fail(result, "out of memory for the response");
        }
        grpc_slice_unref(all);
      }
    }
  }

  if (response != NULL) grpc_byte_buffer_destroy(response);
  grpc_byte_buffer_destroy(request);
  grpc_slice_unref(details);
  grpc_metadata_array_destroy(&initial_md);
  grpc_metadata_array_destroy(&trailing_md);
  if (call != NULL) grpc_call_unref(call);
  grpc_channel_destroy(channel);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  grpc_shutdown();
  return rc;
}
