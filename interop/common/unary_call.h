/* A blocking unary call on the public C-core API, for the fleet runner and
 * the tests (health checks, stats queries, single probes). */
#ifndef APERTURE_INTEROP_UNARY_CALL_H
#define APERTURE_INTEROP_UNARY_CALL_H

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct unary_result {
  grpc_status_code code;
  char details[256];
  char hostname_md[128];      /* the `hostname` initial metadata entry, or "" */
  ProtobufCMessage *response; /* NULL unless code == OK and it parsed */
} unary_result;

/* Calls `method` ("/pkg.Service/Method") on `ch` with `request`, an
 * optional metadata entry (md_key/md_value, both or neither), and a
 * deadline of timeout_ms. The answer is parsed as `response_desc`.
 * Returns 0 when the call completed (whatever its status; see out->code),
 * -1 on bad arguments or when the call could not be started. Release with
 * io_unary_result_free. */
int io_unary_call(grpc_channel *ch, const char *method, const ProtobufCMessage *request,
               const ProtobufCMessageDescriptor *response_desc, const char *md_key,
               const char *md_value, int timeout_ms, unary_result *out);

void io_unary_result_free(unary_result *r);

/* Creates an insecure channel to target (own subchannel pool, optional
 * service config JSON). NULL on bad arguments. */
grpc_channel *io_unary_channel_create(const char *target, const char *service_config);

#ifdef __cplusplus
}
#endif

#endif
