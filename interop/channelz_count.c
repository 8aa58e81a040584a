#include "interop/channelz_count.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/grpc.h>
#include <grpc/support/alloc.h>

/* Reads the number in `"key":"123"` (channelz renders int64 as strings)
 * starting at the first occurrence of key at or after `from`. Returns a
 * pointer past the number, or NULL when the key is absent. */
static const char *next_id(const char *from, const char *key, int64_t *out) {
  const char *p = strstr(from, key);
  if (p == NULL) return NULL;
  p += strlen(key);
  while (*p == ' ' || *p == ':' || *p == '"') p++;
  char *end;
  long long v = strtoll(p, &end, 10);
  if (end == p) return NULL;
  *out = (int64_t)v;
  return end;
}

struct channelz_tracker {
  atomic_long current;
  atomic_long peak;
  atomic_long opened;
  int64_t last_max_id; /* sampler thread only */
};

channelz_tracker *channelz_tracker_create(void) {
  channelz_tracker *t = calloc(1, sizeof(*t));
  return t;
}

void channelz_tracker_destroy(channelz_tracker *t) { free(t); }

int channelz_tracker_sample(channelz_tracker *t) {
  if (t == NULL) return -1;
  /* Socket ids come from one process-wide increasing counter, so sockets
   * with an id above the previous sample's maximum are new connections. */
  char *servers = grpc_channelz_get_servers(0);
  if (servers == NULL) return -1;
  int64_t server_id = -1;
  const char *ok = next_id(servers, "\"serverId\"", &server_id);
  gpr_free(servers);
  if (ok == NULL) return -1;
  long count = 0, fresh = 0;
  int64_t max_id = t->last_max_id, start = 0;
  for (int page = 0; page < 1000; page++) {
    char *json = grpc_channelz_get_server_sockets((intptr_t)server_id, (intptr_t)start, 0);
    if (json == NULL) return -1;
    int64_t id, page_max = start;
    const char *p = json;
    while ((p = next_id(p, "\"socketId\"", &id)) != NULL) {
      count++;
      if (id > t->last_max_id) fresh++;
      if (id > max_id) max_id = id;
      if (id > page_max) page_max = id;
    }
    int end = strstr(json, "\"end\"") != NULL;
    gpr_free(json);
    if (end) break;
    start = page_max + 1;
  }
  t->last_max_id = max_id;
  atomic_store(&t->current, count);
  if (count > atomic_load(&t->peak)) atomic_store(&t->peak, count);
  atomic_fetch_add(&t->opened, fresh);
  return 0;
}

long channelz_tracker_current(const channelz_tracker *t) {
  return t ? atomic_load(&((channelz_tracker *)t)->current) : 0;
}
long channelz_tracker_peak(const channelz_tracker *t) {
  return t ? atomic_load(&((channelz_tracker *)t)->peak) : 0;
}
long channelz_tracker_opened(const channelz_tracker *t) {
  return t ? atomic_load(&((channelz_tracker *)t)->opened) : 0;
}
