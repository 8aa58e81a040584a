/* Built by CMake against the aperture package (find_package(aperture),
 * aperture::aperture only): uses gRPC's C core and the policy's API
 * together. Prints "aperture registered" and exits 0 when the policy is
 * in gRPC's configuration. */
#include <stdio.h>

#include <aperture.h>
#include <grpc/grpc.h>

int main(void) {
  grpc_init();
  aperture_error err;
  int rc = aperture_register(&err);
  int registered = aperture_is_registered();
  grpc_shutdown();
  if (rc != APERTURE_OK || !registered) {
    fprintf(stderr, "cmake_client: not registered (%d): %s\n", rc,
            rc != APERTURE_OK ? err.message : "aperture_is_registered() is 0");
    return 1;
  }
  printf("aperture registered\n");
  return 0;
}
