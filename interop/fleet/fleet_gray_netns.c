#define _GNU_SOURCE
#include "interop/fleet/fleet_gray_netns.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interop/common/proc.h"

static const char *ip_command(void) {
  static const char *const kPaths[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"};
  for (size_t i = 0; i < sizeof(kPaths) / sizeof(kPaths[0]); i++) {
    if (access(kPaths[i], X_OK) == 0) return kPaths[i];
  }
  return NULL;
}

/* Runs ip with args (NULL terminated, at most 14), its first stdout line
 * into out (when not NULL). Returns 0 when it exited 0. */
static int run_ip(const char *const *args, char *out, size_t out_len, char *err, size_t err_len) {
  const char *ip = ip_command();
  if (ip == NULL) {
    snprintf(err, err_len, "no ip command (iproute2)");
    return -1;
  }
  char *argv[16];
  int n = 0;
  argv[n++] = (char *)ip;
  for (int i = 0; args[i] != NULL && n < 15; i++) argv[n++] = (char *)args[i];
  argv[n] = NULL;
  if (out != NULL && out_len > 0) out[0] = '\0';
  proc *p = io_proc_start(argv, "/dev/null");
  if (p == NULL) {
    snprintf(err, err_len, "cannot start %s", ip);
    return -1;
  }
  if (out != NULL) (void)io_proc_wait_line(p, "", 5000, out, out_len);
  int status = 0;
  if (io_proc_wait(p, 5000, &status) != 0) status = -1;
  io_proc_stop(p, 1000);
  if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char cmd[200] = "ip";
    size_t at = 2;
    for (int i = 0; args[i] != NULL && at < sizeof(cmd); i++)
      at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, " %s", args[i]);
    snprintf(err, err_len, "'%s' failed", cmd);
    return -1;
  }
  return 0;
}

int io_fleet_gray_netns_of(int pid, char *ns, size_t ns_len, char *err, size_t err_len) {
  if (ns == NULL || ns_len == 0 || err == NULL) return -1;
  char pid_s[16], line[128];
  snprintf(pid_s, sizeof(pid_s), "%d", pid);
  const char *args[] = {"netns", "identify", pid_s, NULL};
  if (run_ip(args, line, sizeof(line), err, err_len) != 0) return -1;
  line[strcspn(line, " \t\r\n")] = '\0'; /* the first name, if several */
  if (line[0] == '\0' || strlen(line) >= ns_len) {
    snprintf(err, err_len, "process %d runs in no named network namespace", pid);
    return -1;
  }
  snprintf(ns, ns_len, "%s", line);
  return 0;
}

int io_fleet_gray_dev_of(const char *ns, const char *ip, char *dev, size_t dev_len, char *err,
                         size_t err_len) {
  if (ns == NULL || ip == NULL || dev == NULL || dev_len == 0 || err == NULL) return -1;
  char to[64], line[512];
  snprintf(to, sizeof(to), "%s/32", ip);
  const char *args[] = {"-n", ns, "-o", "-4", "addr", "show", "to", to, NULL};
  if (run_ip(args, line, sizeof(line), err, err_len) != 0) return -1;
  /* "2: eth0    inet 198.18.0.11/15 ..." */
  char name[64];
  if (sscanf(line, "%*d: %63s", name) != 1 || strlen(name) >= dev_len) {
    snprintf(err, err_len, "no device holds %s in namespace %s", ip, ns);
    return -1;
  }
  char *at = strchr(name, '@'); /* a veth end: "eth0@if12" */
  if (at) *at = '\0';
  snprintf(dev, dev_len, "%s", name);
  return 0;
}

int io_fleet_gray_link(const char *ns, const char *dev, int up, char *err, size_t err_len) {
  if (ns == NULL || dev == NULL || err == NULL) return -1;
  const char *args[] = {"-n", ns, "link", "set", dev, up ? "up" : "down", NULL};
  return run_ip(args, NULL, 0, err, err_len);
}

int io_fleet_gray_blackhole(const char *ns, const char *ip, int add, char *err, size_t err_len) {
  if (ns == NULL || ip == NULL || err == NULL) return -1;
  char to[64];
  snprintf(to, sizeof(to), "%s/32", ip);
  const char *args[] = {"-n", ns, "route", add ? "add" : "del", "blackhole", to, NULL};
  return run_ip(args, NULL, 0, err, err_len);
}
