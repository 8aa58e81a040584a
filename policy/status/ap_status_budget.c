/* ap_status_budget: a compare-and-swap loop on one counter (the compiler's
 * __atomic builtins, so that the header stays plain C and C++). */
#include "policy/status/ap_status_budget.h"

void ap_status_budget_init(ap_status_budget *budget, size_t limit) {
  if (budget == NULL) return;
  budget->limit = limit;
  __atomic_store_n(&budget->held, 0, __ATOMIC_SEQ_CST);
}

int ap_status_budget_reserve(ap_status_budget *budget, size_t bytes) {
  if (budget == NULL) return 0;
  size_t held = __atomic_load_n(&budget->held, __ATOMIC_SEQ_CST);
  for (;;) {
    if (held > budget->limit || bytes > budget->limit - held) return 0;
    if (__atomic_compare_exchange_n(&budget->held, &held, held + bytes, 1, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST))
      return 1;
  }
}

void ap_status_budget_release(ap_status_budget *budget, size_t bytes) {
  if (budget == NULL) return;
  size_t held = __atomic_load_n(&budget->held, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(&budget->held, &held, held >= bytes ? held - bytes : 0, 1,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
}

size_t ap_status_budget_held(ap_status_budget *budget) {
  return budget != NULL ? __atomic_load_n(&budget->held, __ATOMIC_SEQ_CST) : 0;
}
