/* What the interop client needs from the aperture library: registration of
 * the policy right after grpc_init(), the process coordinate, and the
 * aperture status server. Kept behind this header so the client's driver
 * does not depend on which policies are linked in. */
#ifndef APERTURE_INTEROP_CLIENT_POLICY_H
#define APERTURE_INTEROP_CLIENT_POLICY_H

#include <stddef.h>

/* Space separated names of the LB policies this build can use. */
const char *io_client_policy_names(void);

/* Registers extra LB policies (call right after grpc_init()) and, when
 * peer_index >= 0, sets this process's coordinate (peer_index of
 * peer_count). Returns 0, or -1 with a message in err. */
int io_client_policy_setup(long peer_index, long peer_count, char *err, size_t err_len);

/* Starts the policy's status server on 127.0.0.1:port (0 = ephemeral) and
 * prints `status listening 127.0.0.1:PORT`. Returns 0, or -1 with a
 * message in err when there is no status server or it cannot start. */
int io_client_policy_status_start(int port, char *err, size_t err_len);

/* Stops the status server if it runs. */
void io_client_policy_status_stop(void);

#endif
