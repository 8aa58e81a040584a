/* ap_status_budget: a compare-and-swap loop on one counter. */
#include "policy/status/ap_status_budget.h"

void ap_status_budget_init(ap_status_budget *budget, size_t limit) {
  if (budget == NULL) return;
  atomic_init(&budget->held, 0);
  budget->limit = limit;
}

int ap_status_budget_reserve(ap_status_budget *budget, size_t bytes) {
  if (budget == NULL) return 0;
  size_t held = atomic_load(&budget->held);
  for (;;) {
    const int fits = held == 0 || (held <= budget->limit && bytes <= budget->limit - held);
    if (!fits) return 0;
    if (atomic_compare_exchange_weak(&budget->held, &held, held + bytes)) return 1;
  }
}

void ap_status_budget_release(ap_status_budget *budget, size_t bytes) {
  if (budget == NULL) return;
  size_t held = atomic_load(&budget->held);
  while (!atomic_compare_exchange_weak(&budget->held, &held, held >= bytes ? held - bytes : 0)) {
  }
}

size_t ap_status_budget_held(ap_status_budget *budget) {
  return budget != NULL ? atomic_load(&budget->held) : 0;
}
