/* client_policy for builds without the aperture library: only gRPC's own
 * policies (round_robin, pick_first) are available. */
#include <stdio.h>

#include "interop/client_policy.h"

const char *client_policy_names(void) { return "round_robin pick_first"; }

int client_policy_setup(long peer_index, long peer_count, char *err, size_t err_len) {
  (void)peer_count;
  if (peer_index >= 0) {
    snprintf(err, err_len, "--peer-index needs the aperture policy, not linked in this build");
    return -1;
  }
  return 0;
}

int client_policy_status_start(int port, char *err, size_t err_len) {
  (void)port;
  snprintf(err, err_len, "--status-port needs the aperture policy, not linked in this build");
  return -1;
}

void client_policy_status_stop(void) {}
