/* Writing JSON strings safely (names and host names come from flags and
 * peers, so they are escaped). */
#ifndef APERTURE_INTEROP_JSON_WRITE_H
#define APERTURE_INTEROP_JSON_WRITE_H

#include <stdio.h>

/* Writes `s` as a quoted JSON string to `f` (NULL writes ""). */
void io_json_write_string(FILE *f, const char *s);

/* Writes the text produced by `fill(f, arg)` to `path` atomically (a
 * temporary file renamed over path), so readers never see half a file.
 * Returns 0, or -1 when the file cannot be written. */
int io_json_write_file_atomic(const char *path, void (*fill)(FILE *f, void *arg), void *arg);

#endif
