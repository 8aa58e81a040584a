/* h2_nonreader: frames by hand (RFC 9113), HPACK literals without
 * indexing (RFC 7541 6.2.2), gRPC's length-prefixed message. */
#define _GNU_SOURCE

#include "tests/status/h2_nonreader.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct out {
  uint8_t *buf;
  size_t cap, len;
  int ok;
} out;

static void put(out *o, const void *p, size_t n) {
  if (!o->ok || n > o->cap - o->len) {
    o->ok = 0;
    return;
  }
  memcpy(o->buf + o->len, p, n);
  o->len += n;
}

static void put_u8(out *o, uint8_t b) { put(o, &b, 1); }

static void frame_header(out *o, size_t length, uint8_t type, uint8_t flags, uint32_t stream) {
  uint8_t h[9] = {(uint8_t)(length >> 16), (uint8_t)(length >> 8), (uint8_t)length, type, flags,
                  (uint8_t)(stream >> 24), (uint8_t)(stream >> 16), (uint8_t)(stream >> 8),
                  (uint8_t)stream};
  put(o, h, sizeof h);
}

/* An HPACK string of fewer than 127 bytes, not Huffman-coded. */
static void hpack_string(out *o, const char *s) {
  size_t n = strlen(s);
  if (n >= 127) {
    o->ok = 0;
    return;
  }
  put_u8(o, (uint8_t)n);
  put(o, s, n);
}

static size_t header_block(out *o, const char *path) {
  const char *const fields[][2] = {
      {":method", "POST"},         {":scheme", "http"},
      {":path", path},             {":authority", "status"},
      {"content-type", "application/grpc"}, {"te", "trailers"}};
  size_t start = o->len;
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    put_u8(o, 0x00); /* literal without indexing, new name */
    hpack_string(o, fields[i][0]);
    hpack_string(o, fields[i][1]);
  }
  return o->len - start;
}

size_t h2_nonreader_burst(const char *path, const uint8_t *request, size_t len,
                          unsigned streams, uint8_t *buf, size_t cap) {
  if (path == NULL || (request == NULL && len > 0) || buf == NULL || len > 0xFFFFFF - 5) return 0;
  out o = {buf, cap, 0, 1};
  static const char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  put(&o, kPreface, sizeof kPreface - 1);
  frame_header(&o, 0, 0x4, 0x0, 0); /* SETTINGS */
  frame_header(&o, 0, 0x4, 0x1, 0); /* SETTINGS ACK (of the server's) */
  uint8_t block[512];
  out b = {block, sizeof block, 0, 1};
  size_t block_len = header_block(&b, path);
  if (!b.ok) return 0;
  for (unsigned i = 0; i < streams; i++) {
    const uint32_t stream = 2 * i + 1;
    frame_header(&o, block_len, 0x1, 0x4, stream); /* HEADERS, END_HEADERS */
    put(&o, block, block_len);
    frame_header(&o, 5 + len, 0x0, 0x1, stream); /* DATA, END_STREAM */
    uint8_t prefix[5] = {0, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                         (uint8_t)len};
    put(&o, prefix, sizeof prefix);
    put(&o, request, len);
  }
  return o.ok ? o.len : 0;
}

int h2_nonreader_connect(int port, const uint8_t *bytes, size_t len) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  size_t sent = 0;
  while (sent < len) {
    ssize_t n = send(fd, bytes + sent, len - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return -1;
    }
    sent += (size_t)n;
  }
  return fd;
}

int h2_nonreader_closed_by_server(int fd) {
  char drop[65536];
  for (;;) {
    ssize_t n = recv(fd, drop, sizeof drop, MSG_DONTWAIT);
    if (n > 0) continue;
    if (n == 0) return 1;
    if (errno == EINTR) continue;
    return errno != EAGAIN && errno != EWOULDBLOCK;
  }
}
