/*
 * A plain C client (public gRPC C-core API only): makes unary calls to
 * `target` through the service config given on the command line and prints
 * "ok=N failed=M". Built twice: linked with the aperture library (calls
 * aperture_register()) and, with APERTURE_PLAIN, against libgrpc alone (for
 * LD_PRELOAD of libaperture.so).
 *
 * It keeps its own raw unary call rather than the tests' shared one
 * (tests/common/raw_call.h): the plain build is the stand-in for any
 * application binary, so it stays one self-contained file on libgrpc.
 *
 * usage: c_client TARGET SERVICE_CONFIG_JSON CALLS
 * exit status: 0 when every call succeeded, 1 otherwise, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#ifndef APERTURE_PLAIN
#include "aperture.h"
#endif

/* One unary call; returns the status code and copies its details into
 * `details_out`. */
static grpc_status_code unary_call(grpc_channel *channel,
                                   grpc_completion_queue *cq,
                                   char *details_out, size_t details_len) {
  gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                       gpr_time_from_seconds(5, GPR_TIMESPAN));
  grpc_call *call = grpc_channel_create_call(
      channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
      grpc_slice_from_static_string("/aperture.test.Echo/Ping"), NULL,
      deadline, NULL);
  grpc_slice payload = grpc_slice_from_static_string("ping");
  grpc_byte_buffer *request = grpc_raw_byte_buffer_create(&payload, 1);
  grpc_byte_buffer *response = NULL;
  grpc_metadata_array initial_md, trailing_md;
  grpc_metadata_array_init(&initial_md);
  grpc_metadata_array_init(&trailing_md);
  grpc_status_code status = GRPC_STATUS_UNKNOWN;
  grpc_slice details = grpc_empty_slice();
  grpc_op ops[6];
  memset(ops, 0, sizeof(ops));
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
  grpc_call_error rc = grpc_call_start_batch(call, ops, 6, (void *)1, NULL);
  if (rc == GRPC_CALL_OK) {
    grpc_completion_queue_pluck(
        cq, (void *)1,
        gpr_time_add(deadline, gpr_time_from_seconds(5, GPR_TIMESPAN)), NULL);
  } else {
    snprintf(details_out, details_len, "start_batch failed: %d", (int)rc);
  }
  if (rc == GRPC_CALL_OK) {
    size_t n = GRPC_SLICE_LENGTH(details);
    if (n >= details_len) n = details_len - 1;
    memcpy(details_out, GRPC_SLICE_START_PTR(details), n);
    details_out[n] = '\0';
  }
  grpc_slice_unref(details);
  grpc_metadata_array_destroy(&initial_md);
  grpc_metadata_array_destroy(&trailing_md);
  grpc_byte_buffer_destroy(request);
  if (response != NULL) grpc_byte_buffer_destroy(response);
  grpc_call_unref(call);
  return status;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s TARGET SERVICE_CONFIG_JSON CALLS\n", argv[0]);
    return 2;
  }
  int calls = atoi(argv[3]);
  grpc_init();
#ifndef APERTURE_PLAIN
  aperture_error err;
  if (aperture_register(&err) != APERTURE_OK) {
    fprintf(stderr, "aperture_register: %s\n", err.message);
    grpc_shutdown();
    return 1;
  }
#endif
  grpc_arg arg;
  arg.type = GRPC_ARG_STRING;
  arg.key = (char *)GRPC_ARG_SERVICE_CONFIG;
  arg.value.string = argv[2];
  grpc_channel_args args = {1, &arg};
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_channel *channel = grpc_channel_create(argv[1], creds, &args);
  grpc_channel_credentials_release(creds);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
  int ok = 0, failed = 0;
  char first_error[512] = "";
  for (int i = 0; i < calls; ++i) {
    char details[512] = "";
    grpc_status_code status = unary_call(channel, cq, details, sizeof(details));
    if (status == GRPC_STATUS_OK) {
      ++ok;
    } else {
      if (failed == 0) {
        snprintf(first_error, sizeof(first_error), "%d: %s", (int)status,
                 details);
      }
      ++failed;
    }
  }
  printf("ok=%d failed=%d\n", ok, failed);
  if (failed > 0) printf("first_error=%s\n", first_error);
  grpc_channel_destroy(channel);
  grpc_completion_queue_shutdown(cq);
  /* A pluck queue reports its shutdown through pluck (next is not allowed). */
  while (grpc_completion_queue_pluck(cq, (void *)1,
                                     gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
             .type != GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  grpc_shutdown();
  return failed == 0 ? 0 : 1;
}
