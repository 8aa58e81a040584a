#include "interop/common/pb_buf.h"

#include <stdlib.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>

grpc_byte_buffer *io_pb_buf_pack(const ProtobufCMessage *msg) {
  if (msg == NULL) return NULL;
  size_t len = protobuf_c_message_get_packed_size(msg);
  grpc_slice slice = grpc_slice_malloc(len);
  protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(slice));
  grpc_byte_buffer *buf = grpc_raw_byte_buffer_create(&slice, 1);
  grpc_slice_unref(slice); /* the buffer holds its own reference */
  return buf;
}

ProtobufCMessage *io_pb_buf_unpack(grpc_byte_buffer *buf,
                                const ProtobufCMessageDescriptor *desc) {
  if (buf == NULL || desc == NULL) return NULL;
  grpc_byte_buffer_reader reader;
  if (!grpc_byte_buffer_reader_init(&reader, buf)) return NULL;
  grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
  grpc_byte_buffer_reader_destroy(&reader);
  ProtobufCMessage *msg = protobuf_c_message_unpack(
      desc, NULL, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
  grpc_slice_unref(all);
  return msg;
}
