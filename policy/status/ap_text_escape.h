/*
 * ap_text_escape: makes strings that a status server supplied (targets,
 * addresses, status messages) safe to show. A hostile or broken server must
 * not be able to send terminal escape sequences to an operator's terminal,
 * nor make aperturectl emit JSON that is not valid UTF-8.
 */
#ifndef AP_TEXT_ESCAPE_H
#define AP_TEXT_ESCAPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Length (1..4) of the well-formed UTF-8 sequence at the start of the
 * `len` bytes at `p`, or 0 when they do not start with one (overlong forms,
 * surrogates and code points above U+10FFFF are not well formed). */
size_t ap_utf8_sequence_length(const unsigned char *p, size_t len);

/* Writes `s` (NULL is shown as "") into `out` (capacity `cap` >= 1, always
 * NUL-terminated) for a terminal: C0 controls, DEL, C1 controls, bytes that
 * are not well-formed UTF-8 and the backslash are written as \xNN (a
 * backslash as \\); other UTF-8 passes through. Output that does not fit is
 * cut at a whole character and ends with "...". Returns `out`, or "" when
 * out is NULL or cap is 0. */
const char *ap_escape_for_terminal(const char *s, char *out, size_t cap);

/* 1 when the C1 control U+0080..U+009F starts the `len` bytes at `p`
 * (0xC2 0x80..0x9F): terminals act on these as on ESC sequences. */
int ap_utf8_is_c1(const unsigned char *p, size_t len);

/* 1 when `s` (NUL-terminated; NULL counts as "") is well-formed UTF-8. */
int ap_utf8_valid(const char *s);

/* A malloc'd copy of `s` with every byte that does not start a well-formed
 * UTF-8 sequence replaced by U+FFFD, so that it can go into a proto3
 * string (strict clients refuse a whole message over one bad string).
 * NULL when `s` is NULL or memory runs out. */
char *ap_utf8_repaired(const char *s);

#ifdef __cplusplus
}
#endif

#endif /* AP_TEXT_ESCAPE_H */
