/* The fleet chart as SVG, drawn from its layout (fleet_chart_layout.h). */
#ifndef APERTURE_INTEROP_FLEET_CHART_SVG_H
#define APERTURE_INTEROP_FLEET_CHART_SVG_H

#include <stdio.h>

#include "interop/fleet/fleet_chart_layout.h"
#include "interop/fleet/fleet_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `layout` as an SVG document to f. Panels are groups translated to
 * their corner; elements carry class and data-* attributes (scenario,
 * mode, quantity, server, value, axis maximum) so that the chart can be
 * checked against the report. Returns 0, or -1 when an argument is NULL
 * or writing fails. */
int io_fleet_chart_write_svg(FILE *f, const fleet_chart_layout *layout);

/* Writes an SVG chart to `path`: one panel per complete run (a row per
 * scenario), bars of per-server calls and connection peaks on two axes
 * shared by every panel, with numbered ticks, the mean and the fair random
 * balancer's expected busiest server marked. Returns 0, or -1 when the file
 * cannot be written. */
int io_fleet_report_svg(const char *path, const fleet_run *runs, int n);

#ifdef __cplusplus
}
#endif

#endif
