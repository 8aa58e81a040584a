/*
 * sessions: the (client, server) sessions of one service on a ring of n
 * equal servers, as sorted ring indices per client, and the number of
 * sessions that change when one server leaves or joins.
 *
 * Servers have identities; on the ring of n servers identity == ring index.
 * Removing the server at ring position r leaves a ring of n-1 whose index j
 * is identity j (j < r) or j+1; adding a server at position p gives a ring
 * of n+1 whose index p is the new identity n. The core's apertures depend
 * only on the ring and the client's parameters, so one set of apertures per
 * ring size serves every removal/insertion position by relabelling.
 * That shortcut holds for every mode but stable, whose apertures follow the
 * servers' and clients' keys: io_sessions_compute_ids() builds one fleet
 * from explicit identities (stable: keys ap_stable_ordinal_key(identity),
 * one plan per fleet) and io_sessions_changed() compares two fleets by
 * identity, so a removal or a replacement is two computed fleets.
 * One model for the simulator's churn and peers verbs and the fleet's
 * prediction (fleet/churn_model.h maps the fleet's addresses onto it).
 * Pure C on the core, no gRPC.
 */
#ifndef APERTURE_INTEROP_COMMON_SESSIONS_H
#define APERTURE_INTEROP_COMMON_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_aperture.h"
#include "policy/core/ap_error.h"

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
 * (the simulator's peers verb). io_sessions_compute is extra = 0. */
int io_sessions_compute_extra(int mode, uint32_t n, uint32_t peer_count,
                              uint32_t extra, uint32_t min_aperture,
                              io_sessions_seed_fn seed, const void *seed_ctx,
                              io_sessions *out, ap_error *err);

void io_sessions_free(io_sessions *s);

/* The sessions of one fleet given by identities: n servers with distinct
 * identities server_ids[0..n) in ring order (NULL: 0..n-1) and `clients`
 * clients with distinct identities client_ids[0..clients) in peer-index
 * order (NULL: 0..clients-1); peer count `clients`. Stable mode builds one
 * plan with endpoint keys ap_stable_ordinal_key(server identity) and client
 * keys ap_stable_ordinal_key(client identity) and reads its rows; the other
 * modes compute client c at peer index c on the ring of n, with random seed
 * seed(client_ids[c], ctx), so identities only label the ring. *out keeps a
 * copy of the server identities. Errors as io_sessions_compute, AP_EINVAL
 * on hash-mod (it has no identities here). */
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

/* Sessions changed (closed + opened) from `before` (ring n) to `after`
 * (ring n-1) when the server at position r leaves; *optimum gets the
 * sessions the removed server had. Relabels by position (see above): not
 * for stable mode, which needs io_sessions_changed(). */
size_t io_sessions_removed(const io_sessions *before,
                            const io_sessions *after, uint32_t r,
                            size_t *optimum);

/* Same when a server joins at position p (after has ring n+1); *optimum
 * gets the sessions the new server has afterwards. */
size_t io_sessions_added(const io_sessions *before,
                          const io_sessions *after, uint32_t p,
                          size_t *optimum);

/* Name of a mode or "hash-mod". */
const char *io_sessions_mode_name(int mode);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_COMMON_SESSIONS_H */
