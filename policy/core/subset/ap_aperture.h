/*
 * ap_aperture: which endpoints a client connects to, and with what weight.
 *
 * A client with coordinate (peer_index, peer_count) gets, in the default
 * continuous mode (Finagle's deterministic aperture):
 *   offset = peer_index / peer_count
 *   A      = min(min_aperture, N)                 (logical aperture)
 *   width  = min(1, ceil(A * peer_count / N) / peer_count)
 * and every endpoint whose arc overlaps [offset, offset + width) (mod 1) is a
 * member, with degree of intersection = overlap / arc width in (0, 1]. The
 * members are the physical aperture. Other modes compute members differently
 * (see ap_mode) but produce the same shape of result, so the policy and the
 * simulator treat all modes alike.
 *
 * Per mode (A = min(min_aperture, N), C = peer_count, i = peer_index):
 *   continuous  as above; members in ring order from the arc holding the
 *               offset; pick_weight = intersection x endpoint weight.
 *   smooth      offset = i/C, width = min(1, max(A/N, 1/C)); members as in
 *               continuous; pick_weight = (integral of 1/c(x) over the
 *               member's overlap) / arc width x endpoint weight, where c(x)
 *               is the number of the C windows covering x. Every window then
 *               has the same total weight and every endpoint's expected
 *               load is exactly proportional to its weight (derivation in
 *               ap_mode_smooth.c).
 *   discrete    the A endpoints clockwise from slot floor(i * N / C);
 *               offset = that arc's start, width = the members' arcs.
 *   random      A endpoints from a Fisher-Yates shuffle seeded with
 *               random_seed, listed in ring order; offset 0, width = the
 *               members' arcs.
 *   vdc         endpoint k at vdc(k), the client at vdc(i); the A endpoints
 *               met first clockwise from the client (by position); offset =
 *               vdc(i), width = distance from it to the first endpoint after
 *               the last member (the window holding exactly the members).
 *   mesh        every endpoint in ring order; offset 0, width 1.
 *   stable      row peer_index of the stable plan (ap_stable.h): members
 *               from the endpoints' and peers' keys, pick_weight = the
 *               member's share x members (1 on average); offset = the
 *               client's position on the key ring, width = members / N.
 * Full members (discrete, random, vdc, mesh) have intersection 1 and
 * pick_weight = endpoint weight.
 *
 * Window membership ignores slivers: an arc whose overlap is at most 1e-12
 * of its width (rounding where two boundaries coincide mathematically) is
 * not a member. Every aperture has at least one member.
 *
 * An ap_aperture is immutable after creation and safe to read from any thread.
 */
#ifndef AP_APERTURE_H
#define AP_APERTURE_H

#include <stddef.h>
#include <stdint.h>

#include "policy/core/ap_error.h"
#include "policy/core/ap_limits.h"
#include "policy/core/ring/ap_ring.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AP_DEFAULT_MIN_APERTURE 12u

typedef enum ap_mode {
  AP_MODE_CONTINUOUS = 0, /* Finagle deterministic aperture (default) */
  AP_MODE_DISCRETE = 1,   /* next A endpoints clockwise, integer slots */
  AP_MODE_RANDOM = 2,     /* random A endpoints from a per-process seed */
  AP_MODE_VDC = 3,        /* Van der Corput placement, next A clockwise */
  AP_MODE_MESH = 4,       /* every endpoint */
  AP_MODE_SMOOTH = 5,     /* width continuous in N, coverage-normalised */
  AP_MODE_STABLE = 6      /* membership from keys, shares from scaling */
} ap_mode;

/* Parses "continuous", "discrete", "random", "vdc", "mesh", "smooth",
 * "stable".
 * AP_EINVAL (message lists the accepted names) otherwise. */
int ap_mode_parse(const char *name, ap_mode *out, ap_error *err);

/* Lower-case name of a mode ("continuous", ...); "unknown" if invalid. */
const char *ap_mode_name(ap_mode mode);

typedef struct ap_subset_params {
  ap_mode mode;
  uint32_t peer_index;   /* this client's index, < peer_count */
  uint32_t peer_count;   /* clients in the service, <= AP_MAX_PEERS; 0 =
                            coordinate unknown, which selects random mode
                            (mesh, needing no coordinate, stays mesh) */
  uint32_t min_aperture; /* in [1, AP_MAX_PEERS]; default 12 */
  uint64_t random_seed;  /* random mode: per-process seed */
  /* Stable mode's one input beyond the ring and the coordinate (never
   * owned): the service's plan, built once per ring by the caller with
   * ap_stable_plan_create() from the endpoints' keys in ring order and
   * the peers' keys in peer-index order (ap_stable.h), for this ring's
   * size and peer_count. Required in stable mode with a known coordinate
   * (AP_EINVAL names it when NULL or sized for another ring); ignored by
   * the other modes. Every client of a service computes the same plan
   * from the same keys, which is what makes the rows agree. */
  const struct ap_stable_plan *stable_plan;
} ap_subset_params;

/* Fills `params` with defaults: continuous, no coordinate, min_aperture 12,
 * seed 0. */
void ap_subset_params_init(ap_subset_params *params);

/* Fills `out` with the subset parameters of client `client` of `clients`
 * in one service: the given mode, min_aperture and random-mode seed (the
 * other fields as ap_subset_params_init()). Validates what
 * ap_aperture_compute() would, with its messages (mode known, clients <=
 * AP_MAX_PEERS, client < clients unless clients is 0 = coordinate unknown,
 * min_aperture in [1, AP_MAX_PEERS]), so a caller learns of a bad
 * coordinate before it builds a ring. On error `out` holds the defaults. */
int ap_subset_params_for_client(ap_mode mode, uint32_t client,
                                uint32_t clients, uint32_t min_aperture,
                                uint64_t random_seed, ap_subset_params *out,
                                ap_error *err);

/* One endpoint of an aperture. */
typedef struct ap_member {
  uint32_t index;       /* ring index of the endpoint */
  double intersection;  /* degree of intersection with the window, (0, 1] */
  double pick_weight;   /* relative chance to be drawn by pick2 and the
                           weight P2C divides load by: intersection x
                           endpoint weight (coverage-normalised in smooth) */
  int widened;          /* 1 if added by ap_aperture_widen() */
} ap_member;

typedef struct ap_aperture ap_aperture;

/* Computes the aperture of a client on `ring`. Validates params (mode,
 * peer_index < peer_count, min_aperture >= 1, sizes within AP_MAX_PEERS);
 * peer_count 0 falls back to random mode (ap_aperture_mode() tells).
 * On success *out owns a new aperture (free with ap_aperture_destroy()). */
int ap_aperture_compute(const ap_ring *ring, const ap_subset_params *params,
                        ap_aperture **out, ap_error *err);

/* The continuous aperture of an explicit window: offset in [0, 1) and width
 * in (0, 1], both finite (AP_EINVAL names the bad one). Its mode is
 * continuous and its logical aperture the arcs the width spans,
 * ceil(width * N). */
int ap_aperture_from_window(const ap_ring *ring, double offset, double width,
                            ap_aperture **out, ap_error *err);

/* Health widening: returns a new aperture holding `base`'s members plus the
 * next endpoints after them along the ring (clockwise from the window's end;
 * for random mode, the next in the random order) until at least `min_ready`
 * members have ready[ring index] != 0, or every endpoint is a member. Added
 * members have intersection 1 and widened = 1; their pick_weight is the
 * endpoint weight times the base's scale R = sum(pick_weight) /
 * sum(intersection x endpoint weight) over the base's own members (R = 1
 * except in smooth mode, where it keeps added members comparable to the
 * coverage-normalised ones). For vdc "next" is the position order from the
 * client. `ready` has ap_ring_size() entries; base must come from a ring of
 * the same size (AP_EINVAL). When base already has enough ready members the
 * result equals base (a new copy). */
int ap_aperture_widen(const ap_ring *ring, const ap_aperture *base,
                      const uint8_t *ready, uint32_t min_ready,
                      ap_aperture **out, ap_error *err);

/* Frees an aperture (NULL is ignored). */
void ap_aperture_destroy(ap_aperture *aperture);

/* Mode actually used (random when the coordinate was unknown). */
ap_mode ap_aperture_mode(const ap_aperture *aperture);

/* Window of the client: offset and width on the ring (mesh: 0 and 1). */
double ap_aperture_offset(const ap_aperture *aperture);
double ap_aperture_width(const ap_aperture *aperture);

/* Logical aperture A = min(min_aperture, N). */
uint32_t ap_aperture_logical(const ap_aperture *aperture);

/* Number of members, widened ones included. */
size_t ap_aperture_count(const ap_aperture *aperture);

/* Members added by widening (they come last). */
size_t ap_aperture_widened_count(const ap_aperture *aperture);

/* Member k (0 <= k < count), in ring order starting at the window's start,
 * widened members after; NULL when k is out of range. */
const ap_member *ap_aperture_member(const ap_aperture *aperture, size_t k);

/* Finds the member with ring index `ring_index`; returns 1 and sets *slot
 * (when not NULL) if present, 0 otherwise. */
int ap_aperture_find(const ap_aperture *aperture, uint32_t ring_index,
                     size_t *slot);

#ifdef __cplusplus
}
#endif

#endif /* AP_APERTURE_H */
