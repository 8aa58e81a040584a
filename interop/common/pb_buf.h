/* Conversion between protobuf-c messages and gRPC byte buffers. */
#ifndef APERTURE_INTEROP_PB_BUF_H
#define APERTURE_INTEROP_PB_BUF_H

#include <grpc/byte_buffer.h>
#include <protobuf-c/protobuf-c.h>

/* Serialises `msg` into a new byte buffer. Returns NULL when msg is NULL or
 * an allocation fails. The caller owns the buffer (grpc_byte_buffer_destroy). */
grpc_byte_buffer *io_pb_buf_pack(const ProtobufCMessage *msg);

/* Parses `buf` as a message of type `desc`. Returns NULL when buf or desc is
 * NULL or the bytes are not a valid message. The caller owns the result and
 * frees it with protobuf_c_message_free_unpacked(result, NULL). `buf` is not
 * consumed. An empty or absent body parses as the default message only when
 * buf is non-NULL (gRPC delivers a zero-length buffer for empty messages). */
ProtobufCMessage *io_pb_buf_unpack(grpc_byte_buffer *buf,
                                const ProtobufCMessageDescriptor *desc);

#endif
