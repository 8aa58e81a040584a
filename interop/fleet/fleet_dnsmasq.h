/* Debian's dnsmasq (package dnsmasq-base) as the fleet's DNS server: one
 * process per fleet_dns, answering for one name from a hosts file of its
 * own, which io_fleet_dnsmasq_set rewrites and makes dnsmasq reread
 * (SIGHUP). It runs as
 *   dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts
 *           --addn-hosts=HOSTS --local=/NAME/ --port=P --listen-address=A
 *           --bind-interfaces --local-ttl=0 --no-negcache --log-queries
 *           --log-facility=LOG --pid-file= --user= --group=
 * (--local makes AAAA an empty NOERROR answer, which gRPC's c-ares
 * resolver needs; the empty --user and --group keep it from changing user
 * or group: it can then reread the hosts file in the runner's private work
 * directory, and it starts inside a user namespace such as Bazel's test
 * sandbox, where changing group fails). Queries are counted from its log.
 * Every process it starts is an interop/common/proc.h child, so that
 * io_proc_kill_all stops it with the rest of the fleet. */
#ifndef APERTURE_INTEROP_FLEET_DNSMASQ_H
#define APERTURE_INTEROP_FLEET_DNSMASQ_H

#include <stddef.h>

#include "interop/common/proc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fleet_dnsmasq fleet_dnsmasq;

/* Starts a process: io_proc_start, or one that runs it elsewhere (in a
 * network namespace). */
typedef proc *(*fleet_dnsmasq_launch)(char *const argv[], const char *log);

/* Writes the dnsmasq binary's path (from PATH, /usr/sbin, /usr/bin) to
 * out. Returns 0, or -1 when there is none. */
int io_fleet_dnsmasq_find(char *out, size_t len);

/* Where the hosts and log files go (the runner's --out-dir); NULL or
 * never called: $TMPDIR or /tmp. The directory must exist. */
void io_fleet_dnsmasq_set_dir(const char *dir);

/* Starts dnsmasq answering for `name` (at most 200 chars) with no address
 * yet, listening on `listen` (a dotted quad) at `port` (0: a free port,
 * found on `listen` in the runner's namespace, tried up to 5 times),
 * through `launch` (NULL: io_proc_start). Waits up to 5 s for it to have
 * read its hosts file. Writes "LISTEN:PORT" to server[len]. NULL, with a
 * message on stderr naming the cause (no dnsmasq binary, it exited, it did
 * not start in time), on failure. */
fleet_dnsmasq *io_fleet_dnsmasq_start(const char *name, const char *listen, int port,
                                      fleet_dnsmasq_launch launch, char *server, size_t len);

/* Replaces the answer with n dotted quads: rewrites the hosts file
 * (atomically) and sends SIGHUP, then waits up to 2 s for dnsmasq to log
 * that it reread it. Returns 0, or -1 on bad arguments, a write error or
 * no reread in time. */
int io_fleet_dnsmasq_set(fleet_dnsmasq *d, const char *const *hosts, size_t n);

/* A queries for the name logged so far ("query[A] NAME from"); 0 for NULL. */
long io_fleet_dnsmasq_queries(const fleet_dnsmasq *d);

/* Stops the process and frees d (its files stay, beside the fleet's
 * logs). NULL is ignored. */
void io_fleet_dnsmasq_stop(fleet_dnsmasq *d);

#ifdef __cplusplus
}
#endif

#endif
