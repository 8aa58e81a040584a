/*
 * A plain C program on the public gRPC C-core API (the policy comes from
 * LD_PRELOAD=libaperture.so; its calls are the interop programs'
 * io_unary_call) that waits for its channel to be READY the way a
 * start-up check does: one connect request,
 * grpc_channel_check_connectivity_state(ch, 1), then only watches
 * (grpc_channel_watch_connectivity_state) until READY or 5 s have passed;
 * it never asks to connect again. Then it makes CALLS unary calls to
 * grpc.testing.TestService/EmptyCall.
 *
 *   c_ready_client TARGET SERVICE_CONFIG_JSON CALLS [IDLE_MS]
 *
 * With IDLE_MS the channel has grpc.client_idle_timeout_ms IDLE_MS: after
 * the calls it watches the channel go IDLE (gRPC then drops the resolver
 * and the policy), and waits for READY once more the same way.
 *
 * Prints `ready_ms=X` (from the channel's creation to READY) or
 * `ready=timeout STATE`, the states it watched go by (`states=IDLE,...`),
 * and `calls ok=N failed=M`; with IDLE_MS also `idle=yes` or `idle=no`,
 * then `ready_again_ms=X` (from the new connect request) or
 * `ready_again=timeout STATE`. Exit status: 0 when every wait reached its
 * state and no call failed, 1 otherwise, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "grpc/testing/empty.pb-c.h"
#include "interop/common/unary_call.h"

static const char *state_name(grpc_connectivity_state s) {
  switch (s) {
    case GRPC_CHANNEL_IDLE: return "IDLE";
    case GRPC_CHANNEL_CONNECTING: return "CONNECTING";
    case GRPC_CHANNEL_READY: return "READY";
    case GRPC_CHANNEL_TRANSIENT_FAILURE: return "TRANSIENT_FAILURE";
    case GRPC_CHANNEL_SHUTDOWN: return "SHUTDOWN";
  }
  return "UNKNOWN";
}

/* One connect request, then watches until READY or 5 s; appends the
 * states seen to `states`. Returns 1 when READY. */
static int wait_ready(grpc_channel *channel, grpc_completion_queue *cq, char *states,
                      size_t states_len, grpc_connectivity_state *last) {
  grpc_connectivity_state state = grpc_channel_check_connectivity_state(channel, 1);
  const gpr_timespec give_up =
      gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_seconds(5, GPR_TIMESPAN));
  size_t used = strlen(states);
  snprintf(states + used, states_len - used, "%s%s", used ? "," : "", state_name(state));
  while (state != GRPC_CHANNEL_READY) {
    grpc_channel_watch_connectivity_state(channel, state, give_up, cq, (void *)1);
    grpc_event ev = grpc_completion_queue_pluck(cq, (void *)1, gpr_inf_future(GPR_CLOCK_REALTIME),
                                                NULL);
    if (ev.type != GRPC_OP_COMPLETE || !ev.success) break; /* the 5 s ran out */
    state = grpc_channel_check_connectivity_state(channel, 0);
    used = strlen(states);
    snprintf(states + used, states_len - used, ",%s", state_name(state));
  }
  *last = state;
  return state == GRPC_CHANNEL_READY;
}

/* Watches (no connect request) until the channel is IDLE, for at most
 * `ms` + 5 s. Returns 1 when IDLE. */
static int wait_idle(grpc_channel *channel, grpc_completion_queue *cq, int ms) {
  const gpr_timespec give_up = gpr_time_add(
      gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(ms + 5000, GPR_TIMESPAN));
  grpc_connectivity_state state = grpc_channel_check_connectivity_state(channel, 0);
  while (state != GRPC_CHANNEL_IDLE) {
    grpc_channel_watch_connectivity_state(channel, state, give_up, cq, (void *)1);
    grpc_event ev = grpc_completion_queue_pluck(cq, (void *)1, gpr_inf_future(GPR_CLOCK_REALTIME),
                                                NULL);
    if (ev.type != GRPC_OP_COMPLETE || !ev.success) return 0;
    state = grpc_channel_check_connectivity_state(channel, 0);
  }
  return 1;
}

static double ms_since(gpr_timespec start) {
  gpr_timespec d = gpr_time_sub(gpr_now(GPR_CLOCK_MONOTONIC), start);
  return (double)d.tv_sec * 1e3 + (double)d.tv_nsec / 1e6;
}

/* One EmptyCall, through the interop programs' unary call; its status. */
static grpc_status_code empty_call(grpc_channel *channel) {
  Grpc__Testing__Empty request = GRPC__TESTING__EMPTY__INIT;
  unary_result result;
  if (io_unary_call(channel, "/grpc.testing.TestService/EmptyCall", &request.base,
                    &grpc__testing__empty__descriptor, NULL, NULL, 5000, &result) != 0) {
    return GRPC_STATUS_UNKNOWN;
  }
  const grpc_status_code code = result.code;
  io_unary_result_free(&result);
  return code;
}

int main(int argc, char **argv) {
  const int idle_ms = argc == 5 ? atoi(argv[4]) : 0;
  if ((argc != 4 && argc != 5) || atoi(argv[3]) < 0 || (argc == 5 && idle_ms <= 0)) {
    fprintf(stderr, "usage: %s TARGET SERVICE_CONFIG_JSON CALLS [IDLE_MS]\n", argv[0]);
    return 2;
  }
  grpc_init();
  grpc_arg arg[2];
  arg[0].type = GRPC_ARG_STRING;
  arg[0].key = (char *)GRPC_ARG_SERVICE_CONFIG;
  arg[0].value.string = argv[2];
  arg[1].type = GRPC_ARG_INTEGER;
  arg[1].key = (char *)GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS;
  arg[1].value.integer = idle_ms;
  grpc_channel_args args = {idle_ms > 0 ? 2 : 1, arg};
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  const gpr_timespec start = gpr_now(GPR_CLOCK_MONOTONIC);
  grpc_channel *channel = grpc_channel_create(argv[1], creds, &args);
  grpc_channel_credentials_release(creds);

  char states[512] = "";
  grpc_connectivity_state state;
  int ready = wait_ready(channel, cq, states, sizeof states, &state);
  if (ready) {
    printf("ready_ms=%.3f\n", ms_since(start));
  } else {
    printf("ready=timeout %s\n", state_name(state));
  }
  printf("states=%s\n", states);

  int ok = 0, failed = 0;
  for (int i = 0, calls = atoi(argv[3]); i < calls; i++) {
    if (empty_call(channel) == GRPC_STATUS_OK) ok++;
    else failed++;
  }
  printf("calls ok=%d failed=%d\n", ok, failed);
  if (idle_ms > 0) {
    const int idle = wait_idle(channel, cq, idle_ms);
    printf("idle=%s\n", idle ? "yes" : "no");
    char again[512] = "";
    const gpr_timespec asked = gpr_now(GPR_CLOCK_MONOTONIC);
    const int ready_again = idle && wait_ready(channel, cq, again, sizeof again, &state);
    if (ready_again) {
      printf("ready_again_ms=%.3f\n", ms_since(asked));
    } else {
      printf("ready_again=timeout %s\n", state_name(state));
    }
    printf("states_again=%s\n", again);
    ready = ready && ready_again;
  }
  fflush(stdout);
  grpc_channel_destroy(channel);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_pluck(cq, (void *)1, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
             .type != GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  grpc_shutdown();
  return ready && failed == 0 ? 0 : 1;
}
