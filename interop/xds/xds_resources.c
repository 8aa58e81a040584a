/* Each builder fills protobuf-c messages on the stack and packs them; the
 * only heap parts are the packed bytes of nested Any values. */
#include "interop/xds/xds_resources.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/xds/xds_json_struct.h"
#include "src/proto/grpc/testing/xds/v3/cluster.pb-c.h"
#include "src/proto/grpc/testing/xds/v3/discovery.pb-c.h"
#include "src/proto/grpc/testing/xds/v3/endpoint.pb-c.h"
#include "src/proto/grpc/testing/xds/v3/http_connection_manager.pb-c.h"
#include "src/proto/grpc/testing/xds/v3/listener.pb-c.h"
#include "src/proto/grpc/testing/xds/v3/route.pb-c.h"
#include "src/proto/grpc/testing/xds/v3/router.pb-c.h"
#include "src/proto/grpc/testing/xds/v3/typed_struct.pb-c.h"

#define TYPE_HCM                                                                     \
  "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3." \
  "HttpConnectionManager"
#define TYPE_ROUTER "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
#define TYPE_TYPED_STRUCT "type.googleapis.com/xds.type.v3.TypedStruct"

int xds_fail(char *err, size_t err_len, const char *fmt, ...) {
  if (err != NULL && err_len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
  }
  return -1;
}

void xds_bytes_clear(xds_bytes *b) {
  if (b == NULL) return;
  free(b->data);
  b->data = NULL;
  b->len = 0;
}

static int pack(const ProtobufCMessage *m, xds_bytes *out, char *err, size_t err_len) {
  out->len = protobuf_c_message_get_packed_size(m);
  out->data = malloc(out->len > 0 ? out->len : 1);
  if (out->data == NULL) {
    out->len = 0;
    return xds_fail(err, err_len, "out of memory");
  }
  protobuf_c_message_pack(m, out->data);
  return 0;
}

/* An Any of `type_url` over bytes owned by the caller. */
static Google__Protobuf__Any any_of(const char *type_url, const xds_bytes *b) {
  Google__Protobuf__Any a = GOOGLE__PROTOBUF__ANY__INIT;
  a.type_url = (char *)type_url;
  a.value.data = b->data;
  a.value.len = b->len;
  return a;
}

static int check_name(const char *what, const char *name, char *err, size_t err_len) {
  if (name == NULL || name[0] == '\0') return xds_fail(err, err_len, "%s must not be empty", what);
  return 0;
}

int xds_listener_bytes(const char *listener_name, const char *route_name, xds_bytes *out,
                       char *err, size_t err_len) {
  if (out == NULL) return xds_fail(err, err_len, "out is NULL");
  if (check_name("listener name", listener_name, err, err_len) != 0 ||
      check_name("route name", route_name, err, err_len) != 0)
    return -1;
  Envoy__Extensions__Filters__Http__Router__V3__Router router =
      ENVOY__EXTENSIONS__FILTERS__HTTP__ROUTER__V3__ROUTER__INIT;
  xds_bytes router_bytes = {0};
  if (pack(&router.base, &router_bytes, err, err_len) != 0) return -1;
  Google__Protobuf__Any router_any = any_of(TYPE_ROUTER, &router_bytes);
  Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpFilter filter =
      ENVOY__EXTENSIONS__FILTERS__NETWORK__HTTP_CONNECTION_MANAGER__V3__HTTP_FILTER__INIT;
  filter.name = "router";
  filter.config_type_case =
      ENVOY__EXTENSIONS__FILTERS__NETWORK__HTTP_CONNECTION_MANAGER__V3__HTTP_FILTER__CONFIG_TYPE_TYPED_CONFIG;
  filter.typed_config = &router_any;
  Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpFilter *filters[] = {&filter};

  Envoy__Config__Core__V3__AggregatedConfigSource ads = ENVOY__CONFIG__CORE__V3__AGGREGATED_CONFIG_SOURCE__INIT;
  Envoy__Config__Core__V3__ConfigSource source = ENVOY__CONFIG__CORE__V3__CONFIG_SOURCE__INIT;
  source.config_source_specifier_case = ENVOY__CONFIG__CORE__V3__CONFIG_SOURCE__CONFIG_SOURCE_SPECIFIER_ADS;
  source.ads = &ads;
  Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__Rds rds =
      ENVOY__EXTENSIONS__FILTERS__NETWORK__HTTP_CONNECTION_MANAGER__V3__RDS__INIT;
  rds.config_source = &source;
  rds.route_config_name = (char *)route_name;

  Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpConnectionManager hcm =
      ENVOY__EXTENSIONS__FILTERS__NETWORK__HTTP_CONNECTION_MANAGER__V3__HTTP_CONNECTION_MANAGER__INIT;
  hcm.n_http_filters = 1;
  hcm.http_filters = filters;
  hcm.route_specifier_case =
      ENVOY__EXTENSIONS__FILTERS__NETWORK__HTTP_CONNECTION_MANAGER__V3__HTTP_CONNECTION_MANAGER__ROUTE_SPECIFIER_RDS;
  hcm.rds = &rds;
  xds_bytes hcm_bytes = {0};
  int rc = pack(&hcm.base, &hcm_bytes, err, err_len);
  xds_bytes_clear(&router_bytes);
  if (rc != 0) return -1;
  Google__Protobuf__Any hcm_any = any_of(TYPE_HCM, &hcm_bytes);
  Envoy__Config__Listener__V3__ApiListener api = ENVOY__CONFIG__LISTENER__V3__API_LISTENER__INIT;
  api.api_listener = &hcm_any;
  Envoy__Config__Listener__V3__Listener listener = ENVOY__CONFIG__LISTENER__V3__LISTENER__INIT;
  listener.name = (char *)listener_name;
  listener.api_listener = &api;
  rc = pack(&listener.base, out, err, err_len);
  xds_bytes_clear(&hcm_bytes);
  return rc;
}

int xds_route_bytes(const char *route_name, const char *cluster_name, xds_bytes *out,
                    char *err, size_t err_len) {
  if (out == NULL) return xds_fail(err, err_len, "out is NULL");
  if (check_name("route name", route_name, err, err_len) != 0 ||
      check_name("cluster name", cluster_name, err, err_len) != 0)
    return -1;
  Envoy__Config__Route__V3__RouteMatch match = ENVOY__CONFIG__ROUTE__V3__ROUTE_MATCH__INIT;
  match.path_specifier_case = ENVOY__CONFIG__ROUTE__V3__ROUTE_MATCH__PATH_SPECIFIER_PREFIX;
  match.prefix = "";
  Envoy__Config__Route__V3__RouteAction action = ENVOY__CONFIG__ROUTE__V3__ROUTE_ACTION__INIT;
  action.cluster_specifier_case = ENVOY__CONFIG__ROUTE__V3__ROUTE_ACTION__CLUSTER_SPECIFIER_CLUSTER;
  action.cluster = (char *)cluster_name;
  Envoy__Config__Route__V3__Route route = ENVOY__CONFIG__ROUTE__V3__ROUTE__INIT;
  route.match = &match;
  route.action_case = ENVOY__CONFIG__ROUTE__V3__ROUTE__ACTION_ROUTE;
  route.route = &action;
  Envoy__Config__Route__V3__Route *routes[] = {&route};
  char *domains[] = {"*"};
  Envoy__Config__Route__V3__VirtualHost host = ENVOY__CONFIG__ROUTE__V3__VIRTUAL_HOST__INIT;
  host.name = "all";
  host.n_domains = 1;
  host.domains = domains;
  host.n_routes = 1;
  host.routes = routes;
  Envoy__Config__Route__V3__VirtualHost *hosts[] = {&host};
  Envoy__Config__Route__V3__RouteConfiguration config =
      ENVOY__CONFIG__ROUTE__V3__ROUTE_CONFIGURATION__INIT;
  config.name = (char *)route_name;
  config.n_virtual_hosts = 1;
  config.virtual_hosts = hosts;
  return pack(&config.base, out, err, err_len);
}

int xds_cluster_bytes(const char *cluster_name, const char *policy_name,
                      const char *policy_json, xds_bytes *out, char *err, size_t err_len) {
  if (out == NULL) return xds_fail(err, err_len, "out is NULL");
  if (check_name("cluster name", cluster_name, err, err_len) != 0 ||
      check_name("policy name", policy_name, err, err_len) != 0)
    return -1;
  Google__Protobuf__Struct *config = xds_json_to_struct(policy_json, err, err_len);
  if (config == NULL) return -1;
  char type_url[256];
  snprintf(type_url, sizeof type_url, "type.googleapis.com/%s", policy_name);
  Xds__Type__V3__TypedStruct typed = XDS__TYPE__V3__TYPED_STRUCT__INIT;
  typed.type_url = type_url;
  typed.value = config;
  xds_bytes typed_bytes = {0};
  int rc = pack(&typed.base, &typed_bytes, err, err_len);
  protobuf_c_message_free_unpacked(&config->base, NULL);
  if (rc != 0) return -1;
  Google__Protobuf__Any typed_any = any_of(TYPE_TYPED_STRUCT, &typed_bytes);
  Envoy__Config__Core__V3__TypedExtensionConfig extension =
      ENVOY__CONFIG__CORE__V3__TYPED_EXTENSION_CONFIG__INIT;
  extension.name = (char *)policy_name;
  extension.typed_config = &typed_any;
  Envoy__Config__Cluster__V3__LoadBalancingPolicy__Policy policy =
      ENVOY__CONFIG__CLUSTER__V3__LOAD_BALANCING_POLICY__POLICY__INIT;
  policy.typed_extension_config = &extension;
  Envoy__Config__Cluster__V3__LoadBalancingPolicy__Policy *policies[] = {&policy};
  Envoy__Config__Cluster__V3__LoadBalancingPolicy lb = ENVOY__CONFIG__CLUSTER__V3__LOAD_BALANCING_POLICY__INIT;
  lb.n_policies = 1;
  lb.policies = policies;

  Envoy__Config__Core__V3__AggregatedConfigSource ads = ENVOY__CONFIG__CORE__V3__AGGREGATED_CONFIG_SOURCE__INIT;
  Envoy__Config__Core__V3__ConfigSource source = ENVOY__CONFIG__CORE__V3__CONFIG_SOURCE__INIT;
  source.config_source_specifier_case = ENVOY__CONFIG__CORE__V3__CONFIG_SOURCE__CONFIG_SOURCE_SPECIFIER_ADS;
  source.ads = &ads;
  Envoy__Config__Cluster__V3__Cluster__EdsClusterConfig eds =
      ENVOY__CONFIG__CLUSTER__V3__CLUSTER__EDS_CLUSTER_CONFIG__INIT;
  eds.eds_config = &source;
  Envoy__Config__Cluster__V3__Cluster cluster = ENVOY__CONFIG__CLUSTER__V3__CLUSTER__INIT;
  cluster.name = (char *)cluster_name;
  cluster.cluster_discovery_type_case = ENVOY__CONFIG__CLUSTER__V3__CLUSTER__CLUSTER_DISCOVERY_TYPE_TYPE;
  cluster.type = ENVOY__CONFIG__CLUSTER__V3__CLUSTER__DISCOVERY_TYPE__EDS;
  cluster.eds_cluster_config = &eds;
  cluster.load_balancing_policy = &lb;
  rc = pack(&cluster.base, out, err, err_len);
  xds_bytes_clear(&typed_bytes);
  return rc;
}

/* Splits "host:port" or "[v6]:port" into host (without brackets) and port. */
static int split_address(const char *address, char *host, size_t host_len, uint32_t *port) {
  const char *colon = strrchr(address, ':');
  if (colon == NULL || colon == address) return -1;
  const char *h = address;
  size_t n = (size_t)(colon - address);
  if (h[0] == '[') {
    if (n < 2 || h[n - 1] != ']') return -1;
    h++;
    n -= 2;
  }
  if (n == 0 || n >= host_len) return -1;
  char *end = NULL;
  unsigned long p = strtoul(colon + 1, &end, 10);
  if (colon[1] == '\0' || *end != '\0' || p == 0 || p > 65535) return -1;
  memcpy(host, h, n);
  host[n] = '\0';
  *port = (uint32_t)p;
  return 0;
}

int xds_endpoints_bytes(const char *cluster_name, const char *const *addresses,
                        const uint32_t *weights, size_t n, xds_bytes *out, char *err,
                        size_t err_len) {
  if (out == NULL) return xds_fail(err, err_len, "out is NULL");
  if (check_name("cluster name", cluster_name, err, err_len) != 0) return -1;
  if (n > 0 && addresses == NULL) return xds_fail(err, err_len, "addresses is NULL");
  typedef struct one {
    char host[64];
    Envoy__Config__Core__V3__SocketAddress socket;
    Envoy__Config__Core__V3__Address address;
    Envoy__Config__Endpoint__V3__Endpoint endpoint;
    Envoy__Config__Endpoint__V3__LbEndpoint lb;
    Google__Protobuf__UInt32Value weight;
  } one;
  one *all = n > 0 ? calloc(n, sizeof *all) : NULL;
  Envoy__Config__Endpoint__V3__LbEndpoint **lbs = n > 0 ? calloc(n, sizeof *lbs) : NULL;
  if (n > 0 && (all == NULL || lbs == NULL)) {
    free(all);
    free(lbs);
    return xds_fail(err, err_len, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    one *e = &all[i];
    uint32_t port = 0;
    if (addresses[i] == NULL || split_address(addresses[i], e->host, sizeof e->host, &port) != 0) {
      free(all);
      free(lbs);
      return xds_fail(err, err_len, "endpoint %zu: want host:port, got \"%.100s\"", i,
                  addresses[i] != NULL ? addresses[i] : "(null)");
    }
    Envoy__Config__Core__V3__SocketAddress socket = ENVOY__CONFIG__CORE__V3__SOCKET_ADDRESS__INIT;
    e->socket = socket;
    e->socket.address = e->host;
    e->socket.port_specifier_case = ENVOY__CONFIG__CORE__V3__SOCKET_ADDRESS__PORT_SPECIFIER_PORT_VALUE;
    e->socket.port_value = port;
    Envoy__Config__Core__V3__Address address = ENVOY__CONFIG__CORE__V3__ADDRESS__INIT;
    e->address = address;
    e->address.address_case = ENVOY__CONFIG__CORE__V3__ADDRESS__ADDRESS_SOCKET_ADDRESS;
    e->address.socket_address = &e->socket;
    Envoy__Config__Endpoint__V3__Endpoint endpoint = ENVOY__CONFIG__ENDPOINT__V3__ENDPOINT__INIT;
    e->endpoint = endpoint;
    e->endpoint.address = &e->address;
    Envoy__Config__Endpoint__V3__LbEndpoint lb = ENVOY__CONFIG__ENDPOINT__V3__LB_ENDPOINT__INIT;
    e->lb = lb;
    e->lb.host_identifier_case = ENVOY__CONFIG__ENDPOINT__V3__LB_ENDPOINT__HOST_IDENTIFIER_ENDPOINT;
    e->lb.endpoint = &e->endpoint;
    if (weights != NULL && weights[i] != 0) {
      Google__Protobuf__UInt32Value weight = GOOGLE__PROTOBUF__UINT32_VALUE__INIT;
      e->weight = weight;
      e->weight.value = weights[i];
      e->lb.load_balancing_weight = &e->weight;
    }
    lbs[i] = &e->lb;
  }
  Envoy__Config__Core__V3__Locality locality = ENVOY__CONFIG__CORE__V3__LOCALITY__INIT;
  locality.region = "local";
  locality.zone = "local-a";
  Google__Protobuf__UInt32Value weight = GOOGLE__PROTOBUF__UINT32_VALUE__INIT;
  weight.value = 1; /* gRPC ignores a locality without weight */
  Envoy__Config__Endpoint__V3__LocalityLbEndpoints group =
      ENVOY__CONFIG__ENDPOINT__V3__LOCALITY_LB_ENDPOINTS__INIT;
  group.locality = &locality;
  group.n_lb_endpoints = n;
  group.lb_endpoints = lbs;
  group.load_balancing_weight = &weight;
  Envoy__Config__Endpoint__V3__LocalityLbEndpoints *groups[] = {&group};
  Envoy__Config__Endpoint__V3__ClusterLoadAssignment cla =
      ENVOY__CONFIG__ENDPOINT__V3__CLUSTER_LOAD_ASSIGNMENT__INIT;
  cla.cluster_name = (char *)cluster_name;
  cla.n_endpoints = n > 0 ? 1 : 0;
  cla.endpoints = groups;
  int rc = pack(&cla.base, out, err, err_len);
  free(all);
  free(lbs);
  return rc;
}

int xds_response_bytes(const char *type_url, const char *version, const char *nonce,
                       const xds_bytes *resources, size_t n, xds_bytes *out, char *err,
                       size_t err_len) {
  if (out == NULL) return xds_fail(err, err_len, "out is NULL");
  if (check_name("type URL", type_url, err, err_len) != 0) return -1;
  if (n > 0 && resources == NULL) return xds_fail(err, err_len, "resources is NULL");
  Google__Protobuf__Any *anys = n > 0 ? calloc(n, sizeof *anys) : NULL;
  Google__Protobuf__Any **ptrs = n > 0 ? calloc(n, sizeof *ptrs) : NULL;
  if (n > 0 && (anys == NULL || ptrs == NULL)) {
    free(anys);
    free(ptrs);
    return xds_fail(err, err_len, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    anys[i] = any_of(type_url, &resources[i]);
    ptrs[i] = &anys[i];
  }
  Envoy__Service__Discovery__V3__DiscoveryResponse r =
      ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_RESPONSE__INIT;
  r.version_info = (char *)(version != NULL ? version : "");
  r.type_url = (char *)type_url;
  r.nonce = (char *)(nonce != NULL ? nonce : "");
  r.n_resources = n;
  r.resources = ptrs;
  int rc = pack(&r.base, out, err, err_len);
  free(anys);
  free(ptrs);
  return rc;
}
