/* Where everything of the fleet chart goes, computed before anything is
 * written: one panel per complete run (a row per scenario, up to four a
 * row), each with its title and subtitle wrapped to the panel, and two
 * plots (calls and connections per server) on scales shared by every
 * panel, their labels above the plot areas so that no bar covers them.
 * Every text carries its estimated width (chart_text.h), so that a test
 * can check that it fits its box and overlaps nothing. */
#ifndef APERTURE_INTEROP_FLEET_CHART_LAYOUT_H
#define APERTURE_INTEROP_FLEET_CHART_LAYOUT_H

#include "interop/fleet/chart_text.h"
#include "interop/fleet/fleet_report.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHART_MAX_LINES 4     /* of a panel's title, its subtitle, or a legend entry */
#define CHART_HEADER_LINES 12 /* the chart's title and legend, wrapped */
#define CHART_TICKS 3         /* 0, half the axis, the axis maximum */

typedef struct chart_bar {
  char server[32];
  double value;
  chart_box rect; /* in the panel */
  const char *color;
} chart_bar;

/* One plot of a panel: an axis from 0 to axis_max over area.h px. */
typedef struct chart_plot {
  const char *quantity; /* "calls" or "connections" */
  double axis_max;
  chart_box area;                /* in the panel: x at the axis, y at axis_max, y + h at 0 */
  chart_text label;              /* "calls per server": above area, left-aligned on the axis */
  chart_text ticks[CHART_TICKS]; /* left of the axis, right-aligned, at 0, 1/2, 1 */
  double tick_values[CHART_TICKS];
  double tick_y[CHART_TICKS]; /* where each value is on the axis (a grid line) */
  int n_bars;
  chart_bar bars[FLEET_MAX_SERVERS];
  double mean, mean_y;     /* the dashed line */
  int has_fair;            /* calls only: the fair random balancer's band */
  double fair_top, fair_y; /* its busiest server's calls (clipped to the axis), its y */
} chart_plot;

typedef struct chart_panel {
  const fleet_run *run; /* the caller's run it draws (not copied: keep the runs) */
  chart_box frame; /* in the chart; the panel's own coordinates start at its corner */
  chart_box inner; /* in the panel: where its texts must lie */
  int n_title;
  chart_text title[CHART_MAX_LINES]; /* "scenario / mode" */
  int n_subtitle;
  chart_text subtitle[CHART_MAX_LINES]; /* connections, busiest server, fair random */
  chart_plot plots[2];                  /* calls, connections */
  int n_names;
  chart_text names[FLEET_MAX_SERVERS]; /* server names under the bars (every k-th when crowded) */
} chart_panel;

typedef struct fleet_chart_layout {
  double width, height;
  chart_box header; /* where the chart's title and legend must lie */
  int n_header;
  chart_text header_lines[CHART_HEADER_LINES];
  int n_panels;
  chart_panel *panels; /* n_panels, owned */
} fleet_chart_layout;

/* Lays out the chart of runs[0..n) (incomplete runs get no panel). Returns
 * 0, or -1 when out is NULL, runs is NULL with n > 0, or memory runs out;
 * free the result with io_fleet_chart_layout_free. */
int io_fleet_chart_layout(const fleet_run *runs, int n, fleet_chart_layout *out);

/* Frees what io_fleet_chart_layout allocated; the layout is left empty. */
void io_fleet_chart_layout_free(fleet_chart_layout *layout);

/* Pointers to every text of panel p (titles, subtitles, plot labels, ticks,
 * server names) into out[0..cap); returns how many there are (which may
 * exceed cap: only cap are written). */
int io_fleet_chart_panel_texts(const chart_panel *p, const chart_text **out, int cap);

#ifdef __cplusplus
}
#endif

#endif
