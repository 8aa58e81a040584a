#include "interop/fleet/fleet_chart_layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The chart's measures, px. Plot heights are fixed, so that the shared
 * scales draw the same value at the same height in every panel; the panel
 * grows with its text instead. */
#define PANEL_W 300.0
#define GAP 10.0 /* between panels and around them */
#define MAX_COLS 4
#define MIN_CHART_W 760.0
#define INSET 4.0  /* a text keeps this far from its box's edges */
#define TEXT_X 6.0 /* where left-aligned panel texts start */
#define CALLS_H 100.0
#define CONNS_H 66.0

/* font sizes, and line heights of wrapped text */
#define HEAD_SIZE 15.0
#define HEAD_LINE 18.0
#define LEGEND_SIZE 11.0
#define LEGEND_LINE 14.0
#define TITLE_SIZE 13.0
#define TITLE_LINE 16.0
#define SUB_SIZE 10.0
#define SUB_LINE 12.0
#define AXIS_SIZE 9.0 /* plot labels and ticks */
#define NAME_SIZE 8.0

/* Smallest round number >= v (>= 1): 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8
 * times a power of ten, so that halves are round too and little is wasted. */
static double nice_ceiling(double v) {
  if (v <= 1) return 1;
  double p = pow(10, floor(log10(v)));
  static const double kSteps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
  for (size_t i = 0; i < sizeof(kSteps) / sizeof(kSteps[0]); i++) {
    if (kSteps[i] * p >= v * (1 - 1e-12)) return kSteps[i] * p;
  }
  return 10 * p;
}

/* The scales every panel shares: 0 to a round number at or above the
 * largest value of any panel. */
static void shared_scales(const fleet_run *runs, int n, double *calls_max, double *conns_max) {
  double calls = 1, conns = 1;
  for (int i = 0; i < n; i++) {
    if (!runs[i].complete) continue;
    for (int s = 0; s < runs[i].n_servers; s++) {
      if (runs[i].servers[s].calls > calls) calls = (double)runs[i].servers[s].calls;
      if (runs[i].servers[s].connections_peak > conns) {
        conns = (double)runs[i].servers[s].connections_peak;
      }
    }
  }
  *calls_max = nice_ceiling(calls);
  *conns_max = nice_ceiling(conns);
}

static void tick_label(double v, char *out, size_t cap) { snprintf(out, cap, "%g", v); }

/* Width left of the plots for the tick numbers: the widest of either
 * scale's, right-aligned 3 px before the axis. */
static double axis_x(double calls_max, double conns_max) {
  double widest = 0;
  const double maxes[2] = {calls_max, conns_max};
  for (int q = 0; q < 2; q++) {
    for (int t = 0; t < CHART_TICKS; t++) {
      char label[32];
      tick_label(maxes[q] * t / (CHART_TICKS - 1), label, sizeof(label));
      double w = io_chart_text_width(label, AXIS_SIZE, 0);
      if (w > widest) widest = w;
    }
  }
  return ceil(TEXT_X + widest + 3);
}

static int same_scenario(const fleet_run *a, const fleet_run *b) {
  return strcmp(a->scenario, b->scenario) == 0;
}

/* Wrapped lines of the panel's title and subtitle. */
typedef struct panel_words {
  int n_title, n_subtitle;
  char title[CHART_MAX_LINES][CHART_TEXT_MAX];
  char subtitle[CHART_MAX_LINES][CHART_TEXT_MAX];
} panel_words;

static void panel_words_of(const fleet_run *r, panel_words *pw) {
  const double width = PANEL_W - 2 * TEXT_X;
  char title[CHART_TEXT_MAX];
  snprintf(title, sizeof(title), "%s / %s", r->scenario, r->mode);
  const char *tp[1] = {title};
  pw->n_title = io_chart_text_wrap(tp, 1, TITLE_SIZE, 1, width, pw->title, CHART_MAX_LINES);
  char conns[64], busiest[64], fair[64];
  snprintf(conns, sizeof(conns), "%ld connections;", r->connections_total);
  snprintf(busiest, sizeof(busiest), "busiest server %+.1f%% vs mean",
           100 * (r->calls.max_mean - 1));
  snprintf(fair, sizeof(fair), "(fair random %+.1f%%)",
           r->fair_max_mean > 0 ? 100 * (r->fair_max_mean - 1) : 0.0);
  const char *sp[3] = {conns, busiest, fair};
  pw->n_subtitle = io_chart_text_wrap(sp, 3, SUB_SIZE, 0, width, pw->subtitle, CHART_MAX_LINES);
}

static const char *bar_color(const fleet_server_result *sv, int calls) {
  if (!calls) return "#e67e22";
  if (sv->slow) return "#c0392b";
  if (sv->killed || sv->removed) return "#7f8c8d";
  return "#2e86c1";
}

/* The plot of one quantity, its label baseline at label_y. */
static void plot_of(const fleet_run *r, int calls, double axis_max, double left, double label_y,
                    double h, chart_plot *p) {
  p->quantity = calls ? "calls" : "connections";
  p->axis_max = axis_max;
  io_chart_text_set(&p->label, calls ? "calls per server" : "connections per server", left, label_y,
                    AXIS_SIZE, 0, CHART_ANCHOR_START);
  p->area.x = left;
  p->area.y = label_y + 6;
  p->area.w = PANEL_W - left - TEXT_X;
  p->area.h = h;
  for (int t = 0; t < CHART_TICKS; t++) {
    double v = axis_max * t / (CHART_TICKS - 1);
    double y = p->area.y + h - h * t / (CHART_TICKS - 1);
    char label[32];
    tick_label(v, label, sizeof(label));
    p->tick_values[t] = v;
    p->tick_y[t] = y;
    io_chart_text_set(&p->ticks[t], label, left - 3, y + 3, AXIS_SIZE, 0, CHART_ANCHOR_END);
  }
  const fleet_spread *sp = calls ? &r->calls : &r->connections;
  double slot = p->area.w / (r->n_servers > 0 ? r->n_servers : 1);
  p->n_bars = r->n_servers;
  for (int s = 0; s < r->n_servers; s++) {
    const fleet_server_result *sv = &r->servers[s];
    chart_bar *b = &p->bars[s];
    snprintf(b->server, sizeof(b->server), "%s", sv->name);
    b->value = calls ? (double)sv->calls : (double)sv->connections_peak;
    b->rect.h = h * b->value / axis_max;
    b->rect.x = left + s * slot + slot * 0.15;
    b->rect.y = p->area.y + h - b->rect.h;
    b->rect.w = slot * 0.7;
    b->color = bar_color(sv, calls);
  }
  p->mean = sp->mean;
  p->mean_y = p->area.y + h - h * sp->mean / axis_max;
  p->has_fair = calls && r->fair_max_mean > 1 && sp->mean > 0;
  if (p->has_fair) {
    p->fair_top = sp->mean * r->fair_max_mean;
    if (p->fair_top > axis_max) p->fair_top = axis_max;
    p->fair_y = p->area.y + h - h * p->fair_top / axis_max;
  }
}

/* Server names centred under their bars; every k-th when a name is wider
 * than its slot. */
static void names_of(const fleet_run *r, const chart_plot *p, double y, chart_panel *out) {
  if (r->n_servers <= 0) return;
  double slot = p->area.w / r->n_servers, widest = 0;
  for (int s = 0; s < r->n_servers; s++) {
    double w = io_chart_text_width(r->servers[s].name, NAME_SIZE, 0);
    if (w > widest) widest = w;
  }
  int every = (int)ceil((widest + 2) / slot);
  if (every < 1) every = 1;
  for (int s = 0; s < r->n_servers; s += every) {
    io_chart_text_set(&out->names[out->n_names++], r->servers[s].name, p->area.x + (s + 0.5) * slot,
                      y, NAME_SIZE, 0, CHART_ANCHOR_MIDDLE);
  }
}

/* Lays out one panel in its own coordinates; its height follows from the
 * line counts shared by all panels. Returns the panel's height. */
static double panel_of(const fleet_run *r, const panel_words *pw, int title_lines, int sub_lines,
                       double calls_max, double conns_max, double left, chart_panel *p) {
  p->run = r;
  double y = 17;
  for (int i = 0; i < pw->n_title; i++) {
    io_chart_text_set(&p->title[i], pw->title[i], TEXT_X, y + TITLE_LINE * i, TITLE_SIZE, 1,
                      CHART_ANCHOR_START);
  }
  p->n_title = pw->n_title;
  y += TITLE_LINE * (title_lines - 1) + 14;
  for (int i = 0; i < pw->n_subtitle; i++) {
    io_chart_text_set(&p->subtitle[i], pw->subtitle[i], TEXT_X, y + SUB_LINE * i, SUB_SIZE, 0,
                      CHART_ANCHOR_START);
  }
  p->n_subtitle = pw->n_subtitle;
  y += SUB_LINE * (sub_lines - 1) + 14;
  plot_of(r, 1, calls_max, left, y, CALLS_H, &p->plots[0]);
  /* below the calls' "0" tick, above the connections' top tick */
  y = p->plots[0].area.y + CALLS_H + 15;
  plot_of(r, 0, conns_max, left, y, CONNS_H, &p->plots[1]);
  y = p->plots[1].area.y + CONNS_H + 14;
  names_of(r, &p->plots[1], y, p);
  double h = y + 8;
  p->inner.x = INSET;
  p->inner.y = INSET;
  p->inner.w = PANEL_W - 2 * INSET;
  p->inner.h = h - 2 * INSET;
  return h;
}

static void header_of(double width, fleet_chart_layout *out) {
  const double wrap_w = width - 2 * GAP;
  static const char *const kTitle[] = {
      "aperture fleet: calls (blue) and connections (orange) per server;",
      "the same scales in every panel"};
  static const char *const kMarks[] = {
      "dashed line = mean = each server's fair share;",
      "green line = where a perfectly fair random balancer's busiest server would be at this "
      "call count (its sampling noise)"};
  static const char *const kColors[] = {"red = slow server, grey = killed/removed"};
  char lines[CHART_MAX_LINES][CHART_TEXT_MAX];
  double y = 20;
  int n = io_chart_text_wrap(kTitle, 2, HEAD_SIZE, 1, wrap_w, lines, CHART_MAX_LINES);
  for (int i = 0; i < n; i++, y += HEAD_LINE) {
    io_chart_text_set(&out->header_lines[out->n_header++], lines[i], GAP, y, HEAD_SIZE, 1,
                      CHART_ANCHOR_START);
  }
  y += LEGEND_LINE + 2 - HEAD_LINE;
  const char *const *legends[2] = {kMarks, kColors};
  const int n_phrases[2] = {2, 1};
  for (int l = 0; l < 2; l++) {
    n = io_chart_text_wrap(legends[l], n_phrases[l], LEGEND_SIZE, 0, wrap_w, lines,
                           CHART_MAX_LINES);
    for (int i = 0; i < n; i++, y += LEGEND_LINE) {
      io_chart_text_set(&out->header_lines[out->n_header++], lines[i], GAP, y, LEGEND_SIZE, 0,
                        CHART_ANCHOR_START);
    }
  }
  out->header.x = INSET;
  out->header.y = INSET;
  out->header.w = width - 2 * INSET;
  out->header.h = y - LEGEND_LINE + 6 - INSET;
}

/* Where a panel goes in the grid, and the wrapped words it shows. */
typedef struct panel_plan {
  int run, row, col;
  panel_words words;
} panel_plan;

int io_fleet_chart_layout(const fleet_run *runs, int n, fleet_chart_layout *out) {
  if (out == NULL || (runs == NULL && n > 0)) return -1;
  memset(out, 0, sizeof(*out));
  int complete = 0;
  for (int i = 0; i < n; i++) complete += runs[i].complete != 0;
  const size_t count = complete > 0 ? (size_t)complete : 1;
  panel_plan *plan = calloc(count, sizeof(*plan));
  out->panels = calloc(count, sizeof(*out->panels));
  if (plan == NULL || out->panels == NULL) {
    free(plan);
    io_fleet_chart_layout_free(out);
    return -1;
  }
  /* the grid: a row per scenario, up to MAX_COLS a row; and the line
   * counts every panel reserves, so that all plots sit alike */
  int rows = 0, col = 0, cols = 1, title_lines = 1, sub_lines = 1;
  const fleet_run *prev = NULL;
  for (int i = 0; i < n; i++) {
    if (!runs[i].complete) continue;
    if (rows == 0 || col == MAX_COLS || !same_scenario(&runs[i], prev)) {
      rows++;
      col = 0;
    }
    panel_plan *pl = &plan[out->n_panels++];
    pl->run = i;
    pl->row = rows - 1;
    pl->col = col++;
    if (col > cols) cols = col;
    prev = &runs[i];
    panel_words_of(&runs[i], &pl->words);
    if (pl->words.n_title > title_lines) title_lines = pl->words.n_title;
    if (pl->words.n_subtitle > sub_lines) sub_lines = pl->words.n_subtitle;
  }
  out->width = cols * PANEL_W + (cols + 1) * GAP;
  if (out->width < MIN_CHART_W) out->width = MIN_CHART_W;
  header_of(out->width, out);
  double top = out->header.y + out->header.h + INSET;
  double calls_max, conns_max;
  shared_scales(runs, n, &calls_max, &conns_max);
  double left = axis_x(calls_max, conns_max), panel_h = 0;
  for (int k = 0; k < out->n_panels; k++) {
    chart_panel *p = &out->panels[k];
    panel_h = panel_of(&runs[plan[k].run], &plan[k].words, title_lines, sub_lines, calls_max,
                       conns_max, left, p);
    p->frame.x = GAP + plan[k].col * (PANEL_W + GAP);
    p->frame.y = top + plan[k].row * (panel_h + GAP);
    p->frame.w = PANEL_W;
    p->frame.h = panel_h;
  }
  out->height = top + rows * (panel_h + GAP) + GAP;
  free(plan);
  return 0;
}

void io_fleet_chart_layout_free(fleet_chart_layout *layout) {
  if (layout == NULL) return;
  free(layout->panels);
  memset(layout, 0, sizeof(*layout));
}

int io_fleet_chart_panel_texts(const chart_panel *p, const chart_text **out, int cap) {
  if (p == NULL) return 0;
  int n = 0;
#define ADD(t)                                \
  do {                                        \
    if (out != NULL && n < cap) out[n] = (t); \
    n++;                                      \
  } while (0)
  for (int i = 0; i < p->n_title; i++) ADD(&p->title[i]);
  for (int i = 0; i < p->n_subtitle; i++) ADD(&p->subtitle[i]);
  for (int q = 0; q < 2; q++) {
    ADD(&p->plots[q].label);
    for (int t = 0; t < CHART_TICKS; t++) ADD(&p->plots[q].ticks[t]);
  }
  for (int i = 0; i < p->n_names; i++) ADD(&p->names[i]);
#undef ADD
  return n;
}
