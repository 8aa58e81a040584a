#include "interop/testing/call_log.h"

#include <stdio.h>
#include <stdlib.h>

#define CALL_LOG_BUFFER (1 << 20)

struct call_log {
  FILE *f;
  char *buf;
  int failed;
};

call_log *io_call_log_open(const char *path) {
  if (path == NULL) return NULL;
  call_log *l = calloc(1, sizeof(*l));
  if (l == NULL) return NULL;
  l->f = fopen(path, "w");
  l->buf = malloc(CALL_LOG_BUFFER);
  if (l->f == NULL || l->buf == NULL) {
    fprintf(stderr, "flag --call-log: cannot open '%s'\n", path);
    if (l->f) fclose(l->f);
    free(l->buf);
    free(l);
    return NULL;
  }
  setvbuf(l->f, l->buf, _IOFBF, CALL_LOG_BUFFER);
  return l;
}

void io_call_log_record(call_log *l, int64_t start_ns, int64_t latency_ns, int code,
                        const char *server) {
  if (l == NULL) return;
  if (fprintf(l->f, "%lld %lld %d ", (long long)(start_ns / 1000), (long long)(latency_ns / 1000),
              code) < 0)
    l->failed = 1;
  if (server == NULL || server[0] == '\0') server = "-";
  for (const char *c = server; *c; c++) putc(*c == ' ' || *c == '\t' || *c == '\n' ? '_' : *c, l->f);
  if (putc('\n', l->f) == EOF) l->failed = 1;
}

int io_call_log_close(call_log *l) {
  if (l == NULL) return 0;
  int rc = (fclose(l->f) != 0 || l->failed) ? -1 : 0;
  if (rc != 0) fprintf(stderr, "client: writing --call-log failed\n");
  free(l->buf);
  free(l);
  return rc;
}
