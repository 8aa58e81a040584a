/* client_policy: registers the aperture policy
 * right after grpc_init(), sets the coordinate from the flags (the library
 * itself reads APERTURE_PEER_INDEX / APERTURE_PEER_COUNT when no flag is
 * given) and runs the aperture status server. */
#include <stdio.h>

#include "aperture.h"
#include "interop/testing/client_policy.h"

static aperture_status_server *g_status;

const char *io_client_policy_names(void) { return "round_robin pick_first aperture"; }

int io_client_policy_setup(long peer_index, long peer_count, char *err, size_t err_len) {
  aperture_error e;
  if (aperture_register(&e) != APERTURE_OK) {
    snprintf(err, err_len, "aperture_register: %s", e.message);
    return -1;
  }
  if (peer_index >= 0 &&
      aperture_set_coordinate((uint32_t)peer_index, (uint32_t)peer_count, &e) != APERTURE_OK) {
    snprintf(err, err_len, "aperture_set_coordinate: %s", e.message);
    return -1;
  }
  return 0;
}

int io_client_policy_status_start(int port, char *err, size_t err_len) {
  char address[64];
  snprintf(address, sizeof(address), "127.0.0.1:%d", port);
  aperture_error e;
  if (aperture_status_server_start(address, &g_status, &e) != APERTURE_OK) {
    snprintf(err, err_len, "aperture_status_server_start(%s): %s", address, e.message);
    return -1;
  }
  printf("status listening 127.0.0.1:%d\n", aperture_status_server_port(g_status));
  fflush(stdout);
  return 0;
}

void io_client_policy_status_stop(void) {
  aperture_status_server_stop(g_status);
  g_status = NULL;
}
