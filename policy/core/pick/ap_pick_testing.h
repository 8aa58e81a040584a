/*
 * ap_pick_testing: what tests read of a pick table. Only tests include this
 * header; no product code calls these.
 */
#ifndef AP_PICK_TESTING_H
#define AP_PICK_TESTING_H

#include "policy/core/pick/ap_pick.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of slots (the picker only draws). */
size_t ap_pick_table_size(const ap_pick_table *table);

/* Weight of slot i (0 when out of range). */
double ap_pick_table_weight(const ap_pick_table *table, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* AP_PICK_TESTING_H */
