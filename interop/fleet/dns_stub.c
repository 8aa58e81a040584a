#define _GNU_SOURCE
#include "interop/fleet/dns_stub.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct dns_stub {
  int fd;
  char name[256];
  pthread_t thread;
  atomic_bool stop;
  atomic_long queries;
  pthread_mutex_t mu;
  uint32_t addrs[DNS_STUB_MAX_ADDRS]; /* network byte order */
  size_t n_addrs;
};

/* Decodes the question name at msg[off] into dotted text; returns the
 * offset after it, or -1 if malformed (compression is not expected in a
 * question). */
static int read_qname(const uint8_t *msg, int len, int off, char *out, size_t out_len) {
  size_t o = 0;
  while (off < len) {
    int l = msg[off++];
    if (l == 0) {
      if (o == 0 && out_len > 0) out[0] = '\0';
      else if (o > 0) out[o - 1] = '\0';
      return off;
    }
    if ((l & 0xC0) != 0 || off + l > len || o + (size_t)l + 1 >= out_len) return -1;
    memcpy(out + o, msg + off, (size_t)l);
    o += (size_t)l;
    out[o++] = '.';
    off += l;
  }
  return -1;
}

static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static void answer(dns_stub *d, const uint8_t *q, int qlen, struct sockaddr_in *from,
                   socklen_t fromlen) {
  if (qlen < 12) return;
  int qdcount = (q[4] << 8) | q[5];
  if (qdcount != 1) return;
  char qname[256];
  int end = read_qname(q, qlen, 12, qname, sizeof(qname));
  if (end < 0 || end + 4 > qlen) return;
  int qtype = (q[end] << 8) | q[end + 1];
  int question_len = end + 4 - 12;
  uint8_t resp[12 + 260 + DNS_STUB_MAX_ADDRS * 16];
  memcpy(resp, q, 2); /* id */
  int known = strcasecmp(qname, d->name) == 0;
  uint16_t flags = (uint16_t)(0x8000 | 0x0400 | (q[2] & 0x01) << 8 | 0x0080); /* QR AA RD RA */
  if (!known) flags |= 3;                                                   /* NXDOMAIN */
  put16(resp + 2, flags);
  put16(resp + 4, 1);
  put16(resp + 8, 0);
  put16(resp + 10, 0);
  memcpy(resp + 12, q + 12, (size_t)question_len);
  int off = 12 + question_len;
  uint16_t ancount = 0;
  if (known && qtype == 1) {
    atomic_fetch_add(&d->queries, 1);
    pthread_mutex_lock(&d->mu);
    for (size_t i = 0; i < d->n_addrs; i++) {
      put16(resp + off, 0xC00C); /* name: pointer to the question */
      put16(resp + off + 2, 1);  /* A */
      put16(resp + off + 4, 1);  /* IN */
      memset(resp + off + 6, 0, 4); /* TTL 0: always ask again */
      put16(resp + off + 10, 4);
      memcpy(resp + off + 12, &d->addrs[i], 4);
      off += 16;
      ancount++;
    }
    pthread_mutex_unlock(&d->mu);
  }
  put16(resp + 6, ancount);
  sendto(d->fd, resp, (size_t)off, 0, (struct sockaddr *)from, fromlen);
}

static void *serve(void *arg) {
  dns_stub *d = arg;
  uint8_t buf[1500];
  while (!atomic_load(&d->stop)) {
    struct pollfd pfd = {d->fd, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    struct sockaddr_in from;
    socklen_t fromlen = sizeof(from);
    ssize_t n = recvfrom(d->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fromlen);
    if (n > 0) answer(d, buf, (int)n, &from, fromlen);
  }
  return NULL;
}

dns_stub *io_dns_stub_start(const char *name, int *port) {
  if (name == NULL || port == NULL || strlen(name) == 0 || strlen(name) > 200) return NULL;
  dns_stub *d = calloc(1, sizeof(*d));
  if (d == NULL) return NULL;
  snprintf(d->name, sizeof(d->name), "%s", name);
  pthread_mutex_init(&d->mu, NULL);
  d->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  if (d->fd < 0 || bind(d->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
      getsockname(d->fd, (struct sockaddr *)&sa, &len) != 0 ||
      pthread_create(&d->thread, NULL, serve, d) != 0) {
    if (d->fd >= 0) close(d->fd);
    pthread_mutex_destroy(&d->mu);
    free(d);
    return NULL;
  }
  *port = ntohs(sa.sin_port);
  return d;
}

int io_dns_stub_set(dns_stub *d, const char *const *addrs, size_t n) {
  if (d == NULL || (addrs == NULL && n > 0) || n > DNS_STUB_MAX_ADDRS) return -1;
  uint32_t parsed[DNS_STUB_MAX_ADDRS];
  for (size_t i = 0; i < n; i++) {
    struct in_addr a;
    if (addrs[i] == NULL || inet_pton(AF_INET, addrs[i], &a) != 1) return -1;
    parsed[i] = a.s_addr;
  }
  pthread_mutex_lock(&d->mu);
  memcpy(d->addrs, parsed, n * sizeof(uint32_t));
  d->n_addrs = n;
  pthread_mutex_unlock(&d->mu);
  return 0;
}

long io_dns_stub_queries(const dns_stub *d) {
  return d ? atomic_load(&((dns_stub *)d)->queries) : 0;
}

void io_dns_stub_stop(dns_stub *d) {
  if (d == NULL) return;
  atomic_store(&d->stop, true);
  pthread_join(d->thread, NULL);
  close(d->fd);
  pthread_mutex_destroy(&d->mu);
  free(d);
}
