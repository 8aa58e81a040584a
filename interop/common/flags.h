/* Small helpers for the interop programs' command lines. Every parser names
 * the flag in its error message (written to stderr). */
#ifndef APERTURE_INTEROP_FLAGS_H
#define APERTURE_INTEROP_FLAGS_H

/* If argv[*i] is `--name=value` or `--name value`, stores the value in *out,
 * advances *i past a separate value and returns 1. Returns 0 when argv[*i]
 * is another flag, -1 when the value is missing. */
int flag_match(int argc, char **argv, int *i, const char *name, const char **out);

/* Parses a decimal integer in [min, max] for flag `name`. Returns 0 or -1
 * (with a message naming the flag). */
int flag_long(const char *name, const char *value, long min, long max, long *out);

/* Parses a decimal floating point number in [min, max]. Returns 0 or -1. */
int flag_double(const char *name, const char *value, double min, double max, double *out);

#endif
