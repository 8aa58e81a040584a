#include "interop/fleet/fleet_modes.h"

#include <stdio.h>
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

int io_fleet_modes_next(const char **cursor, int have_aperture, int say_skips,
                        const fleet_mode **out) {
  if (cursor == NULL || *cursor == NULL || out == NULL) return -1;
  while (**cursor != '\0') {
    const char *p = *cursor;
    size_t len = strcspn(p, ",");
    *cursor = p + len + (p[len] == ',');
    const fleet_mode *m = io_fleet_mode_find(p, len);
    if (m == NULL) {
      fprintf(stderr, "fleet: unknown mode '%.*s'\n", (int)len, p);
      return -1;
    }
    if (m->aperture && !have_aperture) {
      if (say_skips) fprintf(stderr, "fleet: mode %s needs the aperture policy (not linked); skipped\n", m->name);
      continue;
    }
    *out = m;
    return 1;
  }
  return 0;
}
