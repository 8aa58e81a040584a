#include "interop/fleet/fleet_client.h"

#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interop/common/json_read.h"
#include "interop/common/unary_call.h"
#include "interop/fleet/fleet_net.h"

fleet_client_opts io_fleet_client_until_stopped(const char *bin, const char *target,
                                                const char *service_config, const char *rate,
                                                const char *summary_file) {
  fleet_client_opts o;
  memset(&o, 0, sizeof(o));
  o.bin = bin;
  o.target = target;
  o.service_config = service_config;
  o.rate = rate;
  o.duration_s = "3600"; /* an upper bound: the runner stops the clients */
  o.concurrency = "2";
  o.linger_s = "0";
  o.summary_file = summary_file;
  return o;
}

proc *io_fleet_client_start(const fleet_client_opts *o, const char *log) {
  if (o == NULL || o->bin == NULL || o->target == NULL || o->service_config == NULL ||
      o->rate == NULL || o->duration_s == NULL || o->concurrency == NULL ||
      o->linger_s == NULL || o->summary_file == NULL ||
      (o->peer_index == NULL) != (o->peer_count == NULL))
    return NULL;
  size_t n_extra = 0;
  while (o->extra != NULL && o->extra[n_extra] != NULL) n_extra++;
  if (n_extra > 24) return NULL;
  const char *argv[64];
  int n = 0;
  argv[n++] = o->bin;
  argv[n++] = "--target";
  argv[n++] = o->target;
  argv[n++] = "--service-config";
  argv[n++] = o->service_config;
  argv[n++] = "--calls";
  argv[n++] = "0";
  argv[n++] = "--rate";
  argv[n++] = o->rate;
  argv[n++] = "--duration-s";
  argv[n++] = o->duration_s;
  argv[n++] = "--concurrency";
  argv[n++] = o->concurrency;
  argv[n++] = "--timeout-ms";
  argv[n++] = "5000";
  argv[n++] = "--linger-s";
  argv[n++] = o->linger_s;
  argv[n++] = "--summary-file";
  argv[n++] = o->summary_file;
  if (o->peer_index != NULL) {
    argv[n++] = "--peer-index";
    argv[n++] = o->peer_index;
    argv[n++] = "--peer-count";
    argv[n++] = o->peer_count;
  }
  if (o->max_backoff_ms != NULL) {
    argv[n++] = "--max-backoff-ms";
    argv[n++] = o->max_backoff_ms;
  }
  if (o->dns_min_interval_ms != NULL) {
    argv[n++] = "--dns-min-interval-ms";
    argv[n++] = o->dns_min_interval_ms;
  }
  if (o->status_server) {
    argv[n++] = "--status-port";
    argv[n++] = "0";
  }
  for (size_t i = 0; i < n_extra; i++) argv[n++] = o->extra[i];
  if (o->unique_metadata != NULL) {
    argv[n++] = "--unique-metadata";
    argv[n++] = o->unique_metadata;
  }
  argv[n] = NULL;
  return io_fleet_net_start(o->host, (char *const *)argv, log);
}

grpc_channel *io_fleet_client_channel_to(proc *p, const char *hostport) {
  char target[160], ip[64];
  if (p == NULL || hostport == NULL || strlen(hostport) >= sizeof(ip)) return NULL;
  snprintf(target, sizeof(target), "ipv4:%s", hostport);
  if (io_fleet_net_direct()) return io_unary_channel_create(target, NULL);
  snprintf(ip, sizeof(ip), "%s", hostport);
  char *colon = strrchr(ip, ':');
  if (colon == NULL) return NULL;
  *colon = '\0';
  int fd = io_fleet_net_dial(p, ip, atoi(colon + 1));
  if (fd < 0) return NULL;
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_channel *ch = grpc_channel_create_from_fd(target, fd, creds, NULL);
  grpc_channel_credentials_release(creds);
  if (ch == NULL) close(fd);
  return ch;
}

grpc_channel *io_fleet_client_status_channel(proc *p, const char **why) {
  char line[128];
  if (p == NULL || io_proc_wait_line(p, "status listening ", 20000, line, sizeof(line)) != 0) {
    if (why) *why = "printed no status address";
    return NULL;
  }
  grpc_channel *ch = io_fleet_client_channel_to(p, line);
  if (ch == NULL && why) *why = "no channel to its status server";
  return ch;
}

const Aperture__V1__RingState *io_fleet_client_ring_state(grpc_channel *status, unary_result *r) {
  if (r == NULL) return NULL;
  memset(r, 0, sizeof(*r));
  if (status == NULL) return NULL;
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  if (io_unary_call(status, "/aperture.v1.ApertureStatus/GetRingState", &req.base,
                    &aperture__v1__get_ring_state_response__descriptor, NULL, NULL, 3000, r) != 0 ||
      r->code != GRPC_STATUS_OK || r->response == NULL) {
    return NULL;
  }
  const Aperture__V1__GetRingStateResponse *resp =
      (const Aperture__V1__GetRingStateResponse *)r->response;
  return resp->n_rings == 1 ? resp->rings[0] : NULL;
}

int io_fleet_client_read_summary(const char *summary_file, long *ok, long *failed) {
  if (summary_file == NULL || ok == NULL || failed == NULL) return -1;
  json_value *v = io_json_parse_file(summary_file, NULL, 0);
  if (v == NULL) return -1;
  *ok += (long)io_json_get_number(v, "ok", 0);
  *failed += (long)io_json_get_number(v, "failed", 0);
  io_json_free(v);
  return 0;
}
