/*
 * ap_text_escape: UTF-8 well-formedness per RFC 3629 (the table of valid
 * byte ranges), then per-character escaping for a terminal or JSON.
 */
#include "policy/status/ap_text_escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int in_range(unsigned char b, unsigned char lo, unsigned char hi) {
  return b >= lo && b <= hi;
}

size_t ap_utf8_sequence_length(const unsigned char *p, size_t len) {
  if (p == NULL || len == 0) return 0;
  const unsigned char b0 = p[0];
  if (b0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
  if (in_range(b0, 0xC2, 0xDF)) {
    n = 2;
  } else if (b0 == 0xE0) {
    n = 3, lo = 0xA0; /* no overlong forms */
  } else if (in_range(b0, 0xE1, 0xEC) || in_range(b0, 0xEE, 0xEF)) {
    n = 3;
  } else if (b0 == 0xED) {
    n = 3, hi = 0x9F; /* no surrogates */
  } else if (b0 == 0xF0) {
    n = 4, lo = 0x90;
  } else if (in_range(b0, 0xF1, 0xF3)) {
    n = 4;
  } else if (b0 == 0xF4) {
    n = 4, hi = 0x8F; /* nothing above U+10FFFF */
  } else {
    return 0;
  }
  if (len < n || !in_range(p[1], lo, hi)) return 0;
  for (size_t i = 2; i < n; ++i)
    if (!in_range(p[i], 0x80, 0xBF)) return 0;
  return n;
}

int ap_utf8_is_c1(const unsigned char *p, size_t len) {
  return p != NULL && len >= 2 && p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
}

int ap_utf8_valid(const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t left = strlen((const char *)p);
  while (left > 0) {
    size_t len = ap_utf8_sequence_length(p, left);
    if (len == 0) return 0;
    p += len;
    left -= len;
  }
  return 1;
}

char *ap_utf8_repaired(const char *s) {
  if (s == NULL) return NULL;
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s);
  /* Each bad byte becomes 3 bytes at most. */
  char *out = malloc(3 * left + 1);
  if (out == NULL) return NULL;
  size_t used = 0;
  while (left > 0) {
    size_t len = ap_utf8_sequence_length(p, left);
    if (len == 0) {
      memcpy(out + used, "\xEF\xBF\xBD", 3);
      used += 3;
      len = 1;
    } else {
      memcpy(out + used, p, len);
      used += len;
    }
    p += len;
    left -= len;
  }
  out[used] = '\0';
  return out;
}

/* Appends `piece` (len bytes) when it fits with room for `reserve` more
 * bytes and the NUL; returns 0 when it does not. */
static int append(char *out, size_t cap, size_t *used, const char *piece,
                  size_t len, size_t reserve) {
  if (*used + len + reserve + 1 > cap) return 0;
  memcpy(out + *used, piece, len);
  *used += len;
  out[*used] = '\0';
  return 1;
}

/* Escapes as much of `s` as fits while keeping `reserve` bytes free;
 * returns 1 when all of it was written. */
static int escape_terminal(const char *s, char *out, size_t cap,
                           size_t reserve, size_t *used) {
  out[0] = '\0';
  *used = 0;
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t left = strlen((const char *)p);
  while (left > 0) {
    char piece[8];
    size_t len = ap_utf8_sequence_length(p, left);
    size_t consumed = len;
    const int c1 = len == 2 && ap_utf8_is_c1(p, len);
    if (len == 0 || c1 || p[0] < 0x20 || p[0] == 0x7F) {
      snprintf(piece, sizeof piece, "\\x%02x", p[0]);
      len = 4;
      consumed = 1;
    } else if (p[0] == '\\') {
      memcpy(piece, "\\\\", 2);
      len = 2;
    } else {
      memcpy(piece, p, len);
    }
    if (!append(out, cap, used, piece, len, reserve)) return 0;
    p += consumed;
    left -= consumed;
  }
  return 1;
}

const char *ap_escape_for_terminal(const char *s, char *out, size_t cap) {
  if (out == NULL || cap == 0) return "";
  size_t used = 0;
  if (!escape_terminal(s, out, cap, 0, &used)) {
    /* Too long: cut at a whole character with room for the ellipsis. */
    escape_terminal(s, out, cap, 3, &used);
    append(out, cap, &used, "...", 3, 0);
  }
  return out;
}
