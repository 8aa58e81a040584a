#include "interop/fleet/fleet_chart_svg.h"

#include <string.h>

/* Text and attribute values with XML's special characters escaped. */
static void write_escaped(FILE *f, const char *s) {
  for (; s != NULL && *s; s++) {
    switch (*s) {
      case '<':
        fputs("&lt;", f);
        break;
      case '>':
        fputs("&gt;", f);
        break;
      case '&':
        fputs("&amp;", f);
        break;
      case '"':
        fputs("&quot;", f);
        break;
      default:
        fputc(*s, f);
    }
  }
}

/* One placed text; `attrs` (may be "") goes first, e.g. a class. */
static void write_text(FILE *f, const chart_text *t, const char *attrs, const char *fill) {
  static const char *const kAnchor[] = {"", " text-anchor=\"middle\"", " text-anchor=\"end\""};
  fprintf(f, "<text%s x=\"%.1f\" y=\"%.1f\" font-size=\"%g\"%s%s", attrs, t->x, t->y, t->size,
          t->bold ? " font-weight=\"bold\"" : "", kAnchor[t->anchor]);
  if (fill != NULL) fprintf(f, " fill=\"%s\"", fill);
  fputc('>', f);
  write_escaped(f, t->text);
  fputs("</text>\n", f);
}

static void write_line(FILE *f, double x1, double x2, double y1, double y2, const char *attrs) {
  fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"%s/>\n", x1, x2, y1, y2, attrs);
}

/* The axis group (vertical axis first, then the base line, grid lines with
 * their numbered ticks, the label), then the bars, the fair band and the
 * mean. */
static void write_plot(FILE *f, const chart_plot *p) {
  const chart_box *a = &p->area;
  double right = a->x + a->w, bottom = a->y + a->h;
  fprintf(f, "<g class=\"axis\" data-quantity=\"%s\" data-max=\"%g\">\n", p->quantity, p->axis_max);
  write_line(f, a->x, a->x, a->y, bottom, " stroke=\"#333\"");
  write_line(f, a->x, right, bottom, bottom, " stroke=\"#333\"");
  for (int t = 0; t < CHART_TICKS; t++) {
    write_line(f, a->x + 1, right, p->tick_y[t], p->tick_y[t], " stroke=\"#ddd\"");
    char attrs[64];
    snprintf(attrs, sizeof(attrs), " class=\"tick\" data-value=\"%g\"", p->tick_values[t]);
    write_text(f, &p->ticks[t], attrs, NULL);
  }
  write_text(f, &p->label, " class=\"axis-label\"", "#555");
  fputs("</g>\n", f);
  for (int s = 0; s < p->n_bars; s++) {
    const chart_bar *b = &p->bars[s];
    fprintf(f, "<rect class=\"bar\" data-quantity=\"%s\" data-server=\"", p->quantity);
    write_escaped(f, b->server);
    fprintf(f,
            "\" data-value=\"%g\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"%s\"><title>",
            b->value, b->rect.x, b->rect.y, b->rect.w, b->rect.h, b->color);
    write_escaped(f, b->server);
    fprintf(f, ": %g %s</title></rect>\n", b->value, p->quantity);
  }
  /* over the bars, translucent: where their tops should end */
  if (p->has_fair) {
    fprintf(f,
            "<rect class=\"fair-band\" data-value=\"%.1f\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%.1f\" fill=\"#2ecc71\" fill-opacity=\"0.25\"/>\n",
            p->fair_top, a->x + 1, p->fair_y, a->w - 1, p->mean_y - p->fair_y);
    /* its top as a line too: at a 0-based scale the band is thin */
    write_line(f, a->x + 1, right, p->fair_y, p->fair_y, " stroke=\"#27ae60\"");
  }
  fprintf(f,
          "<line class=\"mean\" data-value=\"%.1f\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
          "y2=\"%.1f\" stroke=\"#111\" stroke-dasharray=\"4 3\"/>\n",
          p->mean, a->x, right, p->mean_y, p->mean_y);
}

static void write_panel(FILE *f, const chart_panel *p) {
  fputs("<g class=\"panel\" data-scenario=\"", f);
  write_escaped(f, p->run->scenario);
  fputs("\" data-mode=\"", f);
  write_escaped(f, p->run->mode);
  fprintf(f, "\" transform=\"translate(%.1f,%.1f)\">\n", p->frame.x, p->frame.y);
  fprintf(f, "<rect width=\"%.1f\" height=\"%.1f\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n",
          p->frame.w, p->frame.h);
  for (int i = 0; i < p->n_title; i++) write_text(f, &p->title[i], " class=\"title\"", NULL);
  for (int i = 0; i < p->n_subtitle; i++) {
    write_text(f, &p->subtitle[i], " class=\"subtitle\"", NULL);
  }
  for (int q = 0; q < 2; q++) write_plot(f, &p->plots[q]);
  for (int i = 0; i < p->n_names; i++) write_text(f, &p->names[i], " class=\"server\"", NULL);
  fputs("</g>\n", f);
}

int io_fleet_chart_write_svg(FILE *f, const fleet_chart_layout *layout) {
  if (f == NULL || layout == NULL) return -1;
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
          "font-family=\"%s\">\n",
          layout->width, layout->height, CHART_FONT_FAMILY);
  fputs("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
  for (int i = 0; i < layout->n_header; i++) {
    write_text(f, &layout->header_lines[i], " class=\"legend\"", NULL);
  }
  for (int k = 0; k < layout->n_panels; k++) write_panel(f, &layout->panels[k]);
  fputs("</svg>\n", f);
  return ferror(f) ? -1 : 0;
}

int io_fleet_report_svg(const char *path, const fleet_run *runs, int n) {
  if (path == NULL || (runs == NULL && n > 0)) return -1;
  fleet_chart_layout layout;
  if (io_fleet_chart_layout(runs, n, &layout) != 0) return -1;
  FILE *f = fopen(path, "w");
  int rc = f == NULL ? -1 : io_fleet_chart_write_svg(f, &layout);
  if (f != NULL && fclose(f) != 0) rc = -1;
  io_fleet_chart_layout_free(&layout);
  return rc;
}
