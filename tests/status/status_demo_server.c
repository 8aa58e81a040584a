/*
 * A status server with two demo rings registered through real snapshot
 * callbacks, for trying clients by hand (aperturectl, grpc-js, ...):
 *   status_demo_server [SECONDS]   prints "port N", serves SECONDS (default 60)
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/include/aperture.h"
#include "policy/registry/ap_registry.h"

static int demo_snapshot(void *ctx, ap_ring_state *out) {
  size_t n = (size_t)(uintptr_t)ctx;
  char target[64];
  snprintf(target, sizeof target, "dns:///demo-%zu.svc:443", n);
  if (!ap_snapshot_query_matches(out->query, target)) return AP_SNAPSHOT_SKIP;
  out->target = strdup(target);
  out->mode = strdup("continuous");
  out->coordinate_source = AP_COORDINATE_API;
  out->last_status = strdup("");
  out->peer_index = 1;
  out->peer_count = 4;
  out->offset = 0.25;
  out->width = 0.5;
  out->min_aperture = 2;
  out->logical_aperture = (uint32_t)(n / 2);
  out->physical_aperture = (uint32_t)(n / 2 + 1);
  snprintf(out->fingerprint, sizeof out->fingerprint, "%016zx", n * 2654435761u);
  out->endpoint_count = n;
  size_t first = 0, count = 0;
  ap_snapshot_query_page(out->query, n, &first, &count); /* copy only the page */
  out->first_endpoint = first;
  if (count == 0) return AP_OK;
  out->endpoints = ap_endpoint_states_alloc(count);
  if (out->endpoints == NULL) return AP_ENOMEM;
  out->copied_endpoints = count;
  for (size_t k = 0; k < count; k++) {
    size_t i = first + k;
    ap_endpoint_state *e = &out->endpoints[k];
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%zu", 50051 + i);
    e->address = strdup(addr);
    e->ring_index = (uint32_t)i;
    e->endpoint_weight = 1;
    e->in_aperture = i < n / 2 + 1;
    e->intersection = i < n / 2 + 1 ? 1.0 : 0.0;
    e->pick_weight = e->intersection;
    e->connectivity = i < n / 2 + 1 ? AP_CONN_READY : -1;
    e->picks = i < n / 2 + 1 ? 100 * (i + 1) : 0;
  }
  return AP_OK;
}

int main(int argc, char **argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 60;
  if (seconds <= 0 || seconds > 3600) seconds = 60;
  ap_registry_entry *a = NULL, *b = NULL;
  ap_registry_add(demo_snapshot, (void *)(uintptr_t)6, &a, NULL);
  ap_registry_add(demo_snapshot, (void *)(uintptr_t)2000, &b, NULL);
  aperture_error err;
  aperture_status_server *server = NULL;
  if (aperture_status_server_start(NULL, &server, &err) != APERTURE_OK) {
    fprintf(stderr, "status_demo_server: %s\n", err.message);
    return 1;
  }
  printf("port %d\n", aperture_status_server_port(server));
  fflush(stdout);
  struct timespec ts = {seconds, 0};
  nanosleep(&ts, NULL);
  aperture_status_server_stop(server);
  ap_registry_remove(a);
  ap_registry_remove(b);
  return 0;
}
