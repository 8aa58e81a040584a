/*
 * ap_json_string: one JSON string writer for every program of the project
 * (aperturectl, and the interop programs on top of the policy). Strings that
 * come from servers, flags and peers are escaped, never printed raw.
 */
#ifndef AP_JSON_STRING_H
#define AP_JSON_STRING_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `s` as a quoted JSON string to `f` (NULL writes ""): \" \\ \n \r
 * \t, other control characters, DEL and the C1 controls as \u00XX,
 * well-formed UTF-8 as is, and each byte that does not start well-formed
 * UTF-8 as U+FFFD, so the output is always valid UTF-8 JSON that no
 * terminal acts on. A NULL `f` writes nothing. */
void ap_json_write_string(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif

#endif /* AP_JSON_STRING_H */
