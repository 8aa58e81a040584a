#include "interop/testing/channelz_tracker.h"

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
  /* sampler thread only: the socket ids of the previous sample, sorted */
  int64_t *seen;
  size_t n_seen;
};

channelz_tracker *io_channelz_tracker_create(void) {
  channelz_tracker *t = calloc(1, sizeof(*t));
  return t;
}

void io_channelz_tracker_destroy(channelz_tracker *t) {
  if (t == NULL) return;
  free(t->seen);
  free(t);
}

static int cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Appends `id` to the growable array; -1 when out of memory. */
static int push_id(int64_t **ids, size_t *n, size_t *cap, int64_t id) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    int64_t *grown = realloc(*ids, c * sizeof(*grown));
    if (grown == NULL) return -1;
    *ids = grown;
    *cap = c;
  }
  (*ids)[(*n)++] = id;
  return 0;
}

int io_channelz_tracker_sample(channelz_tracker *t) {
  if (t == NULL) return -1;
  /* A socket absent from the previous sample is a new connection: ids are
   * never reused. (Not "above the previous maximum": a connection whose
   * handshake finishes late is listed after one created later.) */
  char *servers = grpc_channelz_get_servers(0);
  if (servers == NULL) return -1;
  int64_t server_id = -1;
  const char *ok = next_id(servers, "\"serverId\"", &server_id);
  gpr_free(servers);
  if (ok == NULL) return -1;
  int64_t *ids = NULL;
  size_t n = 0, cap = 0;
  int64_t start = 0;
  for (int page = 0; page < 1000; page++) {
    char *json = grpc_channelz_get_server_sockets((intptr_t)server_id, (intptr_t)start, 0);
    if (json == NULL) {
      free(ids);
      return -1;
    }
    int64_t id, page_max = start;
    const char *p = json;
    while ((p = next_id(p, "\"socketId\"", &id)) != NULL) {
      if (push_id(&ids, &n, &cap, id) != 0) {
        gpr_free(json);
        free(ids);
        return -1;
      }
      if (id > page_max) page_max = id;
    }
    int end = strstr(json, "\"end\"") != NULL;
    gpr_free(json);
    if (end) break;
    start = page_max + 1;
  }
  if (n > 1) qsort(ids, n, sizeof(*ids), cmp_id);
  long fresh = 0;
  for (size_t i = 0; i < n; i++) {
    if (t->n_seen == 0 || bsearch(&ids[i], t->seen, t->n_seen, sizeof(*ids), cmp_id) == NULL) {
      fresh++;
    }
  }
  free(t->seen);
  t->seen = ids;
  t->n_seen = n;
  long count = (long)n;
  atomic_store(&t->current, count);
  if (count > atomic_load(&t->peak)) atomic_store(&t->peak, count);
  atomic_fetch_add(&t->opened, fresh);
  return 0;
}

long io_channelz_tracker_current(const channelz_tracker *t) {
  return t ? atomic_load(&((channelz_tracker *)t)->current) : 0;
}
long io_channelz_tracker_peak(const channelz_tracker *t) {
  return t ? atomic_load(&((channelz_tracker *)t)->peak) : 0;
}
long io_channelz_tracker_opened(const channelz_tracker *t) {
  return t ? atomic_load(&((channelz_tracker *)t)->opened) : 0;
}
