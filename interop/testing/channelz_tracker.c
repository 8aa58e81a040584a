#include "interop/testing/channelz_tracker.h"

#include <stdatomic.h>
#include <stdlib.h>

#include <grpc/grpc.h>
#include <grpc/support/alloc.h>

#include "interop/testing/channelz_json.h"

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

int io_channelz_tracker_sample(channelz_tracker *t) {
  if (t == NULL) return -1;
  /* A socket absent from the previous sample is a new connection: ids are
   * never reused. (Not "above the previous maximum": a connection whose
   * handshake finishes late is listed after one created later.) */
  char *servers = grpc_channelz_get_servers(0);
  if (servers == NULL) return -1;
  int64_t server_id = -1;
  int ok = io_channelz_server_id(servers, &server_id);
  gpr_free(servers);
  if (ok != 0) return -1;
  int64_t *ids = NULL;
  size_t n = 0, cap = 0;
  int64_t start = 0;
  for (int page = 0; page < 1000; page++) {
    char *json = grpc_channelz_get_server_sockets((intptr_t)server_id, (intptr_t)start, 0);
    if (json == NULL) {
      free(ids);
      return -1;
    }
    size_t first = n;
    int end = 0;
    int rc = io_channelz_socket_ids(json, &ids, &n, &cap, &end);
    gpr_free(json);
    if (rc != 0) {
      free(ids);
      return -1;
    }
    if (end) break;
    int64_t page_max = start;
    for (size_t i = first; i < n; i++) {
      if (ids[i] > page_max) page_max = ids[i];
    }
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
