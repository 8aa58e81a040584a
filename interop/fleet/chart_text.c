#include "interop/fleet/chart_text.h"

#include <stdio.h>
#include <string.h>

/* Advances of ' ' to '~' in thousandths of an em, rounded up: per
 * character the larger of DejaVu Sans 2.37's (the hmtx table of Debian's
 * fonts-dejavu-core) and Helvetica's / Arial's (Adobe's AFM metrics, which
 * Arial and Liberation Sans share), and bold never narrower than regular
 * ('@'). DejaVu is the wider for all but a few (regular: ?@CEFGJKPRSY_;
 * bold: ?J_). rsvg-convert draws this chart's strings within 1% of these
 * sums. */
static const short kRegular[95] = {
    /*  !"#$%&'()*+,-./ */
    318, 401, 460, 838, 637, 951, 780, 275, 391, 391, 500, 838, 318, 361, 318, 337,
    /* 0123456789:;<=>? */
    637, 637, 637, 637, 637, 637, 637, 637, 637, 637, 337, 337, 838, 838, 838, 556,
    /* @ABCDEFGHIJKLMNO */
    1015, 685, 687, 722, 771, 667, 611, 778, 752, 295, 500, 667, 558, 863, 749, 788,
    /* PQRSTUVWXYZ[\]^_ */
    667, 788, 722, 667, 611, 732, 685, 989, 686, 667, 686, 391, 337, 391, 838, 556,
    /* `abcdefghijklmno */
    500, 613, 635, 550, 635, 616, 353, 635, 634, 278, 278, 580, 278, 975, 634, 612,
    /* pqrstuvwxyz{|}~ */
    635, 635, 412, 521, 393, 634, 592, 818, 592, 592, 525, 637, 337, 637, 838,
};
static const short kBold[95] = {
    /*  !"#$%&'()*+,-./ */
    349, 457, 521, 838, 696, 1002, 873, 307, 458, 458, 523, 838, 380, 416, 380, 366,
    /* 0123456789:;<=>? */
    696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 611,
    /* @ABCDEFGHIJKLMNO */
    1015, 774, 763, 734, 831, 684, 684, 821, 837, 373, 556, 775, 638, 996, 837, 851,
    /* PQRSTUVWXYZ[\]^_ */
    733, 851, 771, 721, 683, 813, 774, 1104, 771, 725, 726, 458, 366, 458, 838, 556,
    /* `abcdefghijklmno */
    500, 675, 716, 593, 716, 679, 436, 716, 712, 343, 343, 666, 343, 1042, 712, 688,
    /* pqrstuvwxyz{|}~ */
    716, 716, 494, 596, 479, 712, 652, 924, 646, 652, 583, 712, 366, 712, 838,
};

/* wider than any character of the table */
#define OUTSIDE_TABLE_EM 1.2

double io_chart_text_width(const char *text, double size, int bold) {
  if (text == NULL) return 0;
  const short *table = bold ? kBold : kRegular;
  double em = 0;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    em += (*p >= 32 && *p <= 126) ? table[*p - 32] / 1000.0 : OUTSIDE_TABLE_EM;
  }
  return em * size;
}

void io_chart_text_set(chart_text *t, const char *text, double x, double y, double size, int bold,
                       chart_anchor anchor) {
  if (t == NULL || text == NULL) return;
  snprintf(t->text, sizeof(t->text), "%s", text);
  t->x = x;
  t->y = y;
  t->size = size;
  t->bold = bold;
  t->anchor = anchor;
  t->width = io_chart_text_width(t->text, size, bold);
}

chart_box io_chart_text_box(const chart_text *t) {
  chart_box b = {0, 0, 0, 0};
  if (t == NULL) return b;
  b.w = t->width;
  b.x = t->anchor == CHART_ANCHOR_START    ? t->x
        : t->anchor == CHART_ANCHOR_MIDDLE ? t->x - t->width / 2
                                           : t->x - t->width;
  b.y = t->y - CHART_FONT_ASCENT * t->size;
  b.h = (CHART_FONT_ASCENT + CHART_FONT_DESCENT) * t->size;
  return b;
}

int io_chart_box_inside(chart_box a, chart_box b) {
  const double eps = 1e-9;
  return a.x >= b.x - eps && a.y >= b.y - eps && a.x + a.w <= b.x + b.w + eps &&
         a.y + a.h <= b.y + b.h + eps;
}

int io_chart_box_overlap(chart_box a, chart_box b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

void io_chart_text_fit(const char *text, double size, int bold, double max_width, char *out,
                       size_t cap) {
  if (out == NULL || cap < 4) return;
  snprintf(out, cap, "%s", text ? text : "");
  if (io_chart_text_width(out, size, bold) <= max_width) return;
  const double dots = io_chart_text_width("...", size, bold);
  size_t keep = strlen(out);
  if (keep > cap - 4) keep = cap - 4;
  /* drop characters from the end until the rest and the dots fit */
  while (keep > 0) {
    while (keep > 0 && ((unsigned char)out[keep] & 0xC0) == 0x80) keep--; /* UTF-8 continuation */
    out[keep] = '\0';
    if (io_chart_text_width(out, size, bold) + dots <= max_width) break;
    keep--;
  }
  while (keep > 0 && out[keep - 1] == ' ') keep--;
  memcpy(out + keep, "...", 4);
}

/* Lines as they fill; the caller folds those past max_lines into the
 * last line it returns. */
#define WRAP_LINES 32

typedef struct wrap_state {
  char lines[WRAP_LINES][CHART_TEXT_MAX];
  int n;
  double size, max_width;
  int bold;
} wrap_state;

static int fits(const wrap_state *w, const char *line, const char *add) {
  char joined[2 * CHART_TEXT_MAX];
  snprintf(joined, sizeof(joined), "%s%s%s", line, line[0] ? " " : "", add);
  return strlen(joined) < CHART_TEXT_MAX &&
         io_chart_text_width(joined, w->size, w->bold) <= w->max_width;
}

static void append(wrap_state *w, const char *add) {
  char *line = w->lines[w->n - 1];
  size_t len = strlen(line);
  snprintf(line + len, CHART_TEXT_MAX - len, "%s%s", len ? " " : "", add);
}

static void new_line(wrap_state *w) {
  if (w->n < WRAP_LINES) w->lines[w->n++][0] = '\0';
}

/* Places one word of a phrase too wide for a line. */
static void place_word(wrap_state *w, const char *word) {
  if (fits(w, w->lines[w->n - 1], word)) {
    append(w, word);
    return;
  }
  if (w->lines[w->n - 1][0] != '\0') new_line(w);
  char cut[CHART_TEXT_MAX];
  io_chart_text_fit(word, w->size, w->bold, w->max_width, cut, sizeof(cut));
  append(w, cut);
}

static void place_phrase(wrap_state *w, const char *phrase) {
  if (phrase == NULL || phrase[0] == '\0') return;
  if (fits(w, w->lines[w->n - 1], phrase)) {
    append(w, phrase);
    return;
  }
  if (w->lines[w->n - 1][0] != '\0' && fits(w, "", phrase)) {
    new_line(w);
    append(w, phrase);
    return;
  }
  for (const char *p = phrase; *p;) {
    size_t len = strcspn(p, " ");
    if (len > 0) {
      char word[CHART_TEXT_MAX];
      snprintf(word, sizeof(word), "%.*s", (int)(len < sizeof(word) ? len : sizeof(word) - 1), p);
      place_word(w, word);
    }
    p += len;
    while (*p == ' ') p++;
  }
}

int io_chart_text_wrap(const char *const *phrases, int n, double size, int bold, double max_width,
                       char lines[][CHART_TEXT_MAX], int max_lines) {
  if (phrases == NULL || lines == NULL || n <= 0 || max_lines <= 0 || max_width <= 0) return 0;
  /* the state holds one line more than any caller keeps, so that an
   * overflow always reaches the shortened last line */
  if (max_lines > WRAP_LINES - 1) max_lines = WRAP_LINES - 1;
  wrap_state w;
  memset(&w, 0, sizeof(w));
  w.size = size;
  w.bold = bold;
  w.max_width = max_width;
  w.n = 1;
  for (int i = 0; i < n; i++) place_phrase(&w, phrases[i]);
  if (w.lines[0][0] == '\0') return 0;
  int out = w.n < max_lines ? w.n : max_lines;
  for (int i = 0; i < out; i++) memcpy(lines[i], w.lines[i], CHART_TEXT_MAX);
  if (w.n > max_lines) {
    /* the rest joins the last line, shortened */
    char rest[4 * CHART_TEXT_MAX] = "";
    for (int i = max_lines - 1; i < w.n; i++) {
      size_t len = strlen(rest);
      snprintf(rest + len, sizeof(rest) - len, "%s%s", len ? " " : "", w.lines[i]);
    }
    io_chart_text_fit(rest, size, bold, max_width, lines[max_lines - 1], CHART_TEXT_MAX);
  }
  return out;
}
