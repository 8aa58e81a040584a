#define _POSIX_C_SOURCE 200809L
#include "interop/common/json_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
