/* The LB modes a fleet run can compare: aperture's modes (their service
 * config built per scenario) and gRPC's own policies (a fixed config). */
#ifndef APERTURE_INTEROP_FLEET_MODES_H
#define APERTURE_INTEROP_FLEET_MODES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fleet_mode {
  const char *name;
  const char *config; /* service config JSON; NULL for aperture modes */
  int aperture;       /* needs the aperture policy and a coordinate */
} fleet_mode;

/* The mode named by the `len` bytes at `name` (a --modes item, not
 * necessarily NUL terminated); NULL when there is none or name is NULL. */
const fleet_mode *io_fleet_mode_find(const char *name, size_t len);

#ifdef __cplusplus
}
#endif

#endif
