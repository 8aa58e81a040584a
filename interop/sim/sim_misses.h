/*
 * sim_misses: the cells of a grid that miss one target clause (stable's design
 * targets: a figure of the cell against its limit), counted, with the
 * region they lie in as the range of C x A / N over those cells (N/C is
 * A over it), so a reader can tell which fleets are affected. A cell
 * misses when its figure exceeds the limit by more than SIM_MISS_EPS
 * (floating sums of a figure that is exactly at its limit are not a miss).
 */
#ifndef APERTURE_INTEROP_SIM_MISSES_H
#define APERTURE_INTEROP_SIM_MISSES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_MISS_EPS 1e-9

typedef struct sim_misses {
  size_t over;             /* cells whose figure is above the limit */
  double ca_n_min, ca_n_max; /* C x A / N over those cells; 0 when over is 0 */
} sim_misses;

/* Notes one cell: `figure` against `limit`, `ca_n` the cell's C x A / N.
 * Returns 1 if the cell missed (and was counted), else 0. */
int io_sim_misses_note(sim_misses *m, double figure, double limit, double ca_n);

/* Prints `,"<name>_cells_over":K,"<name>_over_ca_n_min":X,
 * "<name>_over_ca_n_max":Y` to stdout (X and Y 0 when K is 0). */
void io_sim_misses_json(const char *name, const sim_misses *m);

/* Prints "K" (when K is 0) or "K (C*A/N X-Y)" to stdout, padded on the
 * right to `width` characters. */
void io_sim_misses_text(const sim_misses *m, int width);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_SIM_MISSES_H */
