/*
 * ap_decode_limit: a walk over the wire format (varint tags; wire types 0,
 * 1, 2 and 5; groups are refused, as protobuf-c does) that adds up what
 * unpack would allocate, recursing into the submessages the descriptors
 * name. The costs below follow protobuf-c 1.4's unpack: one allocation per
 * message struct, string, bytes field, unknown field's data and repeated
 * field's array, and a scan record per field on the wire.
 */
#include "policy/status/ap_decode_limit.h"

enum {
  kAllocOverhead = 16, /* malloc's header and rounding, per allocation */
  kScanRecord = 40,    /* unpack's record of one field on the wire */
  kScanOnStack = 16,   /* records unpack keeps on its stack */
  kMaxDepth = 32       /* the status protos nest 3 deep */
};

/* unpack records the fields of a message in slabs of 16 (on its stack),
 * 32, 64, ...: for `n` fields past the first 16, at most 2n + 32 records
 * in a few allocations. */
static size_t scan_cost(size_t n) {
  if (n <= kScanOnStack) return 0;
  return (2 * n + 32) * kScanRecord + 64 * kAllocOverhead;
}

/* Reads a varint; 0 when it is cut short or longer than 10 bytes. */
static size_t read_varint(const uint8_t *p, size_t left, uint64_t *out) {
  uint64_t v = 0;
  for (size_t i = 0; i < left && i < 10; i++) {
    v |= (uint64_t)(p[i] & 0x7F) << (7 * i);
    if ((p[i] & 0x80) == 0) {
      *out = v;
      return i + 1;
    }
  }
  return 0;
}

/* Bytes one element of a repeated field takes in its array. */
static size_t element_size(const ProtobufCFieldDescriptor *f) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
      return 8;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
      return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
      return sizeof(ProtobufCBinaryData);
    default:
      return 4;
  }
}

/* Elements in a packed run of `len` bytes of scalars; SIZE_MAX if cut. */
static size_t packed_count(const ProtobufCFieldDescriptor *f, const uint8_t *p, size_t len) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_DOUBLE:
      return len % 8 == 0 ? len / 8 : SIZE_MAX;
    case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FLOAT:
      return len % 4 == 0 ? len / 4 : SIZE_MAX;
    default: /* varints: one ends at each byte without the high bit */
      if (len > 0 && (p[len - 1] & 0x80) != 0) return SIZE_MAX;
      size_t n = 0;
      for (size_t i = 0; i < len; i++)
        if ((p[i] & 0x80) == 0) n++;
      return n;
  }
}

/* Adds `n` to *cost; 0 once it passes `limit`. */
static int add(size_t *cost, size_t n, size_t limit) {
  if (n > limit || *cost > limit - n) return 0;
  *cost += n;
  return 1;
}

static int walk(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t len,
                size_t limit, int depth, size_t *cost) {
  if (depth > kMaxDepth) return 0;
  if (!add(cost, desc->sizeof_message + kAllocOverhead, limit)) return 0;
  size_t at = 0, fields = 0;
  while (at < len) {
    fields++;
    uint64_t key = 0;
    size_t used = read_varint(p + at, len - at, &key);
    if (used == 0) return 0;
    at += used;
    const uint32_t wire = (uint32_t)(key & 7);
    const uint64_t number = key >> 3;
    if (number == 0 || number > 0x1FFFFFFF) return 0;
    size_t value_len = 0;
    const uint8_t *value = p + at;
    if (wire == PROTOBUF_C_WIRE_TYPE_VARINT) {
      uint64_t ignored;
      value_len = read_varint(value, len - at, &ignored);
      if (value_len == 0) return 0;
    } else if (wire == PROTOBUF_C_WIRE_TYPE_64BIT) {
      value_len = 8;
    } else if (wire == PROTOBUF_C_WIRE_TYPE_32BIT) {
      value_len = 4;
    } else if (wire == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) {
      uint64_t n = 0;
      used = read_varint(value, len - at, &n);
      if (used == 0 || n > len - at - used) return 0;
      at += used;
      value += used;
      value_len = (size_t)n;
    } else {
      return 0; /* groups and the reserved wire types */
    }
    if (value_len > len - at) return 0;
    at += value_len;
    if (fields > kScanOnStack && !add(cost, 2 * kScanRecord, limit)) return 0;
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(desc, (unsigned)number);
    if (f == NULL) {
      /* Kept as an unknown field: its record (in an array) and a copy of
       * its value with the length prefix (up to 10 bytes). */
      if (!add(cost, sizeof(ProtobufCMessageUnknownField) + value_len + 10 + 2 * kAllocOverhead,
               limit))
        return 0;
      continue;
    }
    const int repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
    if (repeated && wire == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED &&
        f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_BYTES &&
        f->type != PROTOBUF_C_TYPE_MESSAGE) {
      size_t n = packed_count(f, value, value_len);
      if (n == SIZE_MAX || n > limit / element_size(f)) return 0;
      if (!add(cost, n * element_size(f) + kAllocOverhead, limit)) return 0;
      continue;
    }
    if (repeated && !add(cost, element_size(f) + kAllocOverhead, limit)) return 0;
    if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES) {
      if (wire != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) return 0;
      if (!add(cost, value_len + 1 + kAllocOverhead, limit)) return 0;
    } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
      if (wire != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) return 0;
      if (!walk((const ProtobufCMessageDescriptor *)f->descriptor, value, value_len, limit,
                depth + 1, cost))
        return 0;
    }
  }
  /* The records' fixed part (the per-field part was counted on the way). */
  if (fields > kScanOnStack && !add(cost, scan_cost(fields) - 2 * kScanRecord * fields, limit))
    return 0;
  return 1;
}

size_t ap_decode_cost(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                      size_t len, size_t limit) {
  if (desc == NULL || (data == NULL && len > 0)) return SIZE_MAX;
  size_t cost = 0;
  return walk(desc, data, len, limit, 0, &cost) ? cost : SIZE_MAX;
}
