#define _GNU_SOURCE
#include "interop/common/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHILDREN 256

struct proc {
  pid_t pid;
  int out_fd;
  int reaped;
  int status;
  char buf[4096];
  size_t buf_len;
  int slot;
};

/* Registry read by io_proc_kill_all (possibly in a signal handler). */
static volatile sig_atomic_t g_children[MAX_CHILDREN];

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

proc *io_proc_start(char *const argv[], const char *stderr_path) {
  if (argv == NULL || argv[0] == NULL) return NULL;
  int slot = -1;
  for (int i = 0; i < MAX_CHILDREN; i++) {
    if (g_children[i] == 0) {
      slot = i;
      break;
    }
  }
  if (slot < 0) {
    fprintf(stderr, "proc: too many children\n");
    return NULL;
  }
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return NULL;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return NULL;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* parent already gone */
    dup2(pipefd[1], STDOUT_FILENO);
    if (stderr_path) {
      int fd = open(stderr_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) dup2(fd, STDERR_FILENO);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execv(argv[0], argv);
    fprintf(stderr, "proc: cannot exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid); /* also from the parent: no race with an early signal */
  close(pipefd[1]);
  proc *p = calloc(1, sizeof(*p));
  if (p == NULL) {
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(pipefd[0]);
    return NULL;
  }
  p->pid = pid;
  p->out_fd = pipefd[0];
  p->slot = slot;
  g_children[slot] = pid;
  return p;
}

int io_proc_wait_line(proc *p, const char *prefix, int timeout_ms, char *out, size_t out_len) {
  if (p == NULL || prefix == NULL || out == NULL || out_len == 0) return -1;
  int64_t deadline = mono_ms() + timeout_ms;
  size_t plen = strlen(prefix);
  for (;;) {
    char *nl;
    while ((nl = memchr(p->buf, '\n', p->buf_len)) != NULL) {
      size_t line_len = (size_t)(nl - p->buf);
      int match = line_len >= plen && memcmp(p->buf, prefix, plen) == 0;
      if (match) {
        size_t n = line_len - plen;
        if (n >= out_len) n = out_len - 1;
        memcpy(out, p->buf + plen, n);
        out[n] = '\0';
      }
      memmove(p->buf, nl + 1, p->buf_len - line_len - 1);
      p->buf_len -= line_len + 1;
      if (match) return 0;
    }
    if (p->buf_len == sizeof(p->buf)) p->buf_len = 0; /* overlong line: drop */
    int64_t left = deadline - mono_ms();
    if (left <= 0) return -1;
    struct pollfd pfd = {p->out_fd, POLLIN, 0};
    int r = poll(&pfd, 1, (int)left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    ssize_t got = read(p->out_fd, p->buf + p->buf_len, sizeof(p->buf) - p->buf_len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p->buf_len += (size_t)got;
  }
}

pid_t io_proc_pid(const proc *p) { return p ? p->pid : -1; }

int io_proc_signal(proc *p, int sig) {
  if (p == NULL || p->reaped) return -1;
  return kill(-p->pid, sig);
}

int io_proc_wait(proc *p, int timeout_ms, int *status) {
  if (p == NULL) return -1;
  int64_t deadline = mono_ms() + timeout_ms;
  while (!p->reaped) {
    pid_t r = waitpid(p->pid, &p->status, WNOHANG);
    if (r == p->pid) {
      p->reaped = 1;
      g_children[p->slot] = 0;
      break;
    }
    if (r < 0 && errno != EINTR) return -1;
    if (mono_ms() >= deadline) return -1;
    struct timespec ts = {0, 5000000L};
    nanosleep(&ts, NULL);
  }
  if (status) *status = p->status;
  return 0;
}

int io_proc_stop(proc *p, int grace_ms) {
  if (p == NULL) return -1;
  int status = 0;
  if (!p->reaped) {
    io_proc_signal(p, SIGTERM);
    if (io_proc_wait(p, grace_ms, &status) != 0) {
      kill(-p->pid, SIGKILL);
      io_proc_wait(p, 5000, &status);
    }
  } else {
    status = p->status;
  }
  if (!p->reaped) g_children[p->slot] = 0; /* could not reap: forget it anyway */
  else kill(-p->pid, SIGKILL); /* grandchildren left in the group, if any */
  close(p->out_fd);
  free(p);
  return status;
}

void io_proc_kill_all(void) {
  for (int i = 0; i < MAX_CHILDREN; i++) {
    pid_t pid = g_children[i];
    if (pid > 0) kill(-pid, SIGKILL);
  }
}

static int is_exec(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int io_proc_find_binary(const char *argv0, const char *name, char *out, size_t out_len) {
  if (name == NULL || out == NULL || out_len == 0) return -1;
  const char *roots[] = {getenv("RUNFILES_DIR"), getenv("TEST_SRCDIR")};
  for (int i = 0; i < 2; i++) {
    if (roots[i] == NULL) continue;
    snprintf(out, out_len, "%s/aperture/interop/%s", roots[i], name);
    if (is_exec(out)) return 0;
  }
  if (argv0 != NULL) {
    snprintf(out, out_len, "%s.runfiles/aperture/interop/%s", argv0, name);
    if (is_exec(out)) return 0;
    const char *slash = strrchr(argv0, '/');
    if (slash != NULL) {
      snprintf(out, out_len, "%.*s/../%s", (int)(slash - argv0), argv0, name);
      if (is_exec(out)) return 0;
    }
  }
  snprintf(out, out_len, "interop/%s", name); /* cwd = runfiles root under bazel run/test */
  if (is_exec(out)) return 0;
  return -1;
}
