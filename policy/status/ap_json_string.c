#include "policy/status/ap_json_string.h"

#include <string.h>

#include "policy/status/ap_text_escape.h"

void ap_json_write_string(FILE *f, const char *s) {
  if (f == NULL) return;
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t left = strlen((const char *)p);
  fputc('"', f);
  while (left > 0) {
    size_t len = *p < 0x80 ? 1 : ap_utf8_sequence_length(p, left);
    if (len == 0) {
      fputs("\xEF\xBF\xBD", f); /* not UTF-8: U+FFFD, one byte at a time */
      len = 1;
    } else if (*p == '"' || *p == '\\') {
      fputc('\\', f);
      fputc(*p, f);
    } else if (*p == '\n') {
      fputs("\\n", f);
    } else if (*p == '\r') {
      fputs("\\r", f);
    } else if (*p == '\t') {
      fputs("\\t", f);
    } else if (*p < 0x20 || *p == 0x7F) {
      fprintf(f, "\\u%04x", *p);
    } else if (len == 2 && ap_utf8_is_c1(p, len)) {
      fprintf(f, "\\u%04x", p[1]); /* a terminal would act on it raw */
    } else {
      fwrite(p, 1, len, f);
    }
    p += len;
    left -= len;
  }
  fputc('"', f);
}
