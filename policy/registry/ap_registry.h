/*
 * ap_registry: the process-wide list of live aperture policy instances and
 * a consistent snapshot of each one's ring state, for the status service.
 *
 * Each policy instance adds itself with a snapshot callback and removes
 * itself before it is destroyed. ap_registry_snapshot() calls the callbacks
 * under the registry lock, so a callback never runs after its instance was
 * removed. Callbacks must be quick and must not block on the data path: they
 * copy the instance's last published state and read its atomic counters.
 * Thread-safe: any thread may add, remove or snapshot at any time.
 */
#ifndef AP_REGISTRY_H
#define AP_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Connectivity states, numerically equal to grpc_connectivity_state. */
typedef enum ap_connectivity {
  AP_CONN_IDLE = 0,
  AP_CONN_CONNECTING = 1,
  AP_CONN_READY = 2,
  AP_CONN_TRANSIENT_FAILURE = 3,
  AP_CONN_SHUTDOWN = 4
} ap_connectivity;

/* Lower-case name of a state ("idle", "connecting", "ready",
 * "transient_failure", "shutdown"); "unknown" otherwise. For logs and
 * tools; the status service sends the enum itself. */
const char *ap_connectivity_name(int state);

/* Where a policy instance found its coordinate. The values equal the
 * status proto's CoordinateSource (checked where both are visible). */
typedef enum ap_coordinate_source {
  AP_COORDINATE_UNSPECIFIED = 0,
  AP_COORDINATE_NONE = 1,        /* none known: random aperture */
  AP_COORDINATE_CONFIG = 2,      /* the service config */
  AP_COORDINATE_API = 3,         /* aperture_set_coordinate() */
  AP_COORDINATE_ENVIRONMENT = 4, /* APERTURE_PEER_INDEX / APERTURE_PEER_COUNT */
  AP_COORDINATE_HOSTNAME = 5,    /* host name ordinal */
  AP_COORDINATE_CHANNEL_ARG = 6, /* aperture.peer_index / aperture.peer_count */
  AP_COORDINATE_PEER_TARGET = 7  /* position in the list peerTarget resolves to */
} ap_coordinate_source;

/* Lower-case name of a source ("none", "config", "api", "environment",
 * "hostname", "channel_arg"); "unspecified" otherwise. */
const char *ap_coordinate_source_name(int source);

typedef struct ap_endpoint_state {
  char *address;            /* owned; e.g. "127.0.0.1:50051" */
  uint32_t ring_index;      /* position in the agreed order */
  double endpoint_weight;   /* configured weight (1 when unweighted) */
  double intersection;      /* degree of intersection, 0 if outside */
  double pick_weight;       /* weight used by pick2 / P2C, 0 if outside */
  int in_aperture;          /* 1 if a member (window or widening) */
  int widened;              /* 1 if a member only through widening */
  int connectivity;         /* ap_connectivity; -1 when no subchannel */
  uint64_t outstanding;     /* calls in flight now */
  uint64_t picks;           /* calls picked since the subchannel exists */
  uint64_t failures;        /* picked calls that ended in a non-OK status */
  int draining;             /* 1 while in its removal grace: gone from the
                               resolver, kept in the ring, never picked */
} ap_endpoint_state;

typedef struct ap_ring_state {
  char *target;             /* owned; the channel target */
  char *mode;               /* owned; effective mode name */
  int coordinate_source;    /* an ap_coordinate_source */
  uint32_t peer_index;
  uint32_t peer_count;      /* 0 when no coordinate is known */
  double offset;
  double width;
  uint32_t min_aperture;
  uint32_t logical_aperture;
  uint32_t physical_aperture; /* members with non-zero intersection */
  uint32_t widened;           /* members added by health widening */
  uint32_t draining;          /* endpoints in their removal grace */
  char fingerprint[17];       /* hex of the ordered endpoint list */
  uint64_t resolver_updates;
  uint64_t rebuilds;
  uint64_t subchannels_created;
  uint64_t subchannels_destroyed;
  uint64_t widenings;         /* times the picker had to widen */
  char *last_status;          /* owned; last resolver/picker error, "" if none */
  size_t endpoint_count;      /* all endpoints of the ring */
  ap_endpoint_state *endpoints; /* owned array, ring order */
  uint64_t affinity_sessions; /* entries in the sticky session table; 0 unless
                                 affinity is "sticky" */
  /* Peer discovery (peerTarget / APERTURE_PEER_TARGET). */
  char *peer_target;          /* owned; the watched target, "" if none */
  char peer_fingerprint[17];  /* hex of the ordered peer list behind the
                                 coordinate; "" when none. Clients that
                                 agree on their peers show the same value */
  uint64_t coordinate_changes; /* times the applied coordinate changed */
} ap_ring_state;

/* Fills *out (zeroed by the caller) with a deep copy of the instance's
 * state, allocated with malloc/strdup. Returns AP_OK or a negative status. */
typedef int (*ap_snapshot_fn)(void *ctx, ap_ring_state *out);

typedef struct ap_registry_entry ap_registry_entry;

/* Adds an instance. *out is the handle to pass to ap_registry_remove(). */
int ap_registry_add(ap_snapshot_fn fn, void *ctx, ap_registry_entry **out,
                    ap_error *err);

/* Removes an instance; after return its callback is never called again.
 * NULL is ignored. */
void ap_registry_remove(ap_registry_entry *entry);

/* Snapshot of every live instance whose target contains `target_filter`
 * (NULL or "" = all). On success *states is a malloc'd array of *count
 * entries (NULL when 0); free with ap_ring_states_free(). */
int ap_registry_snapshot(const char *target_filter, ap_ring_state **states,
                         size_t *count, ap_error *err);

/* Frees the strings and endpoint array inside one state (not the struct). */
void ap_ring_state_clear(ap_ring_state *state);

/* Frees an array returned by ap_registry_snapshot(). */
void ap_ring_states_free(ap_ring_state *states, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* AP_REGISTRY_H */
