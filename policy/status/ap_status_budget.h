/*
 * ap_status_budget: the bytes a status service's GetRingState answers hold
 * at once, being built or waiting for their clients to read them, against
 * a limit. A lock-free counter: the threads that build answers run at the
 * idle scheduling class and must never hold a lock another thread waits
 * for.
 */
#ifndef AP_STATUS_BUDGET_H
#define AP_STATUS_BUDGET_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Read and written only through the functions below, atomically. */
typedef struct ap_status_budget {
  size_t held;  /* bytes reserved now, never more than `limit` */
  size_t limit;
} ap_status_budget;

/* Starts an empty budget of `limit` bytes. NULL is ignored. */
void ap_status_budget_init(ap_status_budget *budget, size_t limit);

/* Reserves `bytes` and returns 1 when they fit beside what is held;
 * returns 0, reserving nothing, otherwise or when budget is NULL. */
int ap_status_budget_reserve(ap_status_budget *budget, size_t bytes);

/* Gives back `bytes` reserved earlier (at most what is held). */
void ap_status_budget_release(ap_status_budget *budget, size_t bytes);

/* Bytes reserved now (0 for NULL). */
size_t ap_status_budget_held(ap_status_budget *budget);

#ifdef __cplusplus
}
#endif

#endif /* AP_STATUS_BUDGET_H */
