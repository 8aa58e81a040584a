/*
 * churn_model: what the core predicts for one real fleet. Given the address
 * strings the policy sees ("127.0.0.10:PORT", ...), it orders them as the
 * policy does (ap_order_endpoints), builds the ring with weight 1 each,
 * computes every client's aperture (peer index c of `clients`) and so
 * the sessions each server holds, and the sessions a change of the address
 * list opens and closes. No widening: the prediction is for fleets whose
 * members do not fail (a removed server leaves the resolver's answer
 * before it stops). gRPC's round_robin is AP_MODE_MESH here.
 * Stable mode's membership follows keys, not ring positions: endpoint key
 * = ap_stable_key(the address string, exactly as given here), peer key of
 * client c = ap_stable_ordinal_key(c) (the fleet's clients have a static
 * peer index and count), as the policy computes it.
 */
#ifndef APERTURE_INTEROP_CHURN_MODEL_H
#define APERTURE_INTEROP_CHURN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct churn_model_fleet {
  ap_mode mode;
  uint32_t clients;      /* peer count; client c has peer index c */
  uint32_t min_aperture; /* the config's minAperture */
  /* random mode: client c's randomSeed (clients entries); NULL elsewhere */
  const uint64_t *seeds;
} churn_model_fleet;

/* Seed the fleet gives client c in random mode (also in its config), so
 * the prediction uses the same seeds as the real clients. */
uint64_t io_churn_model_seed(uint32_t client);

/* The model's per-client and per-server views. The fleet reports only
 * io_churn_model_diff; these two stay public so the model's test can check
 * each client's aperture and the session totals against the simulator.
 *
 * Whether client `client` holds each address: member[i] = 1 when
 * addresses[i] is in its aperture, else 0 (n entries). AP_EINVAL on NULL
 * arguments, duplicate addresses or client >= clients; AP_ERANGE on n == 0. */
int io_churn_model_members(const churn_model_fleet *fleet,
                        const char *const *addresses, size_t n,
                        uint32_t client, uint8_t *member, ap_error *err);

/* Sessions per address over all clients: sessions[i] = how many clients
 * hold addresses[i] (n entries); *total (when not NULL) their sum. The
 * fleet's rows print only differences (io_churn_model_diff); this per-address
 * view is how the model is checked against the simulator's session model
 * address by address (tests/interop/churn_model_test.cc). */
int io_churn_model_sessions(const churn_model_fleet *fleet,
                         const char *const *addresses, size_t n,
                         long *sessions, long *total, ap_error *err);

/* The change from address list `before` to `after`. */
typedef struct churn_model_change {
  long sessions_before;
  long sessions_after;
  long changed; /* sessions closed + opened, over all clients */
  /* sessions on addresses in only one of the lists (the removed server's
   * before, the added one's after): what must change at least */
  long optimum;
} churn_model_change;

int io_churn_model_diff(const churn_model_fleet *fleet,
                     const char *const *before, size_t n_before,
                     const char *const *after, size_t n_after,
                     churn_model_change *out, ap_error *err);

#ifdef __cplusplus
}
#endif

#endif
