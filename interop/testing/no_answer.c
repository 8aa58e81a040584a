/* A server that accepts TCP connections and never speaks HTTP/2: it reads
 * and discards what clients send and writes nothing, so a gRPC client's
 * connection attempt waits for the server's SETTINGS frame until it times
 * out. The fleet's gray scenario (interop/fleet/fleet_gray.h) puts it on a
 * server's port for a while.
 *
 *   no_answer --port P [--host 127.0.0.1]
 *
 * Binds with SO_REUSEADDR and SO_REUSEPORT (as gRPC's servers do on
 * Linux), so it can share the port of a running server and take over its
 * new connections when that server stops. Prints `listening HOST:PORT`
 * on stdout once listening. Holds at most 1024 connections (later ones
 * are closed at once). SIGTERM/SIGINT close every connection and exit 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "interop/common/flags.h"

#define MAX_CONNS 1024

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static int listen_on(const char *host, long port, int *bound) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
    fprintf(stderr, "flag --host: '%s' is not an IPv4 address\n", host);
    return -1;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
      bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 128) != 0) {
    fprintf(stderr, "no_answer: cannot listen on %s:%ld: %s\n", host, port, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  socklen_t len = sizeof(a);
  getsockname(fd, (struct sockaddr *)&a, &len);
  *bound = ntohs(a.sin_port);
  return fd;
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1";
  long port = -1;
  const flag_spec specs[] = {
      {"port", FLAG_LONG, &port, 0, 65535},
      {"host", FLAG_STRING, &host, 0, 0},
  };
  for (int i = 1; i < argc; i++) {
    int r = io_flag_parse_one(argc, argv, &i, specs, sizeof specs / sizeof specs[0]);
    if (r < 0) return 2;
    if (r == 0) {
      fprintf(stderr, "no_answer: unknown argument '%s'\nusage: no_answer --port P [--host ADDR]\n",
              argv[i]);
      return 2;
    }
  }
  if (port < 0) {
    fprintf(stderr, "flag --port: required\n");
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  int bound = 0;
  int lfd = listen_on(host, port, &bound);
  if (lfd < 0) return 1;
  printf("listening %s:%d\n", host, bound);
  fflush(stdout);

  static struct pollfd fds[MAX_CONNS + 1];
  int n = 1;
  fds[0].fd = lfd;
  fds[0].events = POLLIN;
  long accepted = 0;
  while (!g_stop) {
    if (poll(fds, (nfds_t)n, 100) < 0) continue; /* EINTR: the signal */
    if (fds[0].revents & POLLIN) {
      int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
      if (c >= 0 && n <= MAX_CONNS) {
        fds[n].fd = c;
        fds[n].events = POLLIN;
        fds[n].revents = 0;
        n++;
        accepted++;
      } else if (c >= 0) {
        close(c);
      }
    }
    for (int i = 1; i < n; i++) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t got = read(fds[i].fd, buf, sizeof(buf));
      if (got <= 0) { /* the client closed: forget it */
        close(fds[i].fd);
        fds[i] = fds[--n];
        i--;
      }
    }
  }
  for (int i = 0; i < n; i++) close(fds[i].fd);
  fprintf(stderr, "no_answer: accepted %ld connections\n", accepted);
  return 0;
}
