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

/* Walks a comma-separated --modes list: stores in *out the next mode at
 * *cursor that can run and moves *cursor past it. Aperture modes are
 * skipped when !have_aperture (the library is not linked), with a line on
 * stderr when say_skips (the user asked for them by name). Returns 1 with
 * a mode, 0 at the end of the list, -1 on an unknown name (printed) or a
 * NULL argument. */
int io_fleet_modes_next(const char **cursor, int have_aperture, int say_skips,
                        const fleet_mode **out);

#ifdef __cplusplus
}
#endif

#endif
