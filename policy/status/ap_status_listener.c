/*
 * ap_status_listener: getaddrinfo + bind + listen, then a thread that
 * polls the listening sockets (and a pipe that tells it to stop), accepts,
 * and either closes the connection (at the cap) or records it and hands it
 * to gRPC. The connection table is guarded by `mu`, which only this thread
 * and callers of ap_status_listener_open_connections() take.
 */
#define _GNU_SOURCE

#include "policy/status/ap_status_listener.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>

enum { kMaxListeners = 8 };

typedef struct connection {
  int fd;
  dev_t dev;
  ino_t ino;
} connection;

struct ap_status_listener {
  int fds[kMaxListeners];
  size_t nfds;
  int wake[2]; /* written once to stop the thread */
  pthread_t thread;
  int started;
  grpc_server *server;
  grpc_server_credentials *creds;
  pthread_mutex_t mu;
  connection *conns; /* handed to gRPC, possibly closed since */
  size_t nconns;
  unsigned cap;
  size_t refused;
};

/* "host:port" or "[host]:port" into host and port; 0 when malformed. */
static int split_address(const char *address, char *host, size_t host_cap, char *port,
                         size_t port_cap) {
  const char *colon;
  size_t host_len;
  if (address[0] == '[') {
    const char *close = strchr(address, ']');
    if (close == NULL || close[1] != ':') return 0;
    host_len = (size_t)(close - address - 1);
    memcpy(host, address + 1, host_len < host_cap ? host_len : 0);
    colon = close + 1;
  } else {
    colon = strrchr(address, ':');
    if (colon == NULL) return 0;
    host_len = (size_t)(colon - address);
    if (memchr(address, ':', host_len) != NULL) return 0; /* IPv6 needs brackets */
    memcpy(host, address, host_len < host_cap ? host_len : 0);
  }
  if (host_len == 0 || host_len >= host_cap) return 0;
  host[host_len] = '\0';
  const char *digits = colon + 1;
  size_t n = strlen(digits);
  if (n == 0 || n >= port_cap || n > 5 || strspn(digits, "0123456789") != n || atoi(digits) > 65535)
    return 0;
  memcpy(port, digits, n + 1);
  return 1;
}

/* A listening socket on `ai` with port `port` (network order; 0 = any),
 * or -1. No SO_REUSEPORT: a busy port must fail, not share the queries of
 * two processes' status servers. */
static int listen_on(const struct addrinfo *ai, uint16_t port) {
  struct sockaddr_storage sa;
  if (ai->ai_addrlen > sizeof sa) return -1;
  memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
  if (sa.ss_family == AF_INET) {
    if (port != 0) ((struct sockaddr_in *)&sa)->sin_port = port;
  } else if (sa.ss_family == AF_INET6) {
    if (port != 0) ((struct sockaddr_in6 *)&sa)->sin6_port = port;
  } else {
    return -1;
  }
  int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  /* The IPv6 wildcard takes IPv4 too, as gRPC's own listener does. */
  if (sa.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (bind(fd, (struct sockaddr *)&sa, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static uint16_t bound_port(int fd) {
  struct sockaddr_storage sa;
  socklen_t len = sizeof sa;
  if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0) return 0;
  if (sa.ss_family == AF_INET) return ((struct sockaddr_in *)&sa)->sin_port;
  if (sa.ss_family == AF_INET6) return ((struct sockaddr_in6 *)&sa)->sin6_port;
  return 0;
}

int ap_status_listener_open(const char *address, ap_status_listener **out, int *port,
                            ap_error *err) {
  if (out == NULL || port == NULL || address == NULL)
    return ap_error_set(err, AP_EINVAL, "ap_status_listener_open: NULL argument");
  *out = NULL;
  char host[256], service[8];
  if (!split_address(address, host, sizeof host, service, sizeof service))
    return ap_error_set(err, AP_EUNAVAIL,
                        "cannot listen on \"%.200s\" (want host:port or [v6]:port)", address);
  struct addrinfo hints, *found = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  int gai = getaddrinfo(host, service, &hints, &found);
  if (gai != 0)
    return ap_error_set(err, AP_EUNAVAIL, "cannot listen on \"%.200s\": %s", address,
                        gai_strerror(gai));
  ap_status_listener *l = calloc(1, sizeof *l);
  if (l == NULL) {
    freeaddrinfo(found);
    return ap_error_set(err, AP_ENOMEM, "ap_status_listener_open: out of memory");
  }
  l->wake[0] = l->wake[1] = -1;
  pthread_mutex_init(&l->mu, NULL);
  uint16_t chosen = 0; /* the first socket's port, for the others */
  int first_errno = 0;
  for (struct addrinfo *ai = found; ai != NULL && l->nfds < kMaxListeners; ai = ai->ai_next) {
    int fd = listen_on(ai, chosen);
    if (fd < 0) {
      if (first_errno == 0) first_errno = errno;
      continue;
    }
    if (chosen == 0) chosen = bound_port(fd);
    l->fds[l->nfds++] = fd;
  }
  freeaddrinfo(found);
  if (l->nfds == 0 || pipe2(l->wake, O_CLOEXEC) != 0) {
    int e = l->nfds == 0 ? first_errno : errno;
    ap_status_listener_close(l);
    return ap_error_set(err, AP_EUNAVAIL, "cannot listen on \"%.200s\": %s", address,
                        strerror(e));
  }
  *port = (int)ntohs(chosen);
  *out = l;
  return AP_OK;
}

/* Drops the connections gRPC has closed: their descriptor is gone or now
 * names another file. Caller holds l->mu. */
static void prune_locked(ap_status_listener *l) {
  for (size_t i = 0; i < l->nconns;) {
    struct stat st;
    const connection *c = &l->conns[i];
    if (fstat(c->fd, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino) {
      i++;
    } else {
      l->conns[i] = l->conns[--l->nconns];
    }
  }
}

/* Records `fd` when there is room; returns 0 at the cap. */
static int admit(ap_status_listener *l, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  pthread_mutex_lock(&l->mu);
  prune_locked(l);
  int room = l->nconns < l->cap;
  if (room) {
    l->conns[l->nconns].fd = fd;
    l->conns[l->nconns].dev = st.st_dev;
    l->conns[l->nconns].ino = st.st_ino;
    l->nconns++;
  } else {
    l->refused++;
  }
  pthread_mutex_unlock(&l->mu);
  return room;
}

static void accept_all(ap_status_listener *l, int listen_fd) {
  for (;;) {
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return; /* EAGAIN, or out of descriptors: poll again */
    }
    if (!admit(l, fd)) {
      close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* From here the connection is gRPC's: it closes the descriptor. */
    grpc_server_add_channel_from_fd(l->server, fd, l->creds);
  }
}

static void *accept_loop(void *arg) {
  ap_status_listener *l = arg;
  struct pollfd pfds[kMaxListeners + 1];
  for (;;) {
    for (size_t i = 0; i < l->nfds; i++) pfds[i] = (struct pollfd){l->fds[i], POLLIN, 0};
    pfds[l->nfds] = (struct pollfd){l->wake[0], POLLIN, 0};
    if (poll(pfds, l->nfds + 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pfds[l->nfds].revents != 0) break;
    for (size_t i = 0; i < l->nfds; i++)
      if (pfds[i].revents != 0) accept_all(l, l->fds[i]);
  }
  return NULL;
}

int ap_status_listener_start(ap_status_listener *l, grpc_server *server,
                             unsigned max_connections, ap_error *err) {
  if (l == NULL || server == NULL || max_connections == 0)
    return ap_error_set(err, AP_EINVAL, "ap_status_listener_start: %s",
                        max_connections == 0 ? "max_connections is 0" : "NULL argument");
  l->conns = calloc(max_connections, sizeof *l->conns);
  l->creds = grpc_insecure_server_credentials_create();
  if (l->conns == NULL || l->creds == NULL)
    return ap_error_set(err, AP_ENOMEM, "ap_status_listener_start: out of memory");
  l->server = server;
  l->cap = max_connections;
  if (pthread_create(&l->thread, NULL, accept_loop, l) != 0)
    return ap_error_set(err, AP_EINTERNAL, "ap_status_listener_start: cannot create its thread");
  l->started = 1;
  return AP_OK;
}

void ap_status_listener_close(ap_status_listener *l) {
  if (l == NULL) return;
  if (l->started) {
    const char stop = 1;
    while (write(l->wake[1], &stop, 1) < 0 && errno == EINTR) {
    }
    pthread_join(l->thread, NULL);
  }
  for (size_t i = 0; i < l->nfds; i++) close(l->fds[i]);
  if (l->wake[0] >= 0) close(l->wake[0]);
  if (l->wake[1] >= 0) close(l->wake[1]);
  if (l->creds != NULL) grpc_server_credentials_release(l->creds);
  pthread_mutex_destroy(&l->mu);
  free(l->conns);
  free(l);
}

size_t ap_status_listener_open_connections(ap_status_listener *l) {
  if (l == NULL || l->conns == NULL) return 0;
  pthread_mutex_lock(&l->mu);
  prune_locked(l);
  size_t n = l->nconns;
  pthread_mutex_unlock(&l->mu);
  return n;
}

size_t ap_status_listener_refused(ap_status_listener *l) {
  if (l == NULL || l->conns == NULL) return 0;
  pthread_mutex_lock(&l->mu);
  size_t n = l->refused;
  pthread_mutex_unlock(&l->mu);
  return n;
}
