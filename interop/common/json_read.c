#define _POSIX_C_SOURCE 200809L
#include "interop/common/json_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct json_value {
  json_type type;
  double number;    /* JSON_NUMBER, JSON_BOOL (0/1) */
  char *string;     /* JSON_STRING */
  size_t count;     /* ARRAY / OBJECT */
  char **keys;      /* OBJECT */
  json_value **items;
};

typedef struct parser {
  const char *p;
  char *err;
  size_t err_len;
  int depth;
} parser;

#define MAX_DEPTH 64

static void fail(parser *ps, const char *fmt, ...) {
  if (ps->err == NULL || ps->err_len == 0 || ps->err[0] != '\0') return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ps->err, ps->err_len, fmt, ap);
  va_end(ap);
}

static void skip_ws(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static json_value *new_value(json_type t) {
  json_value *v = calloc(1, sizeof(*v));
  if (v) v->type = t;
  return v;
}

static char *parse_string_raw(parser *ps) {
  if (*ps->p != '"') {
    fail(ps, "expected string at '%.10s'", ps->p);
    return NULL;
  }
  ps->p++;
  size_t cap = 16, len = 0;
  char *out = malloc(cap);
  if (out == NULL) return NULL;
  while (*ps->p != '"') {
    char c = *ps->p;
    if (c == '\0') {
      fail(ps, "unterminated string");
      free(out);
      return NULL;
    }
    if (c == '\\') {
      ps->p++;
      c = *ps->p;
      switch (c) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'u': {
          /* Only the escapes json_write produces (< 0x80) are decoded;
           * others become '?'. */
          unsigned code = 0;
          for (int i = 1; i <= 4; i++) {
            char h = ps->p[i];
            unsigned d = (h >= '0' && h <= '9') ? (unsigned)(h - '0')
                         : (h >= 'a' && h <= 'f') ? (unsigned)(h - 'a' + 10)
                         : (h >= 'A' && h <= 'F') ? (unsigned)(h - 'A' + 10) : 99u;
            if (d == 99u) {
              fail(ps, "bad \\u escape");
              free(out);
              return NULL;
            }
            code = code * 16 + d;
          }
          ps->p += 4;
          c = code < 0x80 ? (char)code : '?';
          break;
        }
        case '"': case '\\': case '/': break;
        default:
          fail(ps, "bad escape");
          free(out);
          return NULL;
      }
    }
    if (len + 2 > cap) {
      cap *= 2;
      char *n = realloc(out, cap);
      if (n == NULL) {
        free(out);
        return NULL;
      }
      out = n;
    }
    out[len++] = c;
    ps->p++;
  }
  ps->p++;
  out[len] = '\0';
  return out;
}

static json_value *parse_value(parser *ps);

static int append(json_value *v, char *key, json_value *item) {
  char **keys = v->keys;
  if (v->type == JSON_OBJECT) {
    keys = realloc(v->keys, (v->count + 1) * sizeof(char *));
    if (keys == NULL) return -1;
    v->keys = keys;
  }
  json_value **items = realloc(v->items, (v->count + 1) * sizeof(json_value *));
  if (items == NULL) return -1;
  v->items = items;
  if (v->type == JSON_OBJECT) v->keys[v->count] = key;
  v->items[v->count++] = item;
  return 0;
}

static json_value *parse_container(parser *ps, json_type t) {
  char close = t == JSON_OBJECT ? '}' : ']';
  json_value *v = new_value(t);
  if (v == NULL) return NULL;
  ps->p++;
  skip_ws(ps);
  if (*ps->p == close) {
    ps->p++;
    return v;
  }
  for (;;) {
    skip_ws(ps);
    char *key = NULL;
    if (t == JSON_OBJECT) {
      key = parse_string_raw(ps);
      if (key == NULL) goto bad;
      skip_ws(ps);
      if (*ps->p != ':') {
        fail(ps, "expected ':' after key \"%s\"", key);
        free(key);
        goto bad;
      }
      ps->p++;
    }
    json_value *item = parse_value(ps);
    if (item == NULL || append(v, key, item) != 0) {
      free(key);
      io_json_free(item);
      goto bad;
    }
    skip_ws(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == close) {
      ps->p++;
      return v;
    }
    fail(ps, "expected ',' or '%c' at '%.10s'", close, ps->p);
    goto bad;
  }
bad:
  io_json_free(v);
  return NULL;
}

static json_value *parse_value(parser *ps) {
  skip_ws(ps);
  if (++ps->depth > MAX_DEPTH) {
    fail(ps, "nesting deeper than %d", MAX_DEPTH);
    return NULL;
  }
  json_value *v = NULL;
  char c = *ps->p;
  if (c == '{') {
    v = parse_container(ps, JSON_OBJECT);
  } else if (c == '[') {
    v = parse_container(ps, JSON_ARRAY);
  } else if (c == '"') {
    char *s = parse_string_raw(ps);
    if (s && (v = new_value(JSON_STRING)) != NULL) v->string = s;
    else free(s);
  } else if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
    int t = c == 't';
    ps->p += t ? 4 : 5;
    if ((v = new_value(JSON_BOOL)) != NULL) v->number = t;
  } else if (strncmp(ps->p, "null", 4) == 0) {
    ps->p += 4;
    v = new_value(JSON_NULL);
  } else {
    char *end;
    double d = strtod(ps->p, &end);
    if (end == ps->p) {
      fail(ps, "unexpected '%.10s'", ps->p);
    } else {
      ps->p = end;
      if ((v = new_value(JSON_NUMBER)) != NULL) v->number = d;
    }
  }
  ps->depth--;
  return v;
}

json_value *io_json_parse(const char *text, char *err, size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (text == NULL) return NULL;
  parser ps = {text, err, err_len, 0};
  json_value *v = parse_value(&ps);
  if (v == NULL) return NULL;
  skip_ws(&ps);
  if (*ps.p != '\0') {
    fail(&ps, "trailing text '%.10s'", ps.p);
    io_json_free(v);
    return NULL;
  }
  return v;
}

json_value *io_json_parse_file(const char *path, char *err, size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (path == NULL) return NULL;
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    if (err && err_len) snprintf(err, err_len, "cannot open %s", path);
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len - 1 == 0) {
      char *b = realloc(buf, cap * 2);
      if (b == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf == NULL) return NULL;
  buf[len] = '\0';
  json_value *v = io_json_parse(buf, err, err_len);
  free(buf);
  return v;
}

void io_json_free(json_value *v) {
  if (v == NULL) return;
  for (size_t i = 0; i < v->count; i++) {
    if (v->keys) free(v->keys[i]);
    io_json_free(v->items[i]);
  }
  free(v->keys);
  free(v->items);
  free(v->string);
  free(v);
}

json_type io_json_type_of(const json_value *v) { return v ? v->type : JSON_NULL; }

const json_value *io_json_get(const json_value *v, const char *key) {
  if (v == NULL || v->type != JSON_OBJECT || key == NULL) return NULL;
  for (size_t i = 0; i < v->count; i++) {
    if (strcmp(v->keys[i], key) == 0) return v->items[i];
  }
  return NULL;
}

size_t io_json_size(const json_value *v) {
  return (v && (v->type == JSON_ARRAY || v->type == JSON_OBJECT)) ? v->count : 0;
}

const json_value *io_json_at(const json_value *v, size_t i) {
  return (i < io_json_size(v)) ? v->items[i] : NULL;
}

const char *io_json_key_at(const json_value *v, size_t i) {
  return (v && v->type == JSON_OBJECT && i < v->count) ? v->keys[i] : NULL;
}

double io_json_number(const json_value *v, double fallback) {
  return (v && (v->type == JSON_NUMBER || v->type == JSON_BOOL)) ? v->number : fallback;
}

const char *io_json_string(const json_value *v) {
  return (v && v->type == JSON_STRING) ? v->string : NULL;
}

int io_json_bool(const json_value *v, int fallback) {
  return (v && v->type == JSON_BOOL) ? (int)v->number : fallback;
}

double io_json_get_number(const json_value *v, const char *key, double fallback) {
  return io_json_number(io_json_get(v, key), fallback);
}
