#include "policy/status/ap_json_string.h"

void ap_json_write_string(FILE *f, const char *s) {
  if (f == NULL) return;
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\') {
      fputc('\\', f);
      fputc(*p, f);
    } else if (*p == '\n') {
      fputs("\\n", f);
    } else if (*p == '\r') {
      fputs("\\r", f);
    } else if (*p == '\t') {
      fputs("\\t", f);
    } else if (*p < 0x20) {
      fprintf(f, "\\u%04x", *p);
    } else {
      fputc(*p, f);
    }
  }
  fputc('"', f);
}
