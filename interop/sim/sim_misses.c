/* sim_misses: a grid's cells that miss a target clause (sim_misses.h). */
#include "interop/sim/sim_misses.h"

#include <stdio.h>

int io_sim_misses_note(sim_misses *m, double figure, double limit, double ca_n) {
  if (!(figure > limit + SIM_MISS_EPS)) return 0;
  if (m->over == 0 || ca_n < m->ca_n_min) m->ca_n_min = ca_n;
  if (m->over == 0 || ca_n > m->ca_n_max) m->ca_n_max = ca_n;
  m->over++;
  return 1;
}

void io_sim_misses_json(const char *name, const sim_misses *m) {
  printf(",\"%s_cells_over\":%zu,\"%s_over_ca_n_min\":%.15g,\"%s_over_ca_n_max\":%.15g", name,
         m->over, name, m->ca_n_min, name, m->ca_n_max);
}

void io_sim_misses_text(const sim_misses *m, int width) {
  char buf[64];
  if (m->over == 0)
    snprintf(buf, sizeof buf, "0");
  else
    snprintf(buf, sizeof buf, "%zu (C*A/N %.2f-%.2f)", m->over, m->ca_n_min, m->ca_n_max);
  printf("%-*s", width, buf);
}
