/*
 * sim_balance_skew: the part of `sim balance` for clients at unequal rates
 * (--client-rates SPEC, --seed S, --draws K): per mode, the expected load
 * max/mean without and with the mechanism that evens it (sim_skew.h), and
 * the connections it costs, over K draws of the rates (seeds S .. S+K-1;
 * a list or one:X draws the same rates every time).
 */
#ifndef APERTURE_INTEROP_SIM_BALANCE_SKEW_H
#define APERTURE_INTEROP_SIM_BALANCE_SKEW_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_skew_args {
  const char *spec; /* --client-rates */
  uint64_t seed;    /* --seed */
  uint32_t draws;   /* --draws */
  uint32_t servers, clients, min_aperture;
} sim_skew_args;

/* Runs every mode and keeps the figures for the printers below. Returns
 * 0, or prints "sim balance: ..." to stderr and returns -1 (an error of
 * the core or out of memory). */
typedef struct sim_skew_table sim_skew_table;
int io_sim_balance_skew_run(const sim_skew_args *a, sim_skew_table **out);
void io_sim_balance_skew_free(sim_skew_table *t);

/* Prints `"client_rates":{...},"skew":{...}` (no braces around) and the
 * text table. */
void io_sim_balance_skew_json(const sim_skew_table *t);
void io_sim_balance_skew_text(const sim_skew_table *t);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_SIM_BALANCE_SKEW_H */
