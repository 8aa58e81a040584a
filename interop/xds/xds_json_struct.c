#define _POSIX_C_SOURCE 200809L
/* Builds the Struct with malloc'd parts only, so that protobuf-c's own
 * free_unpacked (default allocator) releases it whole. */
#include "interop/xds/xds_json_struct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/common/json_read.h"

static Google__Protobuf__Struct *to_struct(const json_value *obj);

static Google__Protobuf__Value *to_value(const json_value *v) {
  Google__Protobuf__Value *out = malloc(sizeof *out);
  if (out == NULL) return NULL;
  Google__Protobuf__Value init = GOOGLE__PROTOBUF__VALUE__INIT;
  *out = init;
  switch (io_json_type_of(v)) {
    case JSON_NULL:
      out->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_NULL_VALUE;
      out->null_value = GOOGLE__PROTOBUF__NULL_VALUE__NULL_VALUE;
      return out;
    case JSON_BOOL:
      out->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_BOOL_VALUE;
      out->bool_value = io_json_bool(v, 0);
      return out;
    case JSON_NUMBER:
      out->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_NUMBER_VALUE;
      out->number_value = io_json_number(v, 0);
      return out;
    case JSON_STRING:
      out->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE;
      out->string_value = strdup(io_json_string(v));
      break;
    case JSON_OBJECT:
      out->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE;
      out->struct_value = to_struct(v);
      break;
    case JSON_ARRAY: {
      Google__Protobuf__ListValue *list = malloc(sizeof *list);
      if (list == NULL) break;
      Google__Protobuf__ListValue linit = GOOGLE__PROTOBUF__LIST_VALUE__INIT;
      *list = linit;
      out->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_LIST_VALUE;
      out->list_value = list;
      size_t n = io_json_size(v);
      list->values = n > 0 ? calloc(n, sizeof *list->values) : NULL;
      if (n > 0 && list->values == NULL) {
        protobuf_c_message_free_unpacked(&out->base, NULL);
        return NULL;
      }
      for (size_t i = 0; i < n; i++) {
        list->values[i] = to_value(io_json_at(v, i));
        if (list->values[i] == NULL) break;
        list->n_values = i + 1;
      }
      if (list->n_values != n) {
        protobuf_c_message_free_unpacked(&out->base, NULL);
        return NULL;
      }
      return out;
    }
  }
  /* string or struct: NULL means out of memory */
  if ((out->kind_case == GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE && out->string_value == NULL) ||
      (out->kind_case == GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE && out->struct_value == NULL) ||
      out->kind_case == GOOGLE__PROTOBUF__VALUE__KIND__NOT_SET) {
    protobuf_c_message_free_unpacked(&out->base, NULL);
    return NULL;
  }
  return out;
}

static Google__Protobuf__Struct *to_struct(const json_value *obj) {
  Google__Protobuf__Struct *s = malloc(sizeof *s);
  if (s == NULL) return NULL;
  Google__Protobuf__Struct init = GOOGLE__PROTOBUF__STRUCT__INIT;
  *s = init;
  size_t n = io_json_size(obj);
  if (n == 0) return s;
  s->fields = calloc(n, sizeof *s->fields);
  if (s->fields == NULL) {
    free(s);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    Google__Protobuf__Struct__FieldsEntry *e = malloc(sizeof *e);
    if (e == NULL) break;
    Google__Protobuf__Struct__FieldsEntry einit = GOOGLE__PROTOBUF__STRUCT__FIELDS_ENTRY__INIT;
    *e = einit;
    s->fields[i] = e;
    s->n_fields = i + 1;
    e->key = strdup(io_json_key_at(obj, i));
    e->value = to_value(io_json_at(obj, i));
    if (e->key == NULL || e->value == NULL) break;
  }
  if (s->n_fields != n || s->fields[n - 1]->key == NULL || s->fields[n - 1]->value == NULL) {
    protobuf_c_message_free_unpacked(&s->base, NULL);
    return NULL;
  }
  return s;
}

Google__Protobuf__Struct *xds_json_to_struct(const char *json, char *err, size_t err_len) {
  if (json == NULL) {
    if (err_len > 0) snprintf(err, err_len, "policy config: JSON text is NULL");
    return NULL;
  }
  char perr[200] = "";
  json_value *root = io_json_parse(json, perr, sizeof perr);
  if (root == NULL) {
    if (err_len > 0) snprintf(err, err_len, "policy config: malformed JSON: %s", perr);
    return NULL;
  }
  if (io_json_type_of(root) != JSON_OBJECT) {
    io_json_free(root);
    if (err_len > 0) snprintf(err, err_len, "policy config: must be a JSON object");
    return NULL;
  }
  Google__Protobuf__Struct *s = to_struct(root);
  io_json_free(root);
  if (s == NULL && err_len > 0) snprintf(err, err_len, "policy config: out of memory");
  return s;
}
