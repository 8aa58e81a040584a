/*
 * peer_churn: what one client joining or leaving a fleet changes, on the
 * core's own apertures. The servers stay put (a ring of n equal servers);
 * the clients are identities 0..C-1 at peer indices 0..C-1 of C. A joiner
 * (identity C) takes peer index j of C+1 and shifts the clients at j and
 * after by one; a leaver at index l shifts those after it back by one.
 * Every client then holds the aperture of its new (index, count): the
 * sessions changed are the ones closed plus opened over all clients; the
 * optimum is the joiner's (or the leaver's) own sessions.
 * Every fleet is computed from its clients' identities in peer-index order
 * (sessions.h), in every mode alike: identity i keeps random seed
 * io_sim_client_seed(0, i) and, in stable mode, key
 * ap_stable_ordinal_key(i); clients are compared by identity.
 */
#ifndef APERTURE_INTEROP_PEER_CHURN_H
#define APERTURE_INTEROP_PEER_CHURN_H

#include <stddef.h>
#include <stdint.h>

#include "interop/common/sessions.h"
#include "policy/core/subset/ap_aperture.h"
#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The apertures of one fleet, as the common session model computes them:
 * slot s of s.clients is peer index s, held by client identity ids[s]. */
typedef struct peer_fleet {
  ap_mode mode;
  uint32_t count;  /* the fleet's clients (its peer count) */
  uint32_t *slot;  /* identity -> slot, identities 0..count (UINT32_MAX:
                      not in this fleet); owned */
  io_sessions s;
} peer_fleet;

/* The fleet of `count` clients, identities 0..count-1 at their own index. */
int io_peer_fleet_compute(ap_mode mode, uint32_t n, uint32_t count,
                          uint32_t min_aperture, peer_fleet *out, ap_error *err);

/* The fleet of count + 1 after the joiner (identity count) took index j
 * (0 <= j <= count). */
int io_peer_fleet_compute_joined(ap_mode mode, uint32_t n, uint32_t count, uint32_t j,
                                 uint32_t min_aperture, peer_fleet *out, ap_error *err);

/* The fleet of count - 1 after the client at index `leaver` (< count)
 * left; every later client takes the next lower index. count >= 2. */
int io_peer_fleet_compute_without(ap_mode mode, uint32_t n, uint32_t count,
                                  uint32_t leaver, uint32_t min_aperture,
                                  peer_fleet *out, ap_error *err);
void io_peer_fleet_free(peer_fleet *f);

/* Sessions of the whole fleet. */
size_t io_peer_fleet_sessions(const peer_fleet *f);

/* Sessions changed when a client joins: `before` is the fleet of C,
 * `after` its io_peer_fleet_compute_joined(). *optimum gets the joiner's
 * sessions. */
size_t io_peer_churn_join(const peer_fleet *before, const peer_fleet *after,
                          size_t *optimum);

/* Sessions changed when the client at index l leaves: `after` is
 * io_peer_fleet_compute_without(l) of `before` (C >= 2). *optimum gets the
 * leaver's sessions. */
size_t io_peer_churn_leave(const peer_fleet *before, const peer_fleet *after,
                           uint32_t l, size_t *optimum);

/* Highest server load over the mean while the fleet disagrees about a
 * join: the joiner and the first k of the C old clients (in index order)
 * already at C+1, the rest still at C; the worst over every k in [0, C].
 * Each client sends rate 1. */
double io_peer_disagree_join_load(const peer_fleet *before, const peer_fleet *after);

/* The same for a leave at index l: the leaver gone, the first k of the
 * others at C-1, the rest still at C; worst over k. */
double io_peer_disagree_leave_load(const peer_fleet *before,
                                   const peer_fleet *after, uint32_t l);

/* Highest server load over the mean when all C clients agree. */
double io_peer_agreed_load(const peer_fleet *f);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_PEER_CHURN_H */
