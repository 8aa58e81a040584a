// An application-owned grpc_server with the status service registered on
// it, started and stopped the way an application does (gtest assertions).
#ifndef APERTURE_TESTS_STATUS_OWNED_SERVER_H
#define APERTURE_TESTS_STATUS_OWNED_SERVER_H

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <gtest/gtest.h>

#include "policy/include/aperture.h"

// Listens on 127.0.0.1 (the port in *port), starts the application-owned
// `server` and then the status service registered on it.
inline void ServeOwned(grpc_server *server, aperture_status_service *svc, int *port) {
  grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
  *port = grpc_server_add_http2_port(server, "127.0.0.1:0", creds);
  grpc_server_credentials_release(creds);
  ASSERT_GT(*port, 0);
  grpc_server_start(server);
  aperture_error err;
  ASSERT_EQ(aperture_status_service_start(svc, &err), APERTURE_OK) << err.message;
}

// Stops them the way an application does: the server's shutdown tag comes
// back on its queue, then the service, the server and the queue go, and
// the gRPC reference the test took.
inline void StopOwned(grpc_server *server, grpc_completion_queue *cq, aperture_status_service *svc) {
  int tag = 0;
  grpc_server_shutdown_and_notify(server, cq, &tag);
  grpc_server_cancel_all_calls(server);
  grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
  EXPECT_EQ(ev.tag, &tag);
  aperture_status_service_destroy(svc);
  grpc_server_destroy(server);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  grpc_shutdown();
}

#endif  // APERTURE_TESTS_STATUS_OWNED_SERVER_H
