/* xDS v3 resources as serialized protobuf bytes (protobuf-c, no gRPC):
 * the four resources a gRPC client needs to reach one cluster through ADS,
 * and the DiscoveryResponse that carries them. Every function returns 0
 * with a malloc'd buffer in *out (caller frees out->data), or -1 with a
 * message in err. */
#ifndef APERTURE_INTEROP_XDS_RESOURCES_H
#define APERTURE_INTEROP_XDS_RESOURCES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XDS_TYPE_LISTENER "type.googleapis.com/envoy.config.listener.v3.Listener"
#define XDS_TYPE_ROUTE "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
#define XDS_TYPE_CLUSTER "type.googleapis.com/envoy.config.cluster.v3.Cluster"
#define XDS_TYPE_ENDPOINTS "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"

typedef struct xds_bytes {
  uint8_t *data;
  size_t len;
} xds_bytes;

/* Frees b->data and resets b. NULL is ignored. */
void xds_bytes_clear(xds_bytes *b);

/* The package's one error writer: formats the message into err (when err
 * is not NULL and err_len > 0) and returns -1, so that an error path reads
 * `return xds_fail(err, err_len, ...)`. */
int xds_fail(char *err, size_t err_len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A Listener for gRPC clients (an api_listener): HttpConnectionManager with
 * the router filter, routes from RDS over ADS under `route_name`. */
int xds_listener_bytes(const char *listener_name, const char *route_name, xds_bytes *out,
                       char *err, size_t err_len);

/* A RouteConfiguration: one virtual host for every domain, every path to
 * `cluster_name`. */
int xds_route_bytes(const char *route_name, const char *cluster_name, xds_bytes *out,
                    char *err, size_t err_len);

/* An EDS Cluster (endpoints over ADS) whose load_balancing_policy is one
 * typed_extension_config holding an xds.type.v3.TypedStruct with type URL
 * "type.googleapis.com/<policy_name>" and `policy_json` (a JSON object) as
 * its google.protobuf.Struct value. */
int xds_cluster_bytes(const char *cluster_name, const char *policy_name,
                      const char *policy_json, xds_bytes *out, char *err, size_t err_len);

/* A ClusterLoadAssignment: one locality (weight 1, priority 0) holding the
 * endpoints "host:port" ("[v6]:port" for IPv6), in the given order. With
 * `weights` (NULL: none), endpoint i carries load_balancing_weight
 * weights[i]; 0 leaves its weight unset. */
int xds_endpoints_bytes(const char *cluster_name, const char *const *addresses,
                        const uint32_t *weights, size_t n, xds_bytes *out, char *err,
                        size_t err_len);

/* A DiscoveryResponse of `type_url` with the given serialized resources,
 * each wrapped in a google.protobuf.Any of that type. */
int xds_response_bytes(const char *type_url, const char *version, const char *nonce,
                       const xds_bytes *resources, size_t n, xds_bytes *out, char *err,
                       size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
