/* raw_call: the tests' one raw unary call (see raw_call.h). */
#include "raw_call.h"

#include <stdio.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

int raw_call_start(raw_call *c, grpc_channel *ch, grpc_completion_queue *cq,
                   const raw_call_opts *o) {
  if (c == NULL) return -1;
  memset(c, 0, sizeof *c);
  if (ch == NULL || cq == NULL || o == NULL || o->method == NULL || o->timeout_ms <= 0 ||
      (o->body == NULL && o->body_len > 0) || (o->md_key == NULL) != (o->md_value == NULL)) {
    return -1;
  }
  c->status = GRPC_STATUS_UNKNOWN;
  /* The call takes its own reference to the method; ours is dropped here
   * (a path over 23 bytes is a heap slice, which LeakSanitizer reports). */
  grpc_slice method = grpc_slice_from_copied_string(o->method);
  c->call = grpc_channel_create_call(
      ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method, NULL,
      gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                   gpr_time_from_millis(o->timeout_ms, GPR_TIMESPAN)),
      NULL);
  grpc_slice_unref(method);
  grpc_slice body = grpc_slice_from_copied_buffer(o->body != NULL ? o->body : "", o->body_len);
  c->request = grpc_raw_byte_buffer_create(&body, 1);
  grpc_slice_unref(body);
  grpc_metadata_array_init(&c->initial);
  grpc_metadata_array_init(&c->trailing);
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  if (o->wait_for_ready) ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
  if (o->md_key != NULL) {
    c->md.key = grpc_slice_from_copied_string(o->md_key);
    c->md.value = grpc_slice_from_copied_string(o->md_value);
    c->has_md = 1;
    ops[0].data.send_initial_metadata.count = 1;
    ops[0].data.send_initial_metadata.metadata = &c->md;
  }
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = c->request;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->initial;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &c->response;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &c->trailing;
  ops[5].data.recv_status_on_client.status = &c->status;
  ops[5].data.recv_status_on_client.status_details = &c->details;
  if (grpc_call_start_batch(c->call, ops, 6, c, NULL) != GRPC_CALL_OK) {
    raw_call_release(c);
    return -1;
  }
  c->started = 1;
  return 0;
}

void raw_call_release(raw_call *c) {
  if (c == NULL) return;
  if (c->call != NULL) grpc_call_unref(c->call);
  if (c->request != NULL) grpc_byte_buffer_destroy(c->request);
  if (c->response != NULL) grpc_byte_buffer_destroy(c->response);
  if (c->has_md) {
    grpc_slice_unref(c->md.key);
    grpc_slice_unref(c->md.value);
  }
  if (c->call != NULL) {
    grpc_metadata_array_destroy(&c->initial);
    grpc_metadata_array_destroy(&c->trailing);
  }
  if (c->started) grpc_slice_unref(c->details);
  memset(c, 0, sizeof *c);
}

grpc_status_code raw_call_unary(grpc_channel *ch, const raw_call_opts *o, char *peer,
                                size_t peer_len) {
  if (peer != NULL && peer_len > 0) peer[0] = '\0';
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
  raw_call c;
  grpc_status_code status = GRPC_STATUS_UNKNOWN;
  if (raw_call_start(&c, ch, cq, o) == 0) {
    grpc_event ev = grpc_completion_queue_pluck(cq, &c, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type == GRPC_OP_COMPLETE) status = c.status;
    if (peer != NULL && peer_len > 0) {
      char *p = grpc_call_get_peer(c.call);
      snprintf(peer, peer_len, "%s", p != NULL ? p : "");
      gpr_free(p);
    }
    raw_call_release(&c);
  }
  grpc_completion_queue_shutdown(cq);
  grpc_completion_queue_destroy(cq);
  return status;
}
