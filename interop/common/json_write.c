#define _POSIX_C_SOURCE 200809L
#include "interop/common/json_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void io_json_write_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\') {
      fputc('\\', f);
      fputc(*p, f);
    } else if (*p < 0x20) {
      fprintf(f, "\\u%04x", *p);
    } else {
      fputc(*p, f);
    }
  }
  fputc('"', f);
}

int io_json_write_file_atomic(const char *path, void (*fill)(FILE *f, void *arg), void *arg) {
  if (path == NULL || fill == NULL) return -1;
  size_t n = strlen(path) + 32;
  char *tmp = malloc(n);
  if (tmp == NULL) return -1;
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (f == NULL) {
    free(tmp);
    return -1;
  }
  fill(f, arg);
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  return 0;
}
