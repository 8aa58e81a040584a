/*
 * ap_subset: the subsetting entry points: mode names, parameter validation,
 * and ap_aperture_compute(), which dispatches to the modes (ap_mode_*.c);
 * ap_aperture_from_window() for an explicit window.
 */
#include "policy/core/subset/ap_aperture.h"

#include <math.h>
#include <string.h>

#include "policy/core/ap_limits.h"
#include "policy/core/subset/ap_aperture_internal.h"

static const char *const kModeNames[] = {"continuous", "discrete", "random",
                                         "vdc",        "mesh",     "smooth",
                                         "stable"};
#define AP_MODE_COUNT (sizeof(kModeNames) / sizeof(kModeNames[0]))

int ap_mode_parse(const char *name, ap_mode *out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  if (name != NULL) {
    for (size_t i = 0; i < AP_MODE_COUNT; ++i) {
      if (strcmp(name, kModeNames[i]) == 0) {
        *out = (ap_mode)i;
        return AP_OK;
      }
    }
  }
  return ap_error_set(err, AP_EINVAL,
                      "mode \"%.64s\" is unknown; accepted: continuous, "
                      "discrete, random, vdc, mesh, smooth, stable",
                      name == NULL ? "(null)" : name);
}

const char *ap_mode_name(ap_mode mode) {
  if ((unsigned)mode >= AP_MODE_COUNT) return "unknown";
  return kModeNames[mode];
}

void ap_subset_params_init(ap_subset_params *params) {
  if (params == NULL) return;
  memset(params, 0, sizeof(*params));
  params->mode = AP_MODE_CONTINUOUS;
  params->min_aperture = AP_DEFAULT_MIN_APERTURE;
}

/* The checks ap_aperture_compute() and ap_subset_params_for_client()
 * share, so both name a bad field the same way. */
static int validate_params(const ap_subset_params *params, ap_error *err) {
  if ((unsigned)params->mode >= AP_MODE_COUNT) {
    return ap_error_set(err, AP_EINVAL, "params.mode is %d, not a known mode",
                        (int)params->mode);
  }
  if (params->peer_count > AP_MAX_PEERS) {
    return ap_error_set(err, AP_ERANGE, "params.peer_count is %u, max is %u",
                        params->peer_count, AP_MAX_PEERS);
  }
  if (params->peer_count > 0 && params->peer_index >= params->peer_count) {
    return ap_error_set(err, AP_EINVAL,
                        "params.peer_index is %u, must be < peer_count %u",
                        params->peer_index, params->peer_count);
  }
  if (params->min_aperture == 0) {
    return ap_error_set(err, AP_EINVAL, "params.min_aperture must be >= 1");
  }
  if (params->min_aperture > AP_MAX_PEERS) {
    return ap_error_set(err, AP_ERANGE, "params.min_aperture is %u, max is %u",
                        params->min_aperture, AP_MAX_PEERS);
  }
  return AP_OK;
}

int ap_subset_params_for_client(ap_mode mode, uint32_t client,
                                uint32_t clients, uint32_t min_aperture,
                                uint64_t random_seed, ap_subset_params *out,
                                ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  ap_subset_params_init(out);
  const ap_subset_params p = {.mode = mode,
                              .peer_index = client,
                              .peer_count = clients,
                              .min_aperture = min_aperture,
                              .random_seed = random_seed};
  int rc = validate_params(&p, err);
  if (rc != AP_OK) return rc;
  *out = p;
  return AP_OK;
}

int ap_aperture_compute(const ap_ring *ring, const ap_subset_params *params,
                        ap_aperture **out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  *out = NULL;
  if (ring == NULL) return ap_error_set(err, AP_EINVAL, "ring must not be NULL");
  if (params == NULL) {
    return ap_error_set(err, AP_EINVAL, "params must not be NULL");
  }
  int rc = validate_params(params, err);
  if (rc != AP_OK) return rc;
  const size_t n = ap_ring_size(ring);
  const uint32_t logical =
      params->min_aperture < n ? params->min_aperture : (uint32_t)n;
  ap_mode mode = params->mode;
  /* Without a coordinate only the modes that need none can run. */
  if (params->peer_count == 0 && mode != AP_MODE_MESH) mode = AP_MODE_RANDOM;
  ap_aperture *ap = NULL;
  switch (mode) {
    case AP_MODE_CONTINUOUS:
      rc = ap_mode_continuous_compute(ring, params, logical, &ap, err);
      break;
    case AP_MODE_DISCRETE:
      rc = ap_mode_discrete_compute(ring, params, logical, &ap, err);
      break;
    case AP_MODE_RANDOM:
      rc = ap_mode_random_compute(ring, params, logical, &ap, err);
      break;
    case AP_MODE_VDC:
      rc = ap_mode_vdc_compute(ring, params, logical, &ap, err);
      break;
    case AP_MODE_MESH:
      rc = ap_mode_mesh_compute(ring, params, logical, &ap, err);
      break;
    case AP_MODE_SMOOTH:
      rc = ap_mode_smooth_compute(ring, params, logical, &ap, err);
      break;
    case AP_MODE_STABLE:
      rc = ap_mode_stable_compute(ring, params, logical, &ap, err);
      break;
    default:
      return ap_error_set(err, AP_EINTERNAL, "mode %d has no implementation",
                          (int)mode);
  }
  if (rc != AP_OK) return rc;
  ap->mode = mode;
  ap->logical = logical;
  ap->ring_size = n;
  rc = ap_aperture_seal(&ap, err);
  if (rc != AP_OK) return rc;
  *out = ap;
  return AP_OK;
}

int ap_aperture_from_window(const ap_ring *ring, double offset, double width,
                            ap_aperture **out, ap_error *err) {
  if (out == NULL) return ap_error_set(err, AP_EINVAL, "out must not be NULL");
  *out = NULL;
  if (ring == NULL) return ap_error_set(err, AP_EINVAL, "ring must not be NULL");
  if (!isfinite(offset) || offset < 0.0 || offset >= 1.0) {
    return ap_error_set(err, AP_EINVAL, "offset is %g, must be in [0, 1)",
                        offset);
  }
  if (!isfinite(width) || !(width > 0.0) || width > 1.0) {
    return ap_error_set(err, AP_EINVAL, "width is %g, must be in (0, 1]",
                        width);
  }
  const ap_window w = ap_window_real(offset, width);
  ap_aperture *ap = NULL;
  int rc = ap_window_members(ring, &w, &ap, err);
  if (rc != AP_OK) return rc;
  const size_t n = ap_ring_size(ring);
  ap->mode = AP_MODE_CONTINUOUS;
  ap->offset = offset;
  ap->width = width;
  /* The logical aperture of an explicit window: the arcs it spans. */
  double span = width * (double)n;
  ap->logical = span >= (double)n ? (uint32_t)n : (uint32_t)ceil(span - 1e-9);
  if (ap->logical == 0) ap->logical = 1;
  ap->ring_size = n;
  rc = ap_aperture_seal(&ap, err);
  if (rc != AP_OK) return rc;
  *out = ap;
  return AP_OK;
}
