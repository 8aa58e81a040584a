/*
 * peer_churn: what one client joining or leaving a fleet changes, on the
 * core's own apertures. The servers stay put (a ring of n equal servers);
 * the clients are identities 0..C-1 at peer indices 0..C-1 of C. A joiner
 * (identity C) takes peer index j of C+1 and shifts the clients at j and
 * after by one; a leaver at index l shifts those after it back by one.
 * Every client then holds the aperture of its new (index, count): the
 * sessions changed are the ones closed plus opened over all clients; the
 * optimum is the joiner's (or the leaver's) own sessions.
 * Random mode depends on the client's seed, not on its index: identity i
 * keeps seed io_sim_client_seed(0, i). Stable mode depends on the
 * clients' keys: client identity i has key ap_stable_ordinal_key(i) (a
 * joiner the new identity C), and a fleet without a leaver is built from
 * the others' keys (io_peer_fleet_compute_without), one plan per fleet.
 */
#ifndef APERTURE_INTEROP_PEER_CHURN_H
#define APERTURE_INTEROP_PEER_CHURN_H

#include <stddef.h>
#include <stdint.h>

#include "interop/common/sessions.h"
#include "policy/core/ap_aperture.h"
#include "policy/core/ap_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The apertures of one fleet size, as the common session model
 * (interop/common/sessions.h) computes them: client s of s.clients is slot
 * s, peer index s (random mode: identity s, with one extra client so that
 * a joiner has one), each with its members' request shares. */
typedef struct peer_fleet {
  ap_mode mode;
  uint32_t count;   /* the fleet's clients (its peer count) */
  uint32_t without; /* stable: the identity left out (slots of later
                       identities are one less); UINT32_MAX: none */
  io_sessions s;
} peer_fleet;

/* Computes the apertures of `count` clients on n equal servers. */
int io_peer_fleet_compute(ap_mode mode, uint32_t n, uint32_t count,
                       uint32_t min_aperture, peer_fleet *out, ap_error *err);

/* The fleet of `count` - 1 clients after client `leaver` (< count) left.
 * Stable: identities 0..count-1 but `leaver`, with their own keys; the
 * other modes: io_peer_fleet_compute(count - 1), where every later client
 * takes the next lower index. count >= 2. */
int io_peer_fleet_compute_without(ap_mode mode, uint32_t n, uint32_t count,
                                  uint32_t leaver, uint32_t min_aperture,
                                  peer_fleet *out, ap_error *err);
void io_peer_fleet_free(peer_fleet *f);

/* Sessions of the whole fleet. */
size_t io_peer_fleet_sessions(const peer_fleet *f);

/* Sessions changed when a client joins at index j (0 <= j <= C): `before`
 * has count C, `after` count C+1. *optimum gets the joiner's sessions. */
size_t io_peer_churn_join(const peer_fleet *before, const peer_fleet *after,
                       uint32_t j, size_t *optimum);

/* Sessions changed when the client at index l leaves: `after` has count
 * C-1 (C >= 2; stable: built without l). *optimum gets the leaver's
 * sessions. */
size_t io_peer_churn_leave(const peer_fleet *before, const peer_fleet *after,
                        uint32_t l, size_t *optimum);

/* Highest server load over the mean while the fleet disagrees about a
 * join at index j: the joiner and the first k of the C old clients (in
 * index order) already at C+1, the rest still at C; the worst over every
 * k in [0, C]. Each client sends rate 1. */
double io_peer_disagree_join_load(const peer_fleet *before,
                               const peer_fleet *after, uint32_t j);

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
