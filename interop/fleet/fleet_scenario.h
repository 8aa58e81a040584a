/* What a fleet scenario gets from the runner (fleet.c): the flags. */
#ifndef APERTURE_INTEROP_FLEET_SCENARIO_H
#define APERTURE_INTEROP_FLEET_SCENARIO_H

#ifdef __cplusplus
extern "C" {
#endif

/* What the flags asked for, as every scenario reads it; 0 or NULL: the
 * scenario's own default. */
typedef struct fleet_args {
  const char *server_bin, *client_bin, *out_dir;
  int have_aperture;                /* the client has the aperture policy */
  const char *modes;                /* --modes, comma separated */
  long servers, clients, concurrency, min_aperture;
  double rate, duration_s;
  long grace_ms;                    /* --grace-ms; -1: the scenario's default */
  long rss_bound_kib;               /* --rss-bound-kib */
  const char *points;               /* --points */
  const char *affinity;             /* --affinity */
} fleet_args;

#ifdef __cplusplus
}
#endif

#endif
