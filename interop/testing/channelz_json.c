#include "interop/testing/channelz_json.h"

#include <stdlib.h>

#include "interop/common/json_read.h"

/* An int64 as channelz renders it: a decimal string (or a plain number). */
static int read_id(const json_value *v, int64_t *out) {
  if (io_json_type_of(v) == JSON_NUMBER) {
    *out = (int64_t)io_json_number(v, 0);
    return 0;
  }
  const char *s = io_json_string(v);
  if (s == NULL) return -1;
  char *end;
  long long id = strtoll(s, &end, 10);
  if (end == s || *end != '\0') return -1;
  *out = (int64_t)id;
  return 0;
}

int io_channelz_server_id(const char *json, int64_t *out) {
  if (json == NULL || out == NULL) return -1;
  json_value *root = io_json_parse(json, NULL, 0);
  if (root == NULL) return -1;
  const json_value *ref = io_json_get(io_json_at(io_json_get(root, "server"), 0), "ref");
  int rc = read_id(io_json_get(ref, "serverId"), out);
  io_json_free(root);
  return rc;
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

int io_channelz_socket_ids(const char *json, int64_t **ids, size_t *n, size_t *cap, int *end) {
  if (json == NULL || ids == NULL || n == NULL || cap == NULL || end == NULL) return -1;
  json_value *root = io_json_parse(json, NULL, 0);
  if (root == NULL) return -1;
  const json_value *refs = io_json_get(root, "socketRef");
  int rc = 0;
  for (size_t i = 0; i < io_json_size(refs) && rc == 0; i++) {
    int64_t id;
    rc = read_id(io_json_get(io_json_at(refs, i), "socketId"), &id);
    if (rc == 0) rc = push_id(ids, n, cap, id);
  }
  /* channelz writes "end": true on the last page and omits it otherwise. */
  *end = io_json_bool(io_json_get(root, "end"), 0);
  io_json_free(root);
  return rc;
}
