/* How much room the chart's text takes, and how to make it fit: a
 * per-character width table for the font family the chart sets, the box a
 * placed text covers, line wrapping and shortening. Pure C, no I/O. */
#ifndef APERTURE_INTEROP_FLEET_CHART_TEXT_H
#define APERTURE_INTEROP_FLEET_CHART_TEXT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The font family the chart sets; the width table is conservative for it
 * (each character's advance is the larger of DejaVu Sans's and Arial's /
 * Helvetica's, regular and bold apart). */
#define CHART_FONT_FAMILY "DejaVu Sans, Arial, Helvetica, sans-serif"

/* Height above and below the baseline, in em: the larger of the families'
 * ascenders (DejaVu Sans 0.928, Arial 0.905) and descenders (0.236, 0.212). */
#define CHART_FONT_ASCENT 0.93
#define CHART_FONT_DESCENT 0.24

/* The longest text the chart places, terminator included. */
#define CHART_TEXT_MAX 192

typedef struct chart_box {
  double x, y, w, h; /* left, top, width, height */
} chart_box;

typedef enum chart_anchor {
  CHART_ANCHOR_START, /* x is the text's left end */
  CHART_ANCHOR_MIDDLE,
  CHART_ANCHOR_END /* x is its right end */
} chart_anchor;

/* One text as the chart places it. */
typedef struct chart_text {
  char text[CHART_TEXT_MAX];
  double x, y; /* anchor point on the baseline */
  double size; /* font size, px */
  int bold;    /* 1: font-weight bold */
  chart_anchor anchor;
  double width; /* estimated width: io_chart_text_width(text, size, bold) */
} chart_text;

/* Estimated width in px of `text` at font size `size` (bold when `bold` is
 * 1): the sum of the table's advances; a byte outside printable ASCII
 * counts as 1.2 em, wider than any character of either family. 0 for NULL. */
double io_chart_text_width(const char *text, double size, int bold);

/* Fills `t` (text cut to CHART_TEXT_MAX - 1 bytes) and its estimated width.
 * Nothing when t or text is NULL. */
void io_chart_text_set(chart_text *t, const char *text, double x, double y, double size, int bold,
                       chart_anchor anchor);

/* The box `t` covers: its estimated width placed by its anchor, from
 * CHART_FONT_ASCENT above the baseline to CHART_FONT_DESCENT below it. */
chart_box io_chart_text_box(const chart_text *t);

/* 1 when a lies inside b (edges may touch), else 0. */
int io_chart_box_inside(chart_box a, chart_box b);

/* 1 when a and b share area (touching edges do not), else 0. */
int io_chart_box_overlap(chart_box a, chart_box b);

/* Writes `text` to out (capacity cap >= 4), cut at a byte boundary and
 * ended with "..." when it is wider than max_width at size/bold, so that
 * its estimated width is at most max_width (just "..." when nothing else
 * fits). Nothing when out is NULL or cap < 4. */
void io_chart_text_fit(const char *text, double size, int bold, double max_width, char *out,
                       size_t cap);

/* Wraps the phrases (joined by spaces) into at most max_lines lines no
 * wider than max_width: a phrase moves whole to the next line when it does
 * not fit, and only a phrase wider than a line is broken between its
 * words; a word wider than a line, or the text past the last line, is
 * shortened by io_chart_text_fit. max_lines above 31 counts as 31.
 * Returns the number of lines written to lines (0 when there is no text or
 * an argument is invalid). */
int io_chart_text_wrap(const char *const *phrases, int n, double size, int bold, double max_width,
                       char lines[][CHART_TEXT_MAX], int max_lines);

#ifdef __cplusplus
}
#endif

#endif
