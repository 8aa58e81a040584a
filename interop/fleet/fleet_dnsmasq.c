#define _GNU_SOURCE
#include "interop/fleet/fleet_dnsmasq.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct fleet_dnsmasq {
  proc *p;
  char name[256];
  char hosts[4200]; /* the hosts file it reads */
  char log[4200];   /* its --log-facility */
  long scanned;     /* bytes of the log counted so far (whole lines) */
  long rereads;     /* "read HOSTS - " lines so far */
  long queries;     /* "query[A] NAME from" lines so far */
};

static char g_dir[4096];
static int g_seq;

void io_fleet_dnsmasq_set_dir(const char *dir) {
  snprintf(g_dir, sizeof(g_dir), "%s", dir ? dir : "");
}

int io_fleet_dnsmasq_find(char *out, size_t len) {
  char path[4096];
  const char *env = getenv("PATH");
  snprintf(path, sizeof(path), "%s:/usr/sbin:/usr/bin:/sbin", env ? env : "");
  for (char *save = NULL, *dir = strtok_r(path, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    if (dir[0] == '\0') continue;
    int n = snprintf(out, len, "%s/dnsmasq", dir);
    if (n > 0 && (size_t)n < len && access(out, X_OK) == 0) return 0;
  }
  return -1;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Counts the log's new whole lines into d->rereads and d->queries, so
 * that a long run's log is read once, not once per poll. */
static void scan_log(fleet_dnsmasq *d) {
  FILE *f = fopen(d->log, "r");
  if (f == NULL) return;
  char reread[4300], query[300], line[1024];
  snprintf(reread, sizeof(reread), "read %s - ", d->hosts);
  snprintf(query, sizeof(query), "query[A] %s from", d->name);
  if (fseek(f, d->scanned, SEEK_SET) == 0) {
    while (fgets(line, sizeof(line), f) != NULL) {
      size_t n = strlen(line);
      if (n == 0 || line[n - 1] != '\n') {
        if (n == sizeof(line) - 1) { /* a long line: count its start, skip the rest */
          d->scanned += (long)n;
          continue;
        }
        break; /* a line still being written: next time */
      }
      d->scanned += (long)n;
      if (strstr(line, reread) != NULL) d->rereads++;
      if (strstr(line, query) != NULL) d->queries++;
    }
  }
  fclose(f);
}

static long rereads(fleet_dnsmasq *d) {
  scan_log(d);
  return d->rereads;
}

/* A port free for UDP and TCP on `listen` now; 0 when none was found. */
static int free_port(const char *listen) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  if (inet_pton(AF_INET, listen, &a.sin_addr) != 1) return 0;
  int u = socket(AF_INET, SOCK_DGRAM, 0);
  if (u < 0) return 0;
  socklen_t alen = sizeof(a);
  int port = 0;
  if (bind(u, (struct sockaddr *)&a, sizeof(a)) == 0 &&
      getsockname(u, (struct sockaddr *)&a, &alen) == 0) {
    port = ntohs(a.sin_port);
    int t = socket(AF_INET, SOCK_STREAM, 0);
    if (t < 0 || bind(t, (struct sockaddr *)&a, sizeof(a)) != 0) port = 0;
    if (t >= 0) close(t);
  }
  close(u);
  return port;
}

static int write_hosts(const char *path, const char *name, const char *const *hosts, size_t n) {
  char tmp[4300];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (f == NULL) return -1;
  for (size_t i = 0; i < n; i++) fprintf(f, "%s %s\n", hosts[i], name);
  if (fclose(f) != 0) return -1;
  return rename(tmp, path);
}

/* One attempt at port; 0 when it runs and has read its hosts file, 1 when
 * it exited (the port may have been taken), -1 otherwise. */
static int try_start(fleet_dnsmasq *d, const char *bin, const char *listen, int port,
                     fleet_dnsmasq_launch launch) {
  char a_hosts[4300], a_local[300], a_port[32], a_listen[64], a_log[4300];
  snprintf(a_hosts, sizeof(a_hosts), "--addn-hosts=%s", d->hosts);
  snprintf(a_local, sizeof(a_local), "--local=/%s/", d->name);
  snprintf(a_port, sizeof(a_port), "--port=%d", port);
  snprintf(a_listen, sizeof(a_listen), "--listen-address=%s", listen);
  snprintf(a_log, sizeof(a_log), "--log-facility=%s", d->log);
  char *argv[] = {(char *)bin, "-k", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
                  a_hosts, a_local, a_port, a_listen, "--bind-interfaces", "--local-ttl=0",
                  "--no-negcache", "--log-queries", a_log, "--pid-file=", "--user=", "--group=", NULL};
  unlink(d->log);
  d->scanned = d->rereads = d->queries = 0;
  d->p = launch(argv, d->log);
  if (d->p == NULL) return -1;
  /* Ready within milliseconds when the machine is idle; 20 s leaves room
   * for a build or other fleets loading both cores. */
  for (int t = 0; t < 1000; t++) {
    if (rereads(d) > 0) return 0;
    if (io_proc_wait(d->p, 0, NULL) == 0) {
      io_proc_stop(d->p, 0);
      d->p = NULL;
      return 1;
    }
    sleep_ms(20);
  }
  io_proc_stop(d->p, 1000);
  d->p = NULL;
  return -1;
}

fleet_dnsmasq *io_fleet_dnsmasq_start(const char *name, const char *listen, int port,
                                      fleet_dnsmasq_launch launch, char *server, size_t len) {
  if (name == NULL || name[0] == '\0' || strlen(name) > 200 || listen == NULL || server == NULL ||
      port < 0 || port > 65535)
    return NULL;
  char bin[4096];
  if (io_fleet_dnsmasq_find(bin, sizeof(bin)) != 0) {
    fprintf(stderr, "fleet: dnsmasq not found (install Debian's dnsmasq-base; bazel/setup.sh does): "
                    "the DNS scenarios need it\n");
    return NULL;
  }
  fleet_dnsmasq *d = calloc(1, sizeof(*d));
  if (d == NULL) return NULL;
  snprintf(d->name, sizeof(d->name), "%s", name);
  const char *tmp = getenv("TMPDIR");
  const char *dir = g_dir[0] ? g_dir : (tmp ? tmp : "/tmp");
  int seq = __atomic_fetch_add(&g_seq, 1, __ATOMIC_RELAXED);
  snprintf(d->hosts, sizeof(d->hosts), "%s/dnsmasq-%d-%d.hosts", dir, (int)getpid(), seq);
  snprintf(d->log, sizeof(d->log), "%s/dnsmasq-%d-%d.log", dir, (int)getpid(), seq);
  if (write_hosts(d->hosts, name, NULL, 0) != 0) {
    fprintf(stderr, "fleet: cannot write %s: %s\n", d->hosts, strerror(errno));
    free(d);
    return NULL;
  }
  int rc = -1, p = port;
  for (int attempt = 0; attempt < 20; attempt++) {
    p = port ? port : free_port(listen);
    /* The UDP port the kernel drew is taken for TCP (the fleets' own
     * connections use the same range): draw again. */
    if (p == 0) continue;
    rc = try_start(d, bin, listen, p, launch ? launch : io_proc_start);
    if (rc != 1 || port != 0) break;
  }
  if (rc != 0) {
    fprintf(stderr, "fleet: dnsmasq did not start on %s:%d (%s; see %s)\n", listen, p,
            p == 0 ? "no port free for both UDP and TCP" :
            rc == 1 ? "it exited" : "not ready in 20 s", d->log);
    free(d);
    return NULL;
  }
  snprintf(server, len, "%s:%d", listen, p);
  return d;
}

int io_fleet_dnsmasq_set(fleet_dnsmasq *d, const char *const *hosts, size_t n) {
  if (d == NULL || d->p == NULL || (hosts == NULL && n > 0)) return -1;
  for (size_t i = 0; i < n; i++) {
    struct in_addr a;
    if (hosts[i] == NULL || inet_pton(AF_INET, hosts[i], &a) != 1) return -1;
  }
  long before = rereads(d);
  if (write_hosts(d->hosts, d->name, hosts, n) != 0) return -1;
  if (io_proc_signal(d->p, SIGHUP) != 0) return -1;
  for (int t = 0; t < 400; t++) { /* 2 s */
    if (rereads(d) > before) return 0;
    sleep_ms(5);
  }
  return -1;
}

long io_fleet_dnsmasq_queries(const fleet_dnsmasq *d) {
  if (d == NULL) return 0;
  scan_log((fleet_dnsmasq *)d); /* counts only: the log is the state */
  return d->queries;
}

void io_fleet_dnsmasq_stop(fleet_dnsmasq *d) {
  if (d == NULL) return;
  if (d->p != NULL) io_proc_stop(d->p, 2000);
  free(d);
}
