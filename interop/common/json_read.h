/* A minimal JSON reader for the figures the interop programs exchange
 * (server stats files, client summaries). Parses a whole document into a
 * tree; lookups by key and index. Numbers are doubles. */
#ifndef APERTURE_INTEROP_JSON_READ_H
#define APERTURE_INTEROP_JSON_READ_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum json_type {
  JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} json_type;

typedef struct json_value json_value;

/* Parses `text` (NUL terminated). Returns the root, or NULL when text is
 * NULL, malformed (message in err when err_len > 0) or memory runs out.
 * Free with io_json_free. */
json_value *io_json_parse(const char *text, char *err, size_t err_len);

/* Reads and parses a file; NULL when unreadable or malformed. */
json_value *io_json_parse_file(const char *path, char *err, size_t err_len);

void io_json_free(json_value *v);

json_type io_json_type_of(const json_value *v); /* JSON_NULL for NULL */

/* Member `key` of an object, NULL when v is not an object or lacks key. */
const json_value *io_json_get(const json_value *v, const char *key);

/* Number of elements (array) or members (object); 0 otherwise. */
size_t io_json_size(const json_value *v);

/* Element i of an array or value of member i of an object (NULL if out of
 * range); io_json_key_at gives member i's key (NULL for arrays). */
const json_value *io_json_at(const json_value *v, size_t i);
const char *io_json_key_at(const json_value *v, size_t i);

/* Scalar accessors: `fallback` / NULL when the type does not match. */
double io_json_number(const json_value *v, double fallback);
const char *io_json_string(const json_value *v);
int io_json_bool(const json_value *v, int fallback);

/* io_json_number(io_json_get(v, key), fallback). */
double io_json_get_number(const json_value *v, const char *key, double fallback);

#ifdef __cplusplus
}
#endif

#endif
