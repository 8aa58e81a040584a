/*
 * sessions: the (client, server) sessions of one service on a ring of n
 * equal servers, as sorted ring indices per client, and the number of
 * sessions that change when one server leaves or joins.
 *
 * Servers have identities; on the ring of n servers identity == ring index
 * unless the caller names them (io_sessions_compute_ids()). A fleet after a
 * membership step is computed from its identities like any fleet, in every
 * mode, and io_sessions_changed() compares two fleets by identity. Which
 * inputs a mode's apertures follow is the core's business: the ring and the
 * coordinate, and in stable mode also the service's plan from the servers'
 * and clients' keys (io_service_plan_create(), ordinal keys of the
 * identities here).
 * One model for the simulator's churn and peers verbs and the fleet's
 * prediction (fleet/churn_model.h maps the fleet's addresses onto it).
 * Pure C on the core, no gRPC.
 */
#ifndef APERTURE_INTEROP_COMMON_SESSIONS_H
#define APERTURE_INTEROP_COMMON_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ap_error.h"
#include "policy/core/stable/ap_stable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pseudo-mode for the baseline: client c connects to servers
 * list[(hash(c) + i) % n], i < A (seed 001's hash-mod subsetting). */
#define IO_HASH_MOD ((int)-1)

typedef struct io_sessions {
  uint32_t ring_size;
  uint32_t clients;    /* clients computed (peer_count + extra) */
  uint32_t peer_count; /* the peer count every client sees */
  size_t total;        /* number of sessions */
  uint32_t *idx;       /* ring indices, sorted within each client */
  double *share;       /* each session's request share: its member's pick
                          weight over its client's total (1/A in hash-mod) */
  size_t *start;       /* clients + 1 offsets into idx and share */
  uint32_t *server_ids; /* ring index -> server identity (owned); NULL:
                           identity == ring index */
} io_sessions;

/* Random-mode seed of client c; ctx is the caller's. */
typedef uint64_t (*io_sessions_seed_fn)(uint32_t client, const void *ctx);

/* Computes the sessions of `clients` clients (peer count `clients`) in
 * `mode` (an ap_mode or IO_HASH_MOD) on a ring of `n` equal servers;
 * client c's random seed is seed(c, ctx) (seed NULL: 0). AP_EINVAL on a
 * NULL out, AP_ERANGE on n == 0, the core's errors
 * otherwise. *out is overwritten; free with io_sessions_free(). */
int io_sessions_compute(int mode, uint32_t n, uint32_t clients,
                        uint32_t min_aperture, io_sessions_seed_fn seed,
                        const void *seed_ctx, io_sessions *out,
                        ap_error *err);

/* The same for a fleet of `peer_count` clients plus `extra` more that see
 * the same peer count: client c takes peer index c % peer_count and seed
 * seed(c, ctx). In random mode, where a client's aperture follows its seed
 * alone, client peer_count of a fleet of C is the one that would join it
 * (the simulator's peers verb). io_sessions_compute is extra = 0. Stable
 * mode keys server j and client c by ap_stable_ordinal_key(j) and (c)
 * (no extra clients). */
int io_sessions_compute_extra(int mode, uint32_t n, uint32_t peer_count,
                              uint32_t extra, uint32_t min_aperture,
                              io_sessions_seed_fn seed, const void *seed_ctx,
                              io_sessions *out, ap_error *err);

/* The same for a fleet whose endpoints and clients carry keys, as the
 * policy keys them: endpoint_keys[k] of ring index k, client_keys[c] of
 * peer index c (peer_count entries). Stable mode builds the service's plan
 * from them (both required, no extra clients); the other modes ignore them
 * (NULL allowed). The other arguments as io_sessions_compute_extra. */
int io_sessions_compute_keyed(int mode, uint32_t n, const uint64_t *endpoint_keys,
                              uint32_t peer_count, uint32_t extra, const uint64_t *client_keys,
                              uint32_t min_aperture, io_sessions_seed_fn seed,
                              const void *seed_ctx, io_sessions *out, ap_error *err);

void io_sessions_free(io_sessions *s);

/* A mode's service-wide input beyond the ring and each client's
 * coordinate, the one path every caller of the core takes: in stable mode
 * the plan (ap_stable.h) of n endpoints with keys endpoint_keys (ring
 * order) and weights (NULL: equal) and `clients` clients with keys
 * client_keys (peer-index order), to pass as ap_subset_params.stable_plan
 * to every client's ap_aperture_compute(); NULL in the other modes (and
 * with no clients). *plan owns the result (ap_stable_plan_destroy()).
 * Errors: AP_EINVAL on a NULL plan, the core's otherwise. */
int io_service_plan_create(int mode, size_t n, const uint64_t *endpoint_keys,
                           const double *weights, uint32_t clients, const uint64_t *client_keys,
                           uint32_t min_aperture, ap_stable_plan **plan, ap_error *err);

/* ap_stable_ordinal_key() of ids[0..n) (ids NULL: of 0..n-1), the keys of
 * the simulator's numbered servers and clients; malloc'ed (free()), NULL
 * when out of memory. */
uint64_t *io_ordinal_keys(const uint32_t *ids, uint32_t n);

/* The sessions of one fleet given by identities: n servers with distinct
 * identities server_ids[0..n) in ring order (NULL: 0..n-1) and `clients`
 * clients with distinct identities client_ids[0..clients) in peer-index
 * order (NULL: 0..clients-1); peer count `clients`. Every mode computes
 * client c at peer index c on the ring of n, with random seed
 * seed(client_ids[c], ctx); stable mode's plan has endpoint keys
 * ap_stable_ordinal_key(server identity) and client keys
 * ap_stable_ordinal_key(client identity), so in stable mode identities
 * decide membership and in the others they only label the ring (hash-mod
 * included: its list is the ring). *out keeps a copy of the server
 * identities. Errors as io_sessions_compute. */
int io_sessions_compute_ids(int mode, uint32_t n, const uint32_t *server_ids,
                            uint32_t clients, const uint32_t *client_ids,
                            uint32_t min_aperture, io_sessions_seed_fn seed,
                            const void *seed_ctx, io_sessions *out,
                            ap_error *err);

/* Sessions changed (closed + opened) from `before` to `after`, compared
 * by server identity, client c of one being client c of the other (the
 * caller lines them up); clients beyond the shorter fleet count whole.
 * (size_t)-1 when out of memory. */
size_t io_sessions_changed(const io_sessions *before, const io_sessions *after);

/* Sessions of the server with identity `id` (0 when it is not in s). */
size_t io_sessions_of_server(const io_sessions *s, uint32_t id);

/* Highest expected server load over the mean: every client sends load 1,
 * split by its sessions' shares; the mean is clients / ring size. */
double io_sessions_load_max(const io_sessions *s);

/* Name of a mode or "hash-mod". */
const char *io_sessions_mode_name(int mode);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_COMMON_SESSIONS_H */
