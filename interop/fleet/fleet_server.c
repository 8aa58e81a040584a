#include "interop/fleet/fleet_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/common/json_read.h"
#include "interop/fleet/fleet_net.h"

int io_fleet_server_spawn(const char *bin, const char *dir, const char *name, int port,
                       const char *stats_suffix, const char *const *extra, fleet_server *s) {
  if (bin == NULL || dir == NULL || name == NULL || s == NULL) return -1;
  char port_s[16], log[4200];
  snprintf(port_s, sizeof(port_s), "%d", port);
  snprintf(s->stats, sizeof(s->stats), "%s/%s%s.json", dir, name, stats_suffix ? stats_suffix : "");
  snprintf(log, sizeof(log), "%s/%s.log", dir, name);
  char *argv[40];
  int n = 0;
  argv[n++] = (char *)bin;
  argv[n++] = "--host";
  argv[n++] = s->host;
  argv[n++] = "--port";
  argv[n++] = port_s;
  argv[n++] = "--hostname";
  argv[n++] = (char *)name;
  argv[n++] = "--server-id";
  argv[n++] = (char *)name;
  argv[n++] = "--stats-file";
  argv[n++] = s->stats;
  argv[n++] = "--stats-interval-ms";
  argv[n++] = "50";
  for (int i = 0; extra != NULL && extra[i] != NULL && n < 39; i++) argv[n++] = (char *)extra[i];
  argv[n] = NULL;
  s->p = io_fleet_net_start(s->host, argv, log);
  return s->p == NULL ? -1 : 0;
}

int io_fleet_server_await(fleet_server *s) {
  if (s == NULL || s->p == NULL) return -1;
  char line[128];
  if (io_proc_wait_line(s->p, "listening ", 10000, line, sizeof(line)) != 0) return -1;
  char *colon = strrchr(line, ':');
  s->port = colon ? atoi(colon + 1) : -1;
  return s->port > 0 ? 0 : -1;
}

int io_fleet_server_start(const char *bin, const char *dir, const char *name, int port,
                       const char *stats_suffix, const char *const *extra, fleet_server *s) {
  if (io_fleet_server_spawn(bin, dir, name, port, stats_suffix, extra, s) != 0) return -1;
  return io_fleet_server_await(s);
}

int io_fleet_server_counts(const char *stats_path, long *opened, long *current) {
  json_value *v = stats_path ? io_json_parse_file(stats_path, NULL, 0) : NULL;
  if (opened) *opened = v ? (long)io_json_get_number(v, "connections_opened", 0) : 0;
  if (current) *current = v ? (long)io_json_get_number(v, "connections_current", 0) : 0;
  int ok = v != NULL;
  io_json_free(v);
  return ok ? 0 : -1;
}

long io_fleet_server_moved(long opened_a, long current_a, long opened_b, long current_b) {
  long opened = opened_b - opened_a;
  long closed = current_a + opened - current_b;
  return opened + (closed > 0 ? closed : 0);
}

int io_fleet_servers_hold(const fleet_server *servers, int n, const long *held) {
  if (servers == NULL || held == NULL) return 0;
  for (int i = 0; i < n; i++) {
    long opened, current = 0;
    if (servers[i].p && io_fleet_server_counts(servers[i].stats, &opened, &current) != 0) return 0;
    if (current != held[i]) return 0;
  }
  return 1;
}
