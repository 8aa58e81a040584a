/*
 * ap_status_budget: the bytes a status service's GetRingState answers hold
 * at once, being built or waiting for their clients to read them, against
 * a limit. A lock-free counter: the threads that build answers run at the
 * idle scheduling class and must never hold a lock another thread waits
 * for.
 */
#ifndef AP_STATUS_BUDGET_H
#define AP_STATUS_BUDGET_H

#include <stdatomic.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ap_status_budget {
  _Atomic size_t held; /* bytes reserved now */
  size_t limit;        /* most bytes reserved at once, but see reserve() */
} ap_status_budget;

/* Starts an empty budget of `limit` bytes. NULL is ignored. */
void ap_status_budget_init(ap_status_budget *budget, size_t limit);

/* Reserves `bytes` and returns 1 when they fit beside what is held, or
 * when nothing is held (so that one answer, whatever its size, can always
 * be built; the caller refuses one larger than the limit itself); returns
 * 0, reserving nothing, otherwise or when budget is NULL. */
int ap_status_budget_reserve(ap_status_budget *budget, size_t bytes);

/* Gives back `bytes` reserved earlier (at most what is held). */
void ap_status_budget_release(ap_status_budget *budget, size_t bytes);

/* Bytes reserved now (0 for NULL). */
size_t ap_status_budget_held(ap_status_budget *budget);

#ifdef __cplusplus
}
#endif

#endif /* AP_STATUS_BUDGET_H */
