/*
 * ap_health_testing: what tests read of a member's health. Only tests
 * include this header; no product code calls these.
 */
#ifndef AP_TESTING_HEALTH_TESTING_H
#define AP_TESTING_HEALTH_TESTING_H

#include "policy/core/pick/ap_health.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A health on the heap, as ap_health_init_at() builds it (NULL when out
 * of memory); free with ap_health_destroy(), which ends it first. */
ap_health *ap_health_create_in(ap_health_group *group);
/* The same without a group. */
ap_health *ap_health_create(void);
void ap_health_destroy(ap_health *health);

/* The length of the current ejection in ms, its probation included (0
 * when the endpoint is in, or on probation at the bound without an
 * ejection; NULL: 0). */
uint32_t ap_health_ejection_length_ms(const ap_health *health);

/* The endpoint's failure share over its last whole sweep window, ppm; -1
 * before the first (and for NULL). */
int64_t ap_health_failure_share_ppm(const ap_health *health);

/* 1 when the endpoint holds one of its group's slots (ejected, or on
 * probation after an ejection); 0 otherwise and for NULL. */
int ap_health_holds_slot(const ap_health *health);

/* Failures in the current run (0 for NULL). */
uint32_t ap_health_failure_run(const ap_health *health);

/* The endpoint's latency EWMA in ms; -1 before the first sample or for
 * NULL. */
double ap_health_latency_ms(const ap_health *health);

#ifdef __cplusplus
}
#endif

#endif /* AP_TESTING_HEALTH_TESTING_H */
