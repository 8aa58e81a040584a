#include "interop/testing/call_options.h"

#include <stdio.h>
#include <string.h>

#include <grpc/slice.h>

static const char *const kRpcNames[CLIENT_METHODS] = {"UnaryCall", "EmptyCall"};

const char *io_call_options_rpc_name(client_method m) {
  return (int)m >= 0 && m < CLIENT_METHODS ? kRpcNames[m] : "?";
}

void io_call_options_init(call_options *o) {
  memset(o, 0, sizeof *o);
  o->rpcs[0] = CLIENT_UNARY;
  o->n_rpcs = 1;
}

/* The method named by text[0..len), or -1. */
static int rpc_of(const char *text, size_t len) {
  for (int m = 0; m < CLIENT_METHODS; m++)
    if (strlen(kRpcNames[m]) == len && strncmp(text, kRpcNames[m], len) == 0) return m;
  return -1;
}

int io_call_options_set_rpcs(call_options *o, const char *text) {
  if (o == NULL || text == NULL || text[0] == '\0') {
    fprintf(stderr, "flag --rpc: want UnaryCall, EmptyCall or both, comma-separated\n");
    return -1;
  }
  size_t n = 0;
  client_method rpcs[8];
  for (const char *p = text;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    int m = rpc_of(p, len);
    if (m < 0 || n == sizeof rpcs / sizeof rpcs[0]) {
      fprintf(stderr, "flag --rpc: '%.*s' is not UnaryCall or EmptyCall (or too many)\n",
              (int)len, p);
      return -1;
    }
    rpcs[n++] = (client_method)m;
    if (comma == NULL) break;
    p = comma + 1;
  }
  memcpy(o->rpcs, rpcs, sizeof rpcs);
  o->n_rpcs = n;
  return 0;
}

static int legal_key(const char *k, size_t len) {
  if (len == 0 || (len >= 5 && strncmp(k, "grpc-", 5) == 0)) return 0;
  for (size_t i = 0; i < len; i++) {
    char c = k[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
      return 0;
  }
  return 1;
}

static int add_entry(call_options *o, const char *e, size_t len) {
  const char *colon = memchr(e, ':', len);
  if (colon == NULL) {
    fprintf(stderr, "flag --metadata: '%.*s' is not KEY:VALUE or RPC:KEY:VALUE\n", (int)len, e);
    return -1;
  }
  int rpc = -1;
  int first = rpc_of(e, (size_t)(colon - e));
  const char *second = memchr(colon + 1, ':', len - (size_t)(colon + 1 - e));
  if (first >= 0 && second != NULL) { /* RPC:KEY:VALUE */
    rpc = first;
    len -= (size_t)(colon + 1 - e);
    e = colon + 1;
    colon = second;
  }
  size_t klen = (size_t)(colon - e), vlen = len - klen - 1;
  if (!legal_key(e, klen) || klen >= sizeof o->md[0].key) {
    fprintf(stderr, "flag --metadata: key '%.*s' is not a lower-case header name (nor grpc-*)\n",
            (int)klen, e);
    return -1;
  }
  if (vlen >= sizeof o->md[0].value) {
    fprintf(stderr, "flag --metadata: value of '%.*s' is longer than %zu bytes\n", (int)klen, e,
            sizeof o->md[0].value - 1);
    return -1;
  }
  if (o->n_md == CALL_OPTIONS_MAX_METADATA) {
    fprintf(stderr, "flag --metadata: more than %d entries\n", CALL_OPTIONS_MAX_METADATA);
    return -1;
  }
  call_metadata *md = &o->md[o->n_md++];
  md->rpc = rpc;
  memcpy(md->key, e, klen);
  md->key[klen] = '\0';
  memcpy(md->value, colon + 1, vlen);
  md->value[vlen] = '\0';
  return 0;
}

int io_call_options_add_metadata(call_options *o, const char *text) {
  if (o == NULL || text == NULL || text[0] == '\0') {
    fprintf(stderr, "flag --metadata: want KEY:VALUE or RPC:KEY:VALUE\n");
    return -1;
  }
  size_t before = o->n_md;
  for (const char *p = text;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (add_entry(o, p, len) != 0) {
      o->n_md = before;
      return -1;
    }
    if (comma == NULL) break;
    p = comma + 1;
  }
  return 0;
}

int io_call_options_set_unique_metadata(call_options *o, const char *text) {
  const char *colon = (o != NULL && text != NULL) ? strchr(text, ':') : NULL;
  if (colon == NULL) {
    fprintf(stderr, "flag --unique-metadata: want KEY:PREFIX\n");
    return -1;
  }
  size_t klen = (size_t)(colon - text), plen = strlen(colon + 1);
  if (!legal_key(text, klen) || klen >= sizeof o->unique_key) {
    fprintf(stderr, "flag --unique-metadata: key '%.*s' is not a lower-case header name (nor grpc-*)\n",
            (int)klen, text);
    return -1;
  }
  if (plen >= sizeof o->unique_prefix) {
    fprintf(stderr, "flag --unique-metadata: prefix longer than %zu bytes\n",
            sizeof o->unique_prefix - 1);
    return -1;
  }
  memcpy(o->unique_key, text, klen);
  o->unique_key[klen] = '\0';
  memcpy(o->unique_prefix, colon + 1, plen + 1);
  return 0;
}

int io_call_options_unique_value(const call_options *o, long n, char *out, size_t len) {
  if (o == NULL || o->unique_key[0] == '\0' || out == NULL || len == 0) return 0;
  snprintf(out, len, "%s%ld", o->unique_prefix, n);
  return 1;
}

client_method io_call_options_rpc(const call_options *o, long n) {
  if (o->n_rpcs == 0 || n < 0) return CLIENT_UNARY;
  return o->rpcs[(size_t)n % o->n_rpcs];
}

size_t io_call_options_metadata(const call_options *o, client_method m, grpc_metadata *out,
                             size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < o->n_md && n < cap; i++) {
    if (o->md[i].rpc >= 0 && o->md[i].rpc != (int)m) continue;
    memset(&out[n], 0, sizeof out[n]);
    out[n].key = grpc_slice_from_static_string(o->md[i].key);
    out[n].value = grpc_slice_from_static_string(o->md[i].value);
    n++;
  }
  return n;
}
