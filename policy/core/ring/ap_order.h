/*
 * ap_order: the endpoint order every client computes identically from the
 * address strings alone, whatever order the resolver returned them in, and a
 * fingerprint of the ordered list so operators can check that all clients
 * agree.
 *
 * Order: by ap_hash_str(host part) then by port number then by the whole
 * string (so that hosts spread over the ring instead of clustering by
 * lexical order, as Finagle orders by a hash of IP then port).
 */
#ifndef AP_ORDER_H
#define AP_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"
#include "policy/core/ap_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes into order[0..n) the input positions of `addresses` in ring order:
 * order[k] = the input position of the k-th endpoint on the ring.
 * Fails with AP_EINVAL on NULL arguments, a NULL or empty address, or a
 * duplicate address (the message names it), AP_ERANGE when n == 0 or
 * n > AP_MAX_ENDPOINTS, AP_ENOMEM on allocation failure. */
int ap_order_endpoints(const char *const *addresses, size_t n, size_t *order,
                       ap_error *err);

/* Fingerprint of the list taken in `order` (as produced above; NULL means
 * the given order). Equal lists give equal values on every client. */
uint64_t ap_order_fingerprint(const char *const *addresses, const size_t *order,
                              size_t n);

/* Formats a fingerprint as 16 lowercase hex digits into out[17]. */
void ap_fingerprint_format(uint64_t fingerprint, char out[17]);

#ifdef __cplusplus
}
#endif

#endif /* AP_ORDER_H */
