/*
 * ap_registry: the process-wide list of live aperture policy instances and
 * a snapshot of each one's ring state, for the status service.
 *
 * Each policy instance adds itself with a snapshot callback and removes
 * itself before it is destroyed. ap_registry_snapshot() takes a reference
 * on every entry under the registry lock, releases the lock, then calls the
 * callbacks one by one with the request's filter and page (so an instance
 * copies only what the response will hold). Adding and removing other
 * instances never waits for a callback; removing an instance waits only
 * while its own callback is running, and a callback is never called after
 * its instance's remove returned. An entry removed while a snapshot holds a
 * reference stays allocated until that reference drops. Callbacks must be
 * quick, must not call into the registry and must not block on the data
 * path: they copy the instance's last published state and read its atomic
 * counters. Thread-safe: any thread may add, remove or snapshot at any time.
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

/* What one status request wants from each instance. */
typedef struct ap_snapshot_query {
  const char *target_filter; /* substring of the target; NULL or "" = all */
  size_t start_index;        /* ring index of the first endpoint to copy */
  size_t max_endpoints;      /* endpoints to copy at most (0 = none) */
} ap_snapshot_query;

typedef struct ap_endpoint_state {
  char *address;            /* owned; e.g. "127.0.0.1:50051" */
  uint32_t ring_index;      /* position in the agreed order */
  double endpoint_weight;   /* configured weight (1 when unweighted) */
  double intersection;      /* degree of intersection, 0 if outside */
  double pick_weight;       /* weight used by pick2 / P2C, 0 if outside */
  int in_aperture;          /* 1 if a member (window or widening) */
  int widened;              /* 1 if a member only through widening */
  int connectivity;         /* ap_connectivity; -1 when no subchannel */
  /* The call counts: one uint64_t per entry of ap_endpoint_counters.def. */
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) uint64_t name;
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
  int draining;             /* 1 while in its removal grace: gone from the
                               resolver, kept in the ring, never picked */
  int health;               /* an ap_health_state (ap_health.h): 0 ok,
                               1 ejected, 2 probation, 3 stuck */
  uint64_t ejections;       /* times ejected (a failure run, a stuck spell
                               or a failed probe) */
  const char *ejection_reason; /* static, never freed: why it was last
                               ejected (ap_health_ejection_reason()); NULL
                               reads as "none" */
  uint32_t stuck_after_ms;  /* its stuck threshold now (ap_health.h: from
                               its latency EWMA); 0 when detection is off */
  double utilization;       /* pickMetric orca: smoothed reported CPU
                               utilization; -1 none, stale or other metric */
  double latency_ewma_ms;   /* pickMetric peakEwma: peak EWMA of latency in
                               ms; -1 no sample or other metric */
  double weight_factor;     /* skew balance: pick weight factor (1 = none) */
  double reported_rps;      /* skew balance: the rate the server reports
                               (ORCA rps_fractional); -1 none or stale */
  double own_rate;          /* skew balance: this client's calls/s to it;
                               -1 not measured */
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
  /* The counters: one uint64_t per entry of ap_ring_counters.def. */
#define AP_RING_COUNTER(name, kind, metric, help, text) uint64_t name;
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
  char *last_status;          /* owned; last resolver/picker error, "" if none */
  size_t endpoint_count;      /* all endpoints of the ring */
  size_t first_endpoint;      /* ring index of endpoints[0] */
  size_t copied_endpoints;    /* entries in `endpoints` (the page) */
  ap_endpoint_state *endpoints; /* owned array of the page, ring order */
  uint64_t affinity_sessions; /* entries in the sticky session table; 0 unless
                                 affinity is "sticky" */
  /* Peer discovery (peerTarget / APERTURE_PEER_TARGET). */
  char *peer_target;          /* owned; the watched target, "" if none */
  char peer_fingerprint[17];  /* hex of the ordered peer list behind the
                                 coordinate; "" when none. Clients that
                                 agree on their peers show the same value */
  uint64_t coordinate_changes; /* times the applied coordinate changed */
  char pick_metric[16];       /* pickMetric name ("outstanding", "peakEwma",
                                 "orca"); "" when unknown */
  char peer_keys[8];          /* stable mode: "address" or "ordinal", how the
                                 plan keyed the peers; "" otherwise */
  char **config_warnings;     /* owned array of owned strings: one per field
                                 the config had and the policy ignored */
  size_t config_warning_count;
  /* The skew balance (pickMetric orca, clientSkewBalance). */
  char skew_reason[16];       /* ap_skew_reason_name(): why the width is it */
  double skew_own_rate;       /* this client's calls/s */
  double skew_others_rate;    /* the others' estimated mean; -1 unknown */
  double skew_ratio;          /* own / others', what the width follows; -1 */
  double skew_multiplier;     /* of the base width; 1 none */
  uint32_t max_ejection_percent; /* maxEjectionPercent (ap_health.h) */
  uint32_t members_out;       /* members ejected or on probation after an
                                 ejection now (ap_health_group.h) */
  uint32_t max_members_out;   /* the bound at the aperture's size now */
  double peer_failure_share;  /* the peers' failure share the last health
                                 sweep measured, [0, 1]; -1 unknown */
  /* In: what the snapshot asks for, set by the registry before it calls a
   * callback (never NULL there; borrowed for the call). A callback that is
   * called with NULL copies every endpoint. */
  const ap_snapshot_query *query;
} ap_ring_state;

/* Returned by a callback whose target does not match query->target_filter:
 * it copied nothing and *out holds nothing to free. */
#define AP_SNAPSHOT_SKIP 1

/* Fills *out with a deep copy of the instance's state, allocated with
 * malloc/strdup (the endpoint array with ap_endpoint_states_alloc()):
 * every field, but only the page of endpoints that
 * ap_snapshot_query_page() gives for out->query (first_endpoint,
 * copied_endpoints; endpoint_count stays the ring's size). On entry *out is
 * zeroed except `query`. Returns AP_OK, AP_SNAPSHOT_SKIP, or a negative
 * status (then *out may hold partial copies, which the registry frees). */
typedef int (*ap_snapshot_fn)(void *ctx, ap_ring_state *out);

/* 1 when `target` passes the query's filter (a NULL query passes all). */
int ap_snapshot_query_matches(const ap_snapshot_query *query, const char *target);

/* The page of a ring of `endpoint_count` endpoints that `query` asks for:
 * *first = min(start_index, endpoint_count), *count = how many from there,
 * at most max_endpoints. A NULL query asks for every endpoint. first and
 * count must not be NULL (otherwise nothing is written). */
void ap_snapshot_query_page(const ap_snapshot_query *query, size_t endpoint_count,
                            size_t *first, size_t *count);

typedef struct ap_registry_entry ap_registry_entry;

/* Adds an instance. *out is the handle to pass to ap_registry_remove(). */
int ap_registry_add(ap_snapshot_fn fn, void *ctx, ap_registry_entry **out,
                    ap_error *err);

/* Removes an instance; after return its callback is never called again.
 * Waits only while a snapshot is running this instance's own callback.
 * NULL is ignored. */
void ap_registry_remove(ap_registry_entry *entry);

/* Live instances now (what a snapshot may hold at most). Takes the
 * registry lock briefly. */
size_t ap_registry_count(void);

/* Snapshot of every live instance whose target contains
 * query->target_filter, each with the page of endpoints the query asks for;
 * at most `max_total_endpoints` endpoints over all instances (later
 * instances get smaller pages once the budget is spent). NULL query = every
 * instance with all its endpoints. The registry lock is held only to take
 * and drop references, never during a callback. On success *states is a
 * malloc'd array of *count entries (NULL when 0), in the order the
 * instances were added; free with ap_ring_states_free(). */
int ap_registry_snapshot(const ap_snapshot_query *query, size_t max_total_endpoints,
                         ap_ring_state **states, size_t *count, ap_error *err);

/* The array for a callback's page of `count` endpoints, zeroed: a callback
 * allocates out->endpoints with this, never with malloc, and
 * ap_ring_state_clear() frees it. A large one gets pages of its own that
 * go back to the system when freed (ap_pages.h: a status query copies up
 * to 20,000 endpoints, from threads that come and go). NULL when out of
 * memory or count is 0. */
ap_endpoint_state *ap_endpoint_states_alloc(size_t count);

/* Frees the strings and endpoint array inside one state (not the struct). */
void ap_ring_state_clear(ap_ring_state *state);

/* Frees an array returned by ap_registry_snapshot(). */
void ap_ring_states_free(ap_ring_state *states, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* AP_REGISTRY_H */
