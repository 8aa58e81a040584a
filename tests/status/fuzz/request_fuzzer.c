/*
 * Fuzz target for the status service's request decoding and response
 * building (ap_status_handler). Input byte 0 picks the method (even:
 * GetRingState, odd: Health/Check); the rest is the request message. Two
 * instances are registered once, so responses carry real rings. A reply must
 * be OK with a decodable body, or an error with no body.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/status.h>

#include "aperture/v1/status.pb-c.h"
#include "grpc/health/v1/health.pb-c.h"
#include "policy/registry/ap_registry.h"
#include "policy/status/ap_status_handler.h"

static int snapshot(void *ctx, ap_ring_state *out) {
  size_t n = (size_t)(uintptr_t)ctx;
  char target[32];
  snprintf(target, sizeof target, "fuzz-ring-%zu", n);
  if (!ap_snapshot_query_matches(out->query, target)) return AP_SNAPSHOT_SKIP;
  out->target = strdup(target);
  out->mode = strdup("continuous");
  out->coordinate_source = AP_COORDINATE_CONFIG;
  out->last_status = strdup("");
  out->peer_count = 3;
  out->endpoint_count = n;
  size_t first = 0, count = 0;
  ap_snapshot_query_page(out->query, n, &first, &count);
  out->first_endpoint = first;
  out->endpoints = ap_endpoint_states_alloc(count);
  if (out->endpoints != NULL) out->copied_endpoints = count;
  for (size_t i = 0; i < count && out->endpoints; i++) {
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.%zu:443", first + i);
    out->endpoints[i].address = strdup(addr);
    out->endpoints[i].ring_index = (uint32_t)(first + i);
    out->endpoints[i].connectivity = (int)((first + i) % 6) - 1;
  }
  return AP_OK;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  static ap_registry_entry *entries[2];
  ap_registry_add(snapshot, (void *)(uintptr_t)0, &entries[0], NULL);
  ap_registry_add(snapshot, (void *)(uintptr_t)1500, &entries[1], NULL);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  ap_status_reply reply;
  int health = data[0] & 1;
  if (health)
    ap_status_handle_health_check(data + 1, size - 1, &reply);
  else
    ap_status_handle_get_ring_state(data + 1, size - 1, &reply);
  if (reply.code == GRPC_STATUS_OK) {
    ProtobufCMessage *m =
        health ? (ProtobufCMessage *)grpc__health__v1__health_check_response__unpack(
                     NULL, reply.body_len, reply.body)
               : (ProtobufCMessage *)aperture__v1__get_ring_state_response__unpack(
                     NULL, reply.body_len, reply.body);
    if (m == NULL) abort(); /* the server produced an undecodable response */
    protobuf_c_message_free_unpacked(m, NULL);
  } else if (reply.body != NULL || reply.message[0] == '\0') {
    abort(); /* errors carry a message and no body */
  }
  ap_status_reply_clear(&reply);
  return 0;
}
