/* A program built outside Bazel against the installed aperture package
 * (pkg-config --cflags --libs aperture): it includes <aperture.h>, starts
 * the status server, and sends `calls` EmptyCalls through one channel
 * whose service config selects the aperture policy (peer 0 of 2,
 * continuous, minAperture 2). Prints `status listening ADDR`, then
 * `calls ok=N failed=M peers PEER=COUNT ...` (one PEER=COUNT per backend
 * reached, PEER as grpc_call_get_peer() gives it), then waits (at most 30 s) for SIGTERM so the status can be read.
 *
 * Its one call goes through the tests' raw_call.c, compiled beside it.
 *
 *   pkg_client TARGET CALLS */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <aperture.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>

#include "raw_call.h"

#define MAX_PEERS 64

static volatile sig_atomic_t g_stop = 0;
static void on_term(int sig) {
  (void)sig;
  g_stop = 1;
}

/* One EmptyCall that waits for a ready backend; its peer goes to `peer`. */
static int one_call(grpc_channel *ch, char *peer, size_t peer_len) {
  raw_call_opts o = {.method = "/grpc.testing.TestService/EmptyCall",
                     .wait_for_ready = 1,
                     .timeout_ms = 10000};
  return raw_call_unary(ch, &o, peer, peer_len) == GRPC_STATUS_OK ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 3 || atoi(argv[2]) <= 0) {
    fprintf(stderr, "usage: pkg_client TARGET CALLS\n");
    return 2;
  }
  signal(SIGTERM, on_term);
  grpc_init();
  if (!aperture_is_registered()) {
    fprintf(stderr, "pkg_client: the aperture policy is not registered\n");
    return 1;
  }
  aperture_error err;
  aperture_status_server *status = NULL;
  if (aperture_status_server_start("127.0.0.1:0", &status, &err) != APERTURE_OK) {
    fprintf(stderr, "pkg_client: %s\n", err.message);
    return 1;
  }
  printf("status listening 127.0.0.1:%d\n", aperture_status_server_port(status));
  fflush(stdout);

  grpc_arg args[2];
  args[0].type = GRPC_ARG_STRING;
  args[0].key = GRPC_ARG_SERVICE_CONFIG;
  args[0].value.string =
      "{\"loadBalancingConfig\":[{\"aperture\":{\"mode\":\"continuous\",\"minAperture\":2,"
      "\"peerIndex\":0,\"peerCount\":2}}]}";
  args[1].type = GRPC_ARG_INTEGER;
  args[1].key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
  args[1].value.integer = 1;
  grpc_channel_args chargs = {2, args};
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_channel *ch = grpc_channel_create(argv[1], creds, &chargs);
  grpc_channel_credentials_release(creds);

  char peers[MAX_PEERS][128];
  long counts[MAX_PEERS] = {0};
  int n_peers = 0;
  long ok = 0, failed = 0;
  for (int i = 0, calls = atoi(argv[2]); i < calls; i++) {
    char peer[128];
    if (one_call(ch, peer, sizeof peer) != 0) {
      failed++;
      continue;
    }
    ok++;
    int k = 0;
    while (k < n_peers && strcmp(peers[k], peer) != 0) k++;
    if (k == n_peers && n_peers < MAX_PEERS) snprintf(peers[n_peers++], sizeof peers[0], "%s", peer);
    if (k < n_peers) counts[k]++;
  }
  printf("calls ok=%ld failed=%ld peers", ok, failed);
  for (int k = 0; k < n_peers; k++) printf(" %s=%ld", peers[k], counts[k]);
  printf("\n");
  fflush(stdout);

  for (int waited = 0; !g_stop && waited < 3000; waited++) {
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
  grpc_channel_destroy(ch);
  aperture_status_server_stop(status);
  grpc_shutdown();
  return 0;
}
