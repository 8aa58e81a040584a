/* Where the fleet's processes run and which address each has.
 *
 * Every scenario takes its servers' and clients' addresses from here and
 * starts their processes through here (fleet_server.h and fleet_client.h
 * do), and gets its DNS server from the same network (fleet_dns.h), so
 * that a different network changes all of them at once. A runner has one
 * network, chosen before its first process starts. Today that is the
 * loopback network: every process in the runner's own network namespace,
 * servers on 127.0.0.1 or on 127.0.0.(10 + slot), the runner's DNS
 * responder. A network that gives each process a namespace of its own is
 * one more fleet_net_ops: its addresses name the namespaces, start runs a
 * process in the one its address names, dns is a server the namespaces
 * reach, close tears them down; no scenario changes. */
#ifndef APERTURE_INTEROP_FLEET_NET_H
#define APERTURE_INTEROP_FLEET_NET_H

#include <stddef.h>

#include "interop/common/proc.h"
#include "interop/fleet/fleet_dns.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_NET_HOST_LEN 32 /* room for any address written below */

/* A network. Every field but close is required. */
typedef struct fleet_net_ops {
  const char *name; /* "loopback" */
  /* Writes the address of server slot `slot` (s<slot>, a spare or a
   * replacement: the slot, not the process, owns the address, so a server
   * restarted in its slot keeps it). own_address 1: an address no other
   * slot has, so that servers can share one port and a DNS answer can
   * tell them apart; 0: any address the clients reach (the servers then
   * listen on ports of their own). Returns 0, or -1 on a bad slot. */
  int (*server_host)(int slot, int own_address, char *out, size_t len);
  /* Writes client `index`'s own address: its identity in a peer list,
   * and where it runs. Returns 0, or -1 on a bad index. */
  int (*client_host)(int index, char *out, size_t len);
  /* Starts argv as the process at address `host` (one of the above; NULL:
   * a client whose address no one names, placed by the network), stderr
   * to log (NULL: inherited), as io_proc_start. */
  proc *(*start)(const char *host, char *const argv[], const char *log);
  /* The DNS server its clients ask. */
  const fleet_dns_ops *dns;
  /* Optional: undoes what the network set up; io_fleet_net_close. */
  void (*close)(void);
} fleet_net_ops;

/* Every process in the runner's namespace: server_host is 127.0.0.1, or
 * 127.0.0.(10 + slot) with own_address (slot < 245); client_host is
 * 127.0.1.(index + 1) (index < 254), a label only (the client connects
 * from 127.0.0.1); start is io_proc_start wherever the address; DNS is
 * the runner's responder. */
extern const fleet_net_ops io_fleet_net_loopback;

/* Makes `ops` the runner's network (NULL: loopback, the default). Returns
 * 0, or -1 when a required operation is missing (network unchanged). */
int io_fleet_net_use(const fleet_net_ops *ops);

/* The runner's network's name. */
const char *io_fleet_net_name(void);

/* The runner's network's operations, as described in fleet_net_ops;
 * out must hold FLEET_NET_HOST_LEN bytes. */
int io_fleet_net_server_host(int slot, int own_address, char *out, size_t len);
int io_fleet_net_client_host(int index, char *out, size_t len);
proc *io_fleet_net_start(const char *host, char *const argv[], const char *log);
const fleet_dns_ops *io_fleet_net_dns(void);

/* Undoes what the network set up (nothing on loopback); for the runner's
 * exit paths, after its processes are stopped. */
void io_fleet_net_close(void);

#ifdef __cplusplus
}
#endif

#endif
