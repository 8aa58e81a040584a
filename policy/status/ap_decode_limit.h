/*
 * ap_decode_limit: what decoding a message with protobuf-c would cost,
 * found from its bytes before anything is allocated. protobuf-c allocates
 * a whole struct for every submessage, a copy of every string and a record
 * for every unknown field, so a few MiB of tiny messages (a 2-byte empty
 * endpoint, a 2-byte unknown field) would take gigabytes. aperturectl
 * refuses a response whose cost passes its limit instead.
 */
#ifndef AP_DECODE_LIMIT_H
#define AP_DECODE_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes protobuf-c's unpack of the `len` bytes at `data` as a `desc`
 * message would allocate, counted from the wire format and the
 * descriptors alone (every struct, array slot, string and unknown field,
 * each with the allocator's overhead, and the scan records unpack keeps
 * while it works): an upper estimate, reached in one pass over the bytes.
 * Returns SIZE_MAX as soon as the count passes `limit`, and for bytes that
 * are not a well-formed message (unpack refuses most of them; it is
 * lenient on a few, such as field numbers past 2^29-1), or when desc is
 * NULL, or data is NULL with len > 0. */
size_t ap_decode_cost(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                      size_t len, size_t limit);

#ifdef __cplusplus
}
#endif

#endif /* AP_DECODE_LIMIT_H */
