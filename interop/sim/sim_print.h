/*
 * sim_print: the pieces every point-and-grid verb (churn, peers,
 * placement) prints the same way, so that their tables and JSON name a
 * fleet alike.
 */
#ifndef APERTURE_INTEROP_SIM_PRINT_H
#define APERTURE_INTEROP_SIM_PRINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Prints `"servers":N,"clients":C,"min_aperture":A,"<list>":[` to stdout:
 * a fleet point's fields in JSON, ending in its open list of per-mode (or
 * per-variant) objects. `list` NULL prints "modes". */
void io_sim_json_point(uint32_t servers, uint32_t clients, uint32_t min_aperture,
                       const char *list);

/* Prints `"grid":{"servers":[LO,HI],"step":S,"clients":[LO,HI],
 * "positions":P,"modes":[` to stdout: a grid's bounds, ending in its open
 * list of per-mode objects. */
void io_sim_json_grid(uint32_t servers_lo, uint32_t servers_hi, uint32_t step,
                      uint32_t clients_lo, uint32_t clients_hi, uint32_t positions);

/* Prints "C clients, N servers, min aperture A." to stdout: the first
 * words of a point's text table. */
void io_sim_text_point(uint32_t servers, uint32_t clients, uint32_t min_aperture);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_SIM_PRINT_H */
