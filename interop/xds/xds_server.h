/* A small xDS management server for the tests (tests/xds): one ADS service
 * (envoy.service.discovery.v3.AggregatedDiscoveryService, state of the
 * world) on the public gRPC C-core API. It serves one listener -> route ->
 * cluster -> endpoints chain: the Listener named like the client's
 * xds:/// target, its RouteConfiguration, an EDS Cluster whose
 * load_balancing_policy is a custom policy (TypedStruct with JSON config)
 * and its ClusterLoadAssignment. Setters push the changed resource to
 * every open stream; counters and waits let tests see what the client
 * accepted (ACK) or rejected (NACK). Not a general control plane. */
#ifndef APERTURE_INTEROP_XDS_SERVER_H
#define APERTURE_INTEROP_XDS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xds_server xds_server;

typedef enum xds_type { XDS_LDS = 0, XDS_RDS = 1, XDS_CDS = 2, XDS_EDS = 3, XDS_TYPE_COUNT = 4 } xds_type;

typedef struct xds_server_options {
  const char *address;       /* listen address; NULL means "127.0.0.1:0" */
  const char *listener_name; /* the NAME of the client's xds:///NAME target */
  const char *cluster_name;  /* also the route's and the EDS resource's name base */
  const char *policy_name;   /* a registered LB policy, e.g. "aperture" */
  const char *policy_json;   /* its config: a JSON object, e.g. {"minAperture":3} */
  const char *const *endpoints; /* "host:port" each */
  size_t n_endpoints;
  /* NULL, or n_endpoints EDS load_balancing_weights (0: unset) */
  const uint32_t *endpoint_weights;
} xds_server_options;

typedef struct xds_server_counts {
  uint64_t streams;               /* ADS streams accepted */
  uint64_t version[XDS_TYPE_COUNT]; /* current version of each type (from 1) */
  uint64_t acked[XDS_TYPE_COUNT]; /* highest version some stream ACKed */
  uint64_t nacks[XDS_TYPE_COUNT]; /* rejected responses */
  char last_nack[512];            /* the client's message for the last NACK */
} xds_server_counts;

/* Validates the options (names non-empty, policy JSON an object, endpoints
 * host:port), listens and starts serving on its own thread. Returns 0 with
 * the server in *out, or -1 with a message in err. */
int xds_server_start(const xds_server_options *options, xds_server **out, char *err,
                     size_t err_len);

/* The bound port; -1 for NULL. */
int xds_server_port(const xds_server *s);

/* Replaces the endpoints (EDS) and pushes them. Returns 0, or -1 with a
 * message in err (the old endpoints stay). */
int xds_server_set_endpoints(xds_server *s, const char *const *endpoints, size_t n, char *err,
                             size_t err_len);

/* As xds_server_set_endpoints, each endpoint with the EDS
 * load_balancing_weight weights[i] (0: unset; NULL: none). */
int xds_server_set_weighted_endpoints(xds_server *s, const char *const *endpoints,
                                      const uint32_t *weights, size_t n, char *err,
                                      size_t err_len);

/* Replaces the policy's JSON config in the Cluster (CDS) and pushes it.
 * Returns 0, or -1 with a message in err (the old config stays). */
int xds_server_set_policy_json(xds_server *s, const char *policy_json, char *err,
                               size_t err_len);

/* A consistent copy of the counters. No-op when s or out is NULL. */
void xds_server_get_counts(xds_server *s, xds_server_counts *out);

/* Waits until some stream has ACKed the current version of `type`.
 * Returns 0, or -1 on timeout, on a NACK of that version or bad arguments. */
int xds_server_wait_acked(xds_server *s, xds_type type, int timeout_ms);

/* Cancels open streams, stops the server and frees it. NULL is ignored. */
void xds_server_stop(xds_server *s);

#ifdef __cplusplus
}
#endif

#endif
