/* What the gray scenario's network faults (link-down, partition) do to a
 * fleet whose hosts run in network namespaces of their own: each host's
 * namespace is found from one of its processes (`ip netns identify PID`:
 * a namespace named under /run/netns, whatever network made it), so the
 * faults need nothing from the network but that. Every function runs the
 * `ip` command and waits for it (5 s at most); errors name what failed. */
#ifndef APERTURE_INTEROP_FLEET_GRAY_NETNS_H
#define APERTURE_INTEROP_FLEET_GRAY_NETNS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRAY_NETNS_NAME_LEN 64

/* The named network namespace process `pid` runs in. Returns 0 with its
 * name in ns, or -1 with the reason in err (no `ip` command, or the process
 * runs in the root namespace or an unnamed one). */
int io_fleet_gray_netns_of(int pid, char *ns, size_t ns_len, char *err, size_t err_len);

/* The device that holds IPv4 address `ip` in namespace ns (`ip -n NS -o
 * -4 addr show to IP/32`). Returns 0 with its name in dev, or -1 with the
 * reason in err. */
int io_fleet_gray_dev_of(const char *ns, const char *ip, char *dev, size_t dev_len, char *err,
                         size_t err_len);

/* `ip -n NS link set DEV down` (up 0) or `... up` (up 1). Returns 0, or -1
 * with the reason in err. */
int io_fleet_gray_link(const char *ns, const char *dev, int up, char *err, size_t err_len);

/* `ip -n NS route add blackhole IP/32` (add 1) or `... del ...` (add 0):
 * in namespace ns, packets to ip are dropped. Returns 0, or -1 with the
 * reason in err. */
int io_fleet_gray_blackhole(const char *ns, const char *ip, int add, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
