#include "interop/fleet/fleet_modes.h"

#include <string.h>

/* Aperture modes get {"aperture":{"mode":NAME,"minAperture":A}} built per
 * scenario; the others use their fixed config. */
static const fleet_mode kModes[] = {
    {"continuous", NULL, 1},
    {"discrete", NULL, 1},
    {"random", NULL, 1},
    {"vdc", NULL, 1},
    {"smooth", NULL, 1},
    {"mesh", NULL, 1},
    {"stable", NULL, 1},
    {"round_robin", "{\"loadBalancingConfig\":[{\"round_robin\":{}}]}", 0},
    {"pick_first", "{\"loadBalancingConfig\":[{\"pick_first\":{}}]}", 0},
};
#define N_MODES ((int)(sizeof(kModes) / sizeof(kModes[0])))

const fleet_mode *io_fleet_mode_find(const char *name, size_t len) {
  if (name == NULL) return NULL;
  for (int i = 0; i < N_MODES; i++) {
    if (strlen(kModes[i].name) == len && strncmp(kModes[i].name, name, len) == 0) return &kModes[i];
  }
  return NULL;
}
