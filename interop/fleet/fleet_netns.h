/* The netns network (--network netns): every server and every client is a
 * network namespace of its own with one address, the namespaces joined by
 * veth pairs to a bridge that lives in a namespace of its own, with no
 * route out. Nothing is added to the runner's (root) namespace: no link,
 * no address, no route; the runner starts processes with
 * `ip netns exec NS ...` and reaches a process's own loopback (its status
 * server) with a socket made inside that namespace (setns in a short-lived
 * thread), handed to gRPC as a connected fd.
 *
 * Layout, for runner pid P and a tag T of 4 hex digits from the clock
 * (names unique per run, also across pid namespaces), "apP-T-" as prefix:
 *   apP-T-br    bridge br0 = 198.18.0.1/15, MAC fixed; dnsmasq listens here
 *   apP-T-s<k>  eth0 = 198.18.0.(10 + k)/15, k < 245 (server slot k)
 *   apP-T-c<i>  eth0 = 198.18.(1 + i / 254).(1 + i % 254)/15, i < 2540
 * each host's eth0 paired with a port named s<k> or c<i> on br0. A host's
 * namespace is made the first time a process starts there and kept for the
 * run (a server restarted in its slot keeps its address).
 * Teardown (io_fleet_net_close, from atexit and the runner's signal
 * handler) unmounts and unlinks every /run/netns/apP-T-* it made, which is
 * what `ip netns del` does; each namespace, with its veth ends and the
 * bridge, goes when its last process (SIGKILLed just before) has exited. */
#ifndef APERTURE_INTEROP_FLEET_NETNS_H
#define APERTURE_INTEROP_FLEET_NETNS_H

#include <stddef.h>

#include "interop/fleet/fleet_net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The netns network's operations (fleet_net.h); io_fleet_netns_open first. */
extern const fleet_net_ops io_fleet_net_netns;

/* Checks that namespaces can be made (root, the ip command, `ip netns
 * add`) and makes the bridge namespace. Returns 0, or -1 with the reason
 * in err (e.g. "--network netns needs root"), having made nothing that
 * io_fleet_net_close would not remove. */
int io_fleet_netns_open(char *err, size_t len);

/* The namespace name prefix of this run ("apP-T-"). */
const char *io_fleet_netns_prefix(void);

#ifdef __cplusplus
}
#endif

#endif
