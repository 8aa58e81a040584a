// The public C API (policy/include/aperture.h) and auto-registration when
// the library is loaded.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/support/log.h>

#include "policy/include/aperture.h"
#include "policy/lb/coordinate/process_coordinate.h"
#include "policy/lb/api/registration.h"

namespace {

// The public result codes are the core's, value for value.
static_assert((int)APERTURE_OK == (int)AP_OK, "aperture_status mirrors ap_result");
static_assert((int)APERTURE_EINVAL == (int)AP_EINVAL, "aperture_status mirrors ap_result");
static_assert((int)APERTURE_ERANGE == (int)AP_ERANGE, "aperture_status mirrors ap_result");
static_assert((int)APERTURE_ENOMEM == (int)AP_ENOMEM, "aperture_status mirrors ap_result");
static_assert((int)APERTURE_ESTATE == (int)AP_ESTATE, "aperture_status mirrors ap_result");
static_assert((int)APERTURE_EUNAVAIL == (int)AP_EUNAVAIL,
              "aperture_status mirrors ap_result");
static_assert((int)APERTURE_EINTERNAL == (int)AP_EINTERNAL,
              "aperture_status mirrors ap_result");

// aperture_error and ap_error have the same layout; copy field by field to
// avoid relying on it.
void CopyError(const ap_error& from, aperture_error* to) {
  if (to == nullptr) return;
  to->code = from.code;
  snprintf(to->message, sizeof(to->message), "%s", from.message);
}

bool AutoRegisterDisabled() {
  const char* v = getenv("APERTURE_NO_AUTOREGISTER");
  return v != nullptr && v[0] != '\0' && strcmp(v, "0") != 0;
}

// Runs when the library is loaded (also through LD_PRELOAD), before main().
// The build hook goes in even when automatic registration is off, so that a
// later aperture_register() never has to touch gRPC's registration.
__attribute__((constructor)) void AutoRegister() {
  aperture_lb::InstallBuildHook();
  if (AutoRegisterDisabled()) return;
  ap_error err;
  if (aperture_lb::RegisterOnce(&err) != AP_OK) {
    gpr_log(GPR_ERROR, "aperture: automatic registration failed: %s",
            err.message);
  }
}

}  // namespace

extern "C" {

int aperture_register(aperture_error* err) {
  ap_error e;
  int rc = aperture_lb::RegisterOnce(&e);
  CopyError(e, err);
  return rc;
}

int aperture_is_registered(void) { return aperture_lb::IsRegistered() ? 1 : 0; }

int aperture_set_coordinate(uint32_t peer_index, uint32_t peer_count,
                            aperture_error* err) {
  ap_error e;
  int rc = aperture_lb::SetApiCoordinate(peer_index, peer_count, &e);
  CopyError(e, err);
  return rc;
}

void aperture_clear_coordinate(void) { aperture_lb::ClearApiCoordinate(); }

}  // extern "C"
