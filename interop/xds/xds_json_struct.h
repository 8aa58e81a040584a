/* JSON text to google.protobuf.Struct (protobuf-c), for the JSON config
 * that an xds.type.v3.TypedStruct carries. */
#ifndef APERTURE_INTEROP_XDS_JSON_STRUCT_H
#define APERTURE_INTEROP_XDS_JSON_STRUCT_H

#include <stddef.h>

#include "google/protobuf/struct.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses `json` (must be an object) into a newly allocated Struct; free it
 * with protobuf_c_message_free_unpacked(&s->base, NULL). Returns NULL with
 * a message in err when json is NULL, malformed or not an object. */
Google__Protobuf__Struct *xds_json_to_struct(const char *json, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
